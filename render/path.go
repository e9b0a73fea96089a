package render

import (
	"strings"
	"unicode/utf8"

	"github.com/agmem/agmem/memory"
)

// maxNameLen bounds one name component made from input: well under every file system's
// 255 bytes, so that a file name built from two of them still fits.
const maxNameLen = 64

// SafeName makes s safe as one file-name component on Linux, macOS and Windows: ASCII
// letters, digits, '-', '_' and '.' are kept and every other rune becomes one '_'. The
// result is 1 to 64 bytes long, never starts or ends with '.' (so it is never "." or "..",
// never hidden, never ".git", and Windows has no trailing dot to strip), and is never a
// Windows device name such as CON or con.txt.
func SafeName(s string) string {
	b := make([]byte, 0, min(len(s), maxNameLen))
	for _, r := range s {
		if len(b) == maxNameLen {
			break
		}
		if r < utf8.RuneSelf && isNameByte(byte(r)) {
			b = append(b, byte(r))
		} else {
			b = append(b, '_')
		}
	}
	name := string(b)
	// A leading '.' is prefixed rather than allowed: git refuses ".git" in a tree and
	// fsck rejects a directory named ".gitmodules"; session ids become directory names.
	if strings.HasPrefix(name, ".") || isWindowsDevice(name) {
		name = "_" + name
	}
	if len(name) > maxNameLen {
		name = name[:maxNameLen]
	}
	if strings.HasSuffix(name, ".") {
		name = name[:len(name)-1] + "_"
	}
	if name == "" {
		return "_"
	}
	return name
}

func isNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '_' || c == '.'
}

// isWindowsDevice reports whether Windows would open a device instead of a file: the
// part before the first dot names one, whatever extension follows. COM0 and LPT0 are
// included because current Windows documentation lists them.
func isWindowsDevice(name string) bool {
	base, _, _ := strings.Cut(name, ".")
	switch strings.ToUpper(base) {
	case "CON", "PRN", "AUX", "NUL":
		return true
	}
	if len(base) != 4 || base[3] < '0' || base[3] > '9' {
		return false
	}
	prefix := strings.ToUpper(base[:3])
	return prefix == "COM" || prefix == "LPT"
}

// idPart names an observation in a file name. Ids are lowercased so that two spellings
// of one id cannot name two files on a case-insensitive file system. An id that is
// neither ULID nor UUID (the journal admits none) is used whole, made safe.
func idPart(id string, long bool) string {
	if !long {
		if _, err := memory.NormalizeID(id); err == nil {
			return strings.ToLower(memory.ShortID(id))
		}
	}
	return SafeName(strings.ToLower(id))
}
