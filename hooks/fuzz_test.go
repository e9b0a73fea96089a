package hooks

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// FuzzHooksEdit installs and uninstalls agmem's hooks in arbitrary settings files: each
// is refused as unreadable or comes out readable, with every event covered, unchanged by
// a second install, and, after uninstalling, with no agmem hook left and every setting
// other than "hooks" (and Cursor's "version") as it was, but for a switch kept in the
// file (Gemini CLI's hooksConfig.enabled), which is on if it was unset. Every comment
// outside agmem's entries is still there after installing, and after uninstalling.
func FuzzHooksEdit(f *testing.F) {
	inputs, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, path := range inputs {
		src, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		for i := range Agents {
			f.Add(src, uint8(i))
		}
	}
	for _, s := range []string{"", "{}", `{"hooks":{}}`, "{\n\t\"hooks\": {\"Stop\": []}\n}", `{"hooks":{"Stop":[1,"x",{"hooks":7}]}}`, "{\"a\":1 // x\n}",
		`{"hooks":{"Stop":[{"hooks":[{"command":"agmem record"}]}],"Stop":[{"command":"agmem record"}]},"hooks":{}}`,
		"{\"hooks\": {\"AfterTool\": [ /* none */ ], \"x\": [{\"hooks\": [{\"command\": \"x\"}, {\"command\": \"agmem record\"}]}]}}",
		"// only a comment", "/* a */ // b\r\n",
		"{\"hooks\": {\"AfterTool\": [{\"command\": \"x\"}, // x\n{\"hooks\": [{\"command\": \"agmem record\"}]}]}}",
		"{\"hooks\": { // ours\n\"AfterTool\" /* all */ : [{\"hooks\": [{\"command\": \"agmem record\"}]} /* it */ , {\"hooks\": [{\"command\": \"agmem record\"}]}]}}",
		"{\"hooks\": {\"BeforeAgent\": [\n  {\"hooks\": [{\"command\": \"agmem record\"}]}, // by hand\n  /* logger */ {\"hooks\": [{\"command\": \"log\"}]}\n]}}"} {
		f.Add([]byte(s), uint8(2))
	}
	f.Fuzz(func(t *testing.T, src []byte, which uint8) {
		a := Agents[int(which)%len(Agents)]
		got, _, err := a.Install(src, ana, self)
		if err != nil {
			if !errors.Is(err, ErrUnreadable) {
				t.Fatalf("install: %v", err)
			}
			return
		}
		before := checkParses(t, a, orEmpty(src))
		checkParses(t, a, got)
		comments := commentsOutsideOurs(t, a, src)
		checkComments(t, "install", comments, got)
		if found, err := a.Inspect(got, self); err != nil || len(found.Missing) != 0 {
			t.Fatalf("after install: %+v, %v\n%s", found, err, got)
		}
		if again, _, err := a.Install(got, ana, self); err != nil || !bytes.Equal(again, got) {
			t.Fatalf("a second install changed the file: %v\n%s\n%s", err, got, again)
		}
		removed, _, err := a.Uninstall(got, self)
		if err != nil {
			t.Fatalf("uninstall: %v\n%s", err, got)
		}
		after := checkParses(t, a, removed)
		checkComments(t, "uninstall", comments, removed)
		if found, _ := a.Inspect(removed, self); len(found.Events) != 0 {
			t.Fatalf("after uninstall agmem's hooks are left in %v\n%s", found.Events, removed)
		}
		if sw := a.Switch; sw != nil && sw.File == a.File {
			if state, _ := sw.State(src); state == SwitchUnset {
				table, _ := before[sw.Table].(map[string]any)
				if table == nil {
					table = map[string]any{}
				}
				table[sw.Key], before[sw.Table] = true, table
			}
			if state, err := sw.State(removed); err != nil || state == SwitchUnset {
				t.Fatalf("after uninstall %s is %s, %v", sw, state, err)
			}
		}
		for _, m := range []map[string]any{before, after} {
			delete(m, "hooks")
			delete(m, "version")
		}
		if !reflect.DeepEqual(before, after) {
			t.Fatalf("settings besides the hooks changed: %v, now %v", before, after)
		}
	})
}

func orEmpty(src []byte) []byte {
	if len(bytes.TrimSpace(blankComments(src))) == 0 {
		return []byte("{}")
	}
	return src
}

// commentsOutsideOurs lists the comments in src that are not inside agmem's entries:
// those that installing and uninstalling must keep.
func commentsOutsideOurs(t *testing.T, a Agent, src []byte) []string {
	s, err := a.open(src, self)
	if err != nil {
		t.Fatal(err)
	}
	var ours []*node // agmem's entries, or its hooks in entries it shares
	if h := s.hooksObject(); h != nil {
		for _, m := range h.members {
			if live, _ := h.get(m.key); live != m.value || m.value.kind != '[' {
				continue // a list the agent does not read, which agmem leaves alone
			}
			for _, entry := range m.value.elems {
				found, _, all := s.ours(entry)
				if all {
					ours = append(ours, entry)
					continue
				}
				for _, i := range found {
					inner, _ := entry.get("hooks")
					ours = append(ours, inner.elems[i])
				}
			}
		}
	}
	var texts []string
	for _, c := range s.doc.comments {
		if !slices.ContainsFunc(ours, func(n *node) bool { return n.start <= c.start && c.end <= n.end }) {
			texts = append(texts, string(s.doc.src[c.start:c.end]))
		}
	}
	return texts
}

// checkComments fails unless text holds each comment of want, as often as want does.
func checkComments(t *testing.T, what string, want []string, text []byte) {
	t.Helper()
	cs, _ := scanComments(text)
	have := map[string]int{}
	for _, c := range cs {
		have[string(text[c.start:c.end])]++
	}
	for _, w := range want {
		if have[w]--; have[w] < 0 {
			t.Fatalf("%s took out the comment %q:\n%s", what, w, text)
		}
	}
}
