package vcs

import "encoding/binary"

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
