package vcs

import (
	"bytes"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/format/packfile"
)

func FuzzApplyDelta(f *testing.F) {
	base := []byte("100644 a.md\x00" + string(bytes.Repeat([]byte{7}, 20)) + "100644 b.md\x00" + string(bytes.Repeat([]byte{9}, 20)))
	w := newDeltaWriter()
	w.copy(0, 32)
	w.insert([]byte("100644 c.md\x00"))
	w.copy(0, 20)
	w.copy(32, len(base)-32)
	f.Add(base, w.finish(len(base), 32+12+20+len(base)-32))
	big := bytes.Repeat([]byte("0123456789abcdef"), 9000) // past a copy's 64 KiB
	w = newDeltaWriter()
	w.copy(0, len(big))
	w.insert(bytes.Repeat([]byte{'x'}, 300)) // past an insert's 127 bytes
	f.Add(big, w.finish(len(big), len(big)+300))
	for _, delta := range []string{"", "\x01", "\x03\x00", "\x03\x03\x80", "\x03\x03\x91\x00\x03", "\x03\x02\x00",
		"\x03\x01\x05abcde", "\x03\x01\x01ab", "\x03\x02\x02a", "\x03\x03\x91\x01\x03", "\x03\x03\x01a", "\x03\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", "\x03\x80"} {
		f.Add([]byte("abc"), []byte(delta))
	}
	f.Fuzz(func(t *testing.T, base, delta []byte) {
		got, err := applyDelta(base, delta)
		want, wantErr := packfile.PatchDelta(base, delta)
		if (err != nil) != (wantErr != nil) || !bytes.Equal(got, want) {
			t.Fatalf("applyDelta(%q, %q) = %q, %v; go-git's %q, %v", base, delta, got, err, want, wantErr)
		}
	})
}
