package vcs

import (
	"encoding/binary"
	"errors"
)

// git's split index marks entries of its shared index by position in EWAH-compressed
// bitmaps (ewah/ewah_io.c): the number of bits, the number of 64-bit words, the words,
// and where the last run-length word is. A run-length word says how many words of all
// zeros (or all ones, by its lowest bit) come first (its next 32 bits), then how many
// literal words follow it (its top 31 bits); a literal word's lowest bit is its first.

const (
	ewahRunBits     = 32
	ewahMaxRun      = 1<<ewahRunBits - 1
	ewahMaxLiterals = 1<<31 - 1
)

var errEWAH = errors.New("read index: a bitmap of its link extension is damaged")

// readEWAH returns the positions a bitmap of at most limit bits sets, in order, and
// what follows it.
func readEWAH(b []byte, limit int) (positions []int, rest []byte, err error) {
	if len(b) < 12 {
		return nil, nil, errEWAH
	}
	bits, words := int(binary.BigEndian.Uint32(b)), int(binary.BigEndian.Uint32(b[4:]))
	if words > (len(b)-12)/8 || bits > limit {
		return nil, nil, errEWAH
	}
	buf, rest := b[8:8+8*words], b[8+8*words+4:]
	word := func(i int) uint64 { return binary.BigEndian.Uint64(buf[8*i:]) }
	at := 0 // the bit the next word starts at
	for i := 0; i < words; {
		rlw := word(i)
		run, literals := int(rlw>>1&ewahMaxRun), int(rlw>>(1+ewahRunBits))
		if rlw&1 != 0 {
			for p := at; p < at+64*run && p < bits; p++ {
				positions = append(positions, p)
			}
		}
		at += 64 * run
		if i+1+literals > words {
			return nil, nil, errEWAH
		}
		for k := 1; k <= literals; k++ {
			for w, bit := word(i+k), 0; w != 0; w, bit = w>>1, bit+1 {
				if w&1 != 0 && at+bit < bits {
					positions = append(positions, at+bit)
				}
			}
			at += 64
		}
		i += 1 + literals
	}
	return positions, rest, nil
}

// appendEWAH appends a bitmap setting positions (ascending, each once).
func appendEWAH(out []byte, positions []int) []byte {
	bits := 0
	if len(positions) > 0 {
		bits = positions[len(positions)-1] + 1
	}
	literal := make([]uint64, (bits+63)/64)
	for _, p := range positions {
		literal[p/64] |= 1 << (p % 64)
	}
	var words []uint64
	last := 0 // the last run-length word
	for i := 0; i < len(literal) || len(words) == 0; {
		run := 0
		for i < len(literal) && literal[i] == 0 && run < ewahMaxRun {
			run, i = run+1, i+1
		}
		start := i
		for i < len(literal) && literal[i] != 0 && i-start < ewahMaxLiterals {
			i++
		}
		last = len(words)
		words = append(words, uint64(run)<<1|uint64(i-start)<<(1+ewahRunBits))
		words = append(words, literal[start:i]...)
	}
	out = binary.BigEndian.AppendUint32(out, uint32(bits))
	out = binary.BigEndian.AppendUint32(out, uint32(len(words)))
	for _, w := range words {
		out = binary.BigEndian.AppendUint64(out, w)
	}
	return binary.BigEndian.AppendUint32(out, uint32(last))
}
