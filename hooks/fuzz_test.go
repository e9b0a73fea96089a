package hooks

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzHooksEdit installs and uninstalls agmem's hooks in arbitrary settings files: each
// is refused as unreadable or comes out readable, with every event covered, unchanged by
// a second install, and, after uninstalling, with no agmem hook left and every setting
// other than "hooks" (and Cursor's "version") as it was.
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
		"{\"hooks\": {\"AfterTool\": [ /* none */ ], \"x\": [{\"hooks\": [{\"command\": \"x\"}, {\"command\": \"agmem record\"}]}]}}"} {
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
		if found, _ := a.Inspect(removed, self); len(found.Events) != 0 {
			t.Fatalf("after uninstall agmem's hooks are left in %v\n%s", found.Events, removed)
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
