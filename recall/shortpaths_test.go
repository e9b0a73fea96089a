package recall

import (
	"slices"
	"testing"
)

// TestShortPaths: each file by its base name, or by as much of its path as tells it
// from the others.
func TestShortPaths(t *testing.T) {
	for _, c := range []struct{ in, want []string }{
		{[]string{"/home/ana/shop/src/cart.ts", "/home/ana/shop/README.md"}, []string{"cart.ts", "README.md"}},
		{[]string{"/home/ana/shop/src/cart.ts", "/home/ana/shop/test/cart.ts", "/home/ana/shop/lib/x.go"}, []string{"src/cart.ts", "test/cart.ts", "x.go"}},
		{[]string{"/a/src/cart.ts", "/b/src/cart.ts"}, []string{"/a/src/cart.ts", "/b/src/cart.ts"}},
		{[]string{"cart.ts", "src/cart.ts", "/cart.ts"}, []string{"cart.ts", "src/cart.ts", "/cart.ts"}},
		{[]string{"/x/y/z.go"}, []string{"z.go"}},
	} {
		if got := shortPaths(c.in); !slices.Equal(got, c.want) {
			t.Errorf("shortPaths(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
