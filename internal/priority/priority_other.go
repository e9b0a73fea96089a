//go:build !unix

package priority

// yield does nothing where there is no nice value (Windows).
func yield() {}
