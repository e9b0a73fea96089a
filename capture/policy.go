package capture

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/agmem/agmem/classify"
	"github.com/agmem/agmem/internal/jsonscan"
	"github.com/agmem/agmem/memory"
	"github.com/agmem/agmem/redact"
)

// Policy is what capture applies to every call before it reaches the journal: which
// calls are kept, which secrets are redacted, which files' contents are withheld, and
// how large a value may be.
type Policy struct {
	Rules    classify.Rules
	Redactor *redact.Redactor // nil: nothing is redacted
	// Withhold are path globs ("**/.env*") whose files' contents are never kept: a call
	// on such a path is recorded with its contents replaced by a mark.
	Withhold []string
	// MaxValue bounds, in bytes, each argument's value, the result and the error; a
	// longer one is cut and its size noted in the observation. 0: no bound.
	MaxValue int
	// Agent is the agent whose hook is recording (a key of Agents), when the hook says:
	// its payloads are read as that agent's. "": each payload's members tell.
	Agent string
	// reread says the values were captured before (Redacted): a value cut then keeps its
	// cut.
	reread bool
}

// DefaultWithhold are the paths whose contents are secrets more often than not.
func DefaultWithhold() []string {
	return []string{"**/.env*", "**/*.pem", "**/id_rsa*", "**/id_ed25519*", "**/.ssh/**",
		"**/.aws/credentials", "**/.netrc"}
}

// DefaultMaxValue is the default bound on a value: 1 MiB.
const DefaultMaxValue = 1 << 20

// withheldBy returns the first glob that matches file, or "". The file is made ready
// for matching once, not once per glob.
func (p *Policy) withheldBy(file string) string {
	f := pathForMatch(file)
	for _, g := range p.Withhold {
		if f.match(g) {
			return g
		}
	}
	return ""
}

// matchedPath is a file path as globs are matched against it.
type matchedPath struct {
	base     string
	segments []string
}

