package redact

import (
	"testing"
	"unicode/utf8"
)

// FuzzRedact checks, for any text, that redaction does not panic, keeps valid UTF-8
// valid, reports findings in order and inside the text, and is idempotent: redacting
// redacted text changes nothing, so no mark can be read as a secret of its own.
func FuzzRedact(f *testing.F) {
	for _, s := range []string{
		"password=hunter2hunter2",
		`{"api_key": "Zx81Qp0LmN3vB7cK"}`,
		"Authorization: Bearer abc.def.ghi",
		"Cookie: a=b; c=d",
		"https://u:p@h.example.com/x",
		"-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----",
		"ghp_1234567890abcdefghijABCDEFGHIJ123456",
		"--token abcdefgh12 --password=x",
		"token=[REDACTED:secret-assignment]",
		"[REDACTED:x password=hunter2hunter2",
		"AKIAZ5GMHYJK7Q2XWN4P",
	} {
		f.Add(s)
	}
	r := Default()
	f.Fuzz(func(t *testing.T, text string) {
		found := r.Find(text)
		at := 0
		for _, fi := range found {
			if fi.Start < at || fi.End <= fi.Start || fi.End > len(text) {
				t.Fatalf("findings out of order or bounds in %q: %+v", text, found)
			}
			at = fi.End
		}
		out, _ := r.Text(text)
		if utf8.ValidString(text) && !utf8.ValidString(out) {
			t.Fatalf("valid UTF-8 %q redacted to invalid %q", text, out)
		}
		if again, _ := r.Text(out); again != out {
			t.Fatalf("redaction is not idempotent:\n in   %q\n once %q\n twice %q", text, out, again)
		}
	})
}
