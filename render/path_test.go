package render

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agmem/agmem/memory"
)

func TestSafeName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Bash", "Bash"},
		{"mcp__github__search_issues", "mcp__github__search_issues"},
		{"read_file.v2-beta", "read_file.v2-beta"},
		{"a/b\\c", "a_b_c"},
		{"../../x_search", "_.._.._x_search"},
		{"..", "_._"},
		{".", "__"},
		{".git", "_.git"},
		{".gitmodules", "_.gitmodules"},
		{"", "_"},
		{"x.", "x_"},
		{"x..", "x._"},
		{"CON", "_CON"},
		{"con", "_con"},
		{"con.txt", "_con.txt"},
		{"Con.tar.gz", "_Con.tar.gz"},
		{"nul", "_nul"},
		{"COM1", "_COM1"},
		{"lpt9.log", "_lpt9.log"},
		{"COM10", "COM10"},
		{"CONSOLE", "CONSOLE"},
		{"con_", "con_"},
		{"con:", "con_"},
		{"aux ", "aux_"},
		{"héllo wörld", "h_llo_w_rld"},
		{"🦫", "_"},
		{"\xff\xfe", "__"},
		{"tab\there\n", "tab_here_"},
		{strings.Repeat("a", 200), strings.Repeat("a", 64)},
		{strings.Repeat("é", 100), strings.Repeat("_", 64)},
		{strings.Repeat("a", 63) + ".b", strings.Repeat("a", 63) + "_"},
		{"con." + strings.Repeat("a", 70), "_con." + strings.Repeat("a", 59)},
		{"." + strings.Repeat("a", 70), "_." + strings.Repeat("a", 62)},
	}
	for _, tc := range tests {
		if got := SafeName(tc.in); got != tc.want {
			t.Errorf("SafeName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// checkSafeName fails unless name is a component every file system and git accept.
func checkSafeName(t testing.TB, in, name string) {
	t.Helper()
	if name == "" || len(name) > maxNameLen {
		t.Fatalf("SafeName(%q) = %q: length %d", in, name, len(name))
	}
	checkComponent(t, in, name)
	if SafeName(name) != name {
		t.Fatalf("SafeName(%q) = %q is not a fixed point: %q", in, name, SafeName(name))
	}
}

// checkComponent fails unless c is a path component every file system and git accept.
func checkComponent(t testing.TB, in, c string) {
	t.Helper()
	for i := 0; i < len(c); i++ {
		if !isNameByte(c[i]) {
			t.Fatalf("%q: component %q holds %q", in, c, c[i])
		}
	}
	if c == "" || c[0] == '.' || strings.HasSuffix(c, ".") || isWindowsDevice(c) {
		t.Fatalf("%q: component %q is not safe", in, c)
	}
}

func FuzzSafeName(f *testing.F) {
	for _, s := range nasty {
		f.Add(s)
	}
	for _, s := range []string{"CON", "con.txt", "..", ".", "lpt1.", ".git", "a/b\\c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		name := SafeName(s)
		checkSafeName(t, s, name)
		// Nothing is dropped or merged: a name too short to be cut keeps one byte per
		// rune, plus the '_' that may guard its start.
		n := utf8.RuneCountInString(s)
		if n < maxNameLen && len(name) != n && len(name) != n+1 {
			t.Fatalf("SafeName(%q) = %q: %d runes became %d bytes", s, name, n, len(name))
		}
	})
}

var hostileTools = []string{
	"../../x_search", "a/b\\c", "CON", "con.txt", "..", ".", "", ".git",
	strings.Repeat("x", 200), strings.Repeat("界", 200), "résumé/../../etc/passwd",
	"C:\\Windows\\system32", "name\x00with nul", "emoji 🦫", "trailing.", "\xff",
}

func TestPathSafety(t *testing.T) {
	ids := []string{
		memory.NewID(when), "0197f3a2-5c1d-7e4b-8a9f-0123456789AB", "01jpb2n3v4w5x6y7z8a9b0c1d2",
		"../../etc", "", strings.Repeat("Z", 300), // ids the journal never admits
	}
	types := []memory.Type{memory.Episodic, memory.Semantic, memory.Procedural, "", "../x"}
	for _, tool := range hostileTools {
		for _, id := range ids {
			for _, typ := range types {
				for _, f := range Forms {
					o := memory.Observation{ID: id, ToolName: tool, MemoryType: typ, Timestamp: when}
					checkPath(t, tool, f.Path(&o))
				}
			}
		}
		for _, l := range Layouts {
			checkPath(t, tool, l.SessionRecordPath(tool, tool))
		}
	}
}

// checkPath fails unless p is a relative path under current/ or sessions/ that every
// file system and git accept, and not longer than the longest agmem makes:
// "current/procedural/YYYY-MM-DD/" then "HH-MM-SS-" + 64 + "-" + 64 + ".md".
func checkPath(t testing.TB, in, p string) {
	t.Helper()
	const maxFile, maxPath = 9 + maxNameLen + 1 + maxNameLen + 3, 30 + 9 + maxNameLen + 1 + maxNameLen + 3
	if !strings.HasPrefix(p, "current/") && !strings.HasPrefix(p, "sessions/") {
		t.Fatalf("%q: path %q is outside current/ and sessions/", in, p)
	}
	if len(p) > maxPath {
		t.Fatalf("%q: path %q is %d bytes, more than %d", in, p, len(p), maxPath)
	}
	for _, c := range strings.Split(p, "/") {
		checkComponent(t, in, c)
		if len(c) > maxFile {
			t.Fatalf("%q: component %q is %d bytes", in, c, len(c))
		}
	}
}

func TestPath(t *testing.T) {
	tests := []struct {
		name   string
		layout Layout
		obs    memory.Observation
		long   bool
		want   string
	}{
		{"episodic", Layout2, goldenObservations[0].obs, false, "current/episodic/2026-03-14/09-26-53-Bash-y7z8a9b0c1d2.md"},
		{"episodic long", Layout2, goldenObservations[0].obs, true, "current/episodic/2026-03-14/09-26-53-Bash-01jpb2n3v4w5x6y7z8a9b0c1d2.md"},
		{"semantic", Layout2, goldenObservations[1].obs, false, "current/semantic/2026-03-14/09-26-55-Read-y7z8a9b0c1d3.md"},
		{"procedural", Layout2, goldenObservations[2].obs, false, "current/procedural/2026-03-14/09-26-56-TodoWrite-y7z8a9b0c1d4.md"},
		{"episodic, layout 1", Layout1, goldenObservations[0].obs, false, "current/episodic/2026-03-14/09-26-53-Bash-y7z8a9b0c1d2.md"},
		{"semantic, layout 1", Layout1, goldenObservations[1].obs, false, "current/semantic/Read-y7z8a9b0c1d3.md"},
		{"semantic long, layout 1", Layout1, goldenObservations[1].obs, true, "current/semantic/Read-01jpb2n3v4w5x6y7z8a9b0c1d3.md"},
		{"procedural, layout 1", Layout1, goldenObservations[2].obs, false, "current/procedural/TodoWrite-y7z8a9b0c1d4.md"},
		{"uuid", Layout2, goldenObservations[3].obs, false, "current/episodic/2026-03-14/09-26-57-Bash-0197f3a25c1d.md"},
		{"uuid long", Layout2, goldenObservations[3].obs, true, "current/episodic/2026-03-14/09-26-57-Bash-0197f3a2-5c1d-7e4b-8a9f-0123456789ab.md"},
		{"unknown type is episodic", Layout2, memory.Observation{ID: "0197F3A2-5C1D-7E4B-8A9F-0123456789AB", ToolName: "x", MemoryType: "../bogus",
			Timestamp: time.Date(2025, 12, 31, 23, 59, 59, 0, time.FixedZone("", -3600))}, false, "current/episodic/2026-01-01/00-59-59-x-0197f3a25c1d.md"},
	}
	for _, tc := range tests {
		if got := tc.layout.Path(&tc.obs, tc.long); got != tc.want {
			t.Errorf("%s: Path = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestPathsUniqueInOneSecond(t *testing.T) {
	for _, typ := range []memory.Type{memory.Episodic, memory.Semantic, memory.Procedural} {
		seen := map[string]string{}
		for range 1000 {
			o := memory.Observation{ID: memory.NewID(when), ToolName: "Bash", MemoryType: typ, Timestamp: when}
			p := strings.ToLower(CurrentLayout.Path(&o, false)) // case-insensitive file systems too
			if other, ok := seen[p]; ok {
				t.Fatalf("%s and %s share %s", other, o.ID, p)
			}
			seen[p] = o.ID
		}
	}
}

func TestSessionRecordPath(t *testing.T) {
	for _, tc := range []struct {
		layout               Layout
		session, batch, want string
	}{
		{Layout1, "7f9c2ba4-e88f-4c6b-9a1e-3d2f1c0b5a68", "01JPB2N3V4W5X6Y7Z8A9B0C1D2", "sessions/7f9c2ba4-e88f-4c6b-9a1e-3d2f1c0b5a68/01JPB2N3V4W5X6Y7Z8A9B0C1D2.jsonl"},
		{Layout1, "../..", ".git", "sessions/_.._._/_.git.jsonl"},
		// The buckets: printf %s 7f9c…5a68 | sha256sum begins e3, and of _.._._ 0f.
		{Layout2, "7f9c2ba4-e88f-4c6b-9a1e-3d2f1c0b5a68", "01JPB2N3V4W5X6Y7Z8A9B0C1D2", "sessions/e3/7f9c2ba4-e88f-4c6b-9a1e-3d2f1c0b5a68/01JPB2N3V4W5X6Y7Z8A9B0C1D2.jsonl"},
		{Layout2, "../..", ".git", "sessions/0f/_.._._/_.git.jsonl"},
	} {
		if got := tc.layout.SessionRecordPath(tc.session, tc.batch); got != tc.want {
			t.Errorf("layout %d: SessionRecordPath(%q, %q) = %q, want %q", tc.layout, tc.session, tc.batch, got, tc.want)
		}
	}
}