// pathForMatch makes file ready for matching: backslashes count as "/", and case is
// ignored, so that Windows paths match too.
func pathForMatch(file string) matchedPath {
	file = strings.ToLower(strings.ReplaceAll(file, `\`, "/"))
	return matchedPath{path.Base(file), strings.Split(strings.TrimPrefix(file, "/"), "/")}
}

// match matches the path against a glob in the manner of .gitignore: "*" and "?" stay
// within a path segment, "**" spans any number of segments, and a glob without a "/"
// matches the file's base name.
func (f matchedPath) match(glob string) bool {
	glob = strings.ToLower(glob)
	if !strings.Contains(glob, "/") {
		return matchSegment(glob, f.base)
	}
	return matchSegments(glob, f.segments)
}

// matchSegments matches glob's segments, "/" between them, against file's. The glob is
// cut as it goes, not split: every call's path meets every glob.
func matchSegments(glob string, file []string) bool {
	for {
		segment, rest, more := strings.Cut(glob, "/")
		if segment == "**" {
			if !more {
				return true
			}
			if !anyDoubleStar(rest) {
				// The rest matches as many segments as it has: the file's last ones.
				i := len(file) - strings.Count(rest, "/") - 1
				return i >= 0 && matchSegments(rest, file[i:])
			}
			for i := 0; i <= len(file); i++ {
				if matchSegments(rest, file[i:]) {
					return true
				}
			}
			return false
		}
		if len(file) == 0 || !matchSegment(segment, file[0]) {
			return false
		}
		file = file[1:]
		if !more {
			return len(file) == 0
		}
		glob = rest
	}
}

// anyDoubleStar says whether a segment of glob is "**".
func anyDoubleStar(glob string) bool {
	return glob == "**" || strings.HasPrefix(glob, "**/") || strings.HasSuffix(glob, "/**") ||
		strings.Contains(glob, "/**/")
}

// matchSegment matches one segment. Most segments of globs are plain names (".ssh",
// ".aws"), which path.Match would compare a byte at a time.
func matchSegment(glob, name string) bool {
	if !strings.ContainsAny(glob, `*?[\`) {
		return glob == name
	}
	ok, err := path.Match(glob, name)
	return ok && err == nil
}

// FilePath returns the file a call's arguments name, or "": the first of pathKeys whose
// member is a string not empty (the last member of that name, as json.Unmarshal into a
// map keeps it). The scanner refuses only what encoding/json refuses, so that no file
// is missed, and withheld contents recorded, for a refusal (FuzzWithhold holds it to
// that).
func FilePath(args json.RawMessage) string {
	var files [len(pathKeys)]string
	r := jsonscan.New(args)
	if r.Peek() != '{' {
		return ""
	}
	for more := r.Open('}'); more; {
		key, err := r.Unquote()
		if err != nil || r.Next(':') != nil {
			return ""
		}
		i, file := slices.Index(pathKeys[:], key), ""
		if i >= 0 && r.Peek() == '"' {
			file, err = r.Unquote()
		} else {
			_, err = r.Skip(1)
		}
		if err != nil {
			return ""
		}
		if i >= 0 {
			files[i] = file
		}
		if more, err = r.More('}'); err != nil {
			return ""
		}
	}
	if !r.End() {
		return ""
	}
	for _, f := range files {
		if f != "" {
			return f
		}
	}
	return ""
}

func withheldMark(glob string) string { return "[WITHHELD: path matches " + glob + "]" }

// withhold keeps, of a call's arguments, the path (when it is a string) and the
// numbers, booleans and nulls (offset, limit, replace_all); any other value may hold
// the file's contents and becomes a mark.
func withhold(args json.RawMessage, glob string) json.RawMessage {
	var members []struct {
		key   string
		value json.RawMessage
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return json.RawMessage(`{}`)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			break
		}
		members = append(members, struct {
			key   string
			value json.RawMessage
		}{tok.(string), v})
	}
	mark, _ := json.Marshal(withheldMark(glob))
	var w bytes.Buffer
	w.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			w.WriteByte(',')
		}
		writeString(&w, m.key)
		w.WriteByte(':')
		switch c := m.value[0]; {
		case slices.Contains(pathKeys[:], m.key) && c == '"',
			c == 't' || c == 'f' || c == 'n' || c == '-' || '0' <= c && c <= '9':
			w.Write(m.value)
		default:
			w.Write(mark)
		}
	}
	w.WriteByte('}')
	return w.Bytes()
}

// OptOutFile is the file whose presence in a project's directory, or any directory
// above it, keeps every call made there out of agmem.
const OptOutFile = ".agmem-off"

// OptedOut returns the directory at or above dir that holds OptOutFile, or "" (as for
// dir "").
func OptedOut(dir string) string {
	if dir == "" {
		return ""
	}
	for {
		if _, err := os.Lstat(filepath.Join(dir, OptOutFile)); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// SafeSession is a session id as the journal keeps it: each secret in it redacted, as
// in everything else an entry holds, since the id is written into commit messages,
// trailers and paths, and every reader shows it; and then, so that two ids that differ
// in their secrets alone stay two sessions, the first 4 bytes of the given id's
// SHA-256 in hex after a "-", the redacted id cut to leave it within
// memory.MaxSessionIDLen. An id without a secret is kept as it is.
func (p Policy) SafeSession(id string) string {
	if p.Redactor == nil || id == "" {
		return id
	}
	safe, n := p.Redactor.Text(id)
	if n == 0 {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	tail := "-" + hex.EncodeToString(sum[:4])
	// A mark may be longer than the secret: cut to leave the id within its bound.
	for len(safe)+len(tail) > memory.MaxSessionIDLen {
		_, size := utf8.DecodeLastRuneInString(safe)
		safe = safe[:len(safe)-size]
	}
	return safe + tail
}
