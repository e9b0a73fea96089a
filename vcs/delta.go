package vcs

import (
	"encoding/binary"
	"errors"
)

// deltaWriter writes a delta in git's format: the sizes of the base and of the result,
// then instructions that copy a range of the base or insert new bytes.
type deltaWriter struct {
	ops     []byte
	pending []byte // bytes to insert, written out before the next copy
}

// Git's delta instructions carry at most 127 bytes to insert, and a copy of up to
// 64 KiB is what git itself writes.
const (
	maxInsert = 0x7f
	maxCopy   = 0x10000
)

func newDeltaWriter() *deltaWriter { return &deltaWriter{} }

// copy appends an instruction to copy n bytes of the base from off.
func (w *deltaWriter) copy(off, n int) {
	w.flushInserts()
	for ; n > 0; n -= maxCopy {
		size := min(n, maxCopy)
		op := byte(0x80)
		var args []byte
		for i := range 4 { // offset bytes, low first; a zero byte is left out
			if b := byte(off >> (8 * i)); b != 0 {
				op |= 1 << i
				args = append(args, b)
			}
		}
		for i := range 3 { // size bytes likewise; no size at all means 64 KiB
			if b := byte(size >> (8 * i)); b != 0 && size != maxCopy {
				op |= 0x10 << i
				args = append(args, b)
			}
		}
		w.ops = append(append(w.ops, op), args...)
		off += size
	}
}

// insert appends data to the result.
func (w *deltaWriter) insert(data []byte) { w.pending = append(w.pending, data...) }

func (w *deltaWriter) flushInserts() {
	for p := w.pending; len(p) > 0; {
		n := min(len(p), maxInsert)
		w.ops = append(append(w.ops, byte(n)), p[:n]...)
		p = p[n:]
	}
	w.pending = w.pending[:0]
}

// finish returns the delta that makes a result of resultSize bytes from a base of baseSize.
func (w *deltaWriter) finish(baseSize, resultSize int) []byte {
	w.flushInserts()
	out := binary.AppendUvarint(nil, uint64(baseSize))
	out = binary.AppendUvarint(out, uint64(resultSize))
	return append(out, w.ops...)
}

// errBadDelta is a delta that does not make a result of the size it says from its base.
var errBadDelta = errors.New("invalid delta")

// applyDelta makes the result of delta, in git's format, from base: what go-git's
// packfile.PatchDelta makes, and refuses. The result's buffer is made to the size the
// delta gives, trusted up to maxPresized as ReadBlob trusts a header's; PatchDelta's,
// grown by doubling past 64 KiB, was half of what a rebuild of the search index
// allocated.
func applyDelta(base, delta []byte) ([]byte, error) {
	if len(base) == 0 || len(delta) < 2 {
		return nil, errBadDelta
	}
	baseSize, delta, err := deltaSize(delta)
	if err != nil || baseSize != uint64(len(base)) {
		return nil, errBadDelta
	}
	size, delta, err := deltaSize(delta)
	if err != nil {
		return nil, errBadDelta
	}
	out := make([]byte, 0, min(size, maxPresized))
	for left := size; left > 0; {
		if len(delta) == 0 {
			return nil, errBadDelta
		}
		op := delta[0]
		delta = delta[1:]
		switch {
		case op&0x80 != 0: // a copy of the base: its offset's and size's bytes, low first, as op says
			var off, n uint64
			for i := range 7 {
				if op&(1<<i) == 0 {
					continue
				}
				if len(delta) == 0 {
					return nil, errBadDelta
				}
				if i < 4 {
					off |= uint64(delta[0]) << (8 * i)
				} else {
					n |= uint64(delta[0]) << (8 * (i - 4))
				}
				delta = delta[1:]
			}
			if n == 0 {
				n = maxCopy
			}
			if n > left || off+n > uint64(len(base)) {
				return nil, errBadDelta
			}
			out = append(out, base[off:off+n]...)
			left -= n
		case op != 0: // op new bytes
			n := uint64(op)
			if n > left || n > uint64(len(delta)) {
				return nil, errBadDelta
			}
			out = append(out, delta[:n]...)
			delta, left = delta[n:], left-n
		default:
			return nil, errBadDelta
		}
	}
	if len(delta) != 0 {
		return nil, errBadDelta
	}
	return out, nil
}

// deltaSize reads a size at the start of a delta, seven bits a byte, low first. A size
// that its end cuts short is read as it stands, as go-git reads it.
func deltaSize(delta []byte) (uint64, []byte, error) {
	var v uint64
	for i, b := range delta {
		if i == 9 { // a tenth byte, which go-git refuses
			return 0, nil, errBadDelta
		}
		v |= uint64(b&0x7f) << (7 * i)
		if b&0x80 == 0 {
			return v, delta[i+1:], nil
		}
	}
	return v, nil, nil
}
