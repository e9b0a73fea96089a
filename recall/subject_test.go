package recall

import "testing"

// A subject that ends its summary is kept as the length of that end; any other as
// itself, even one that reads as a number: each reads back as it was.
func TestSubjectKept(t *testing.T) {
	ix := newIndex(t)
	for _, c := range []struct {
		summary, subject string
		asLength         bool
	}{
		{"Read file_path=src/app.go", "src/app.go", true},
		{"Bash command=go test ./...", "go test ./...", true},
		{"Edit café/naïve.go", "café/naïve.go", true},
		{"42", "42", true},
		{"apply_patch", "a.go\nb.go", false},
		{"Bash command=echo 42 …", "42", false},
		{"Bash command=ls", "", false},
		{"", "", false},
	} {
		var stored any
		err := ix.db.QueryRow(`INSERT INTO entries (id, event, session, kind, ts, failed, summary, subject, size, record, line, form)
			VALUES ('x', '', 1, 1, 0, 0, ?, ?, 0, 0, 0, 0) RETURNING subject`, c.summary, storedSubject(c.summary, c.subject)).Scan(&stored)
		if err != nil {
			t.Fatal(err)
		}
		if got := subjectOf(c.summary, stored); got != c.subject {
			t.Errorf("summary %q, subject %q: kept as %#v, read back as %q", c.summary, c.subject, stored, got)
		}
		if _, ok := stored.(int64); ok != c.asLength {
			t.Errorf("summary %q, subject %q: kept as %#v", c.summary, c.subject, stored)
		}
	}
}
