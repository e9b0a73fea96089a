//go:build !unix

package background

// yield does nothing where there is no nice value (Windows).
func yield() {}
