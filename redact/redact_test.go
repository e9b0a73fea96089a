package redact

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/agmem/agmem/internal/testsource"
)

func TestText(t *testing.T) {
	for _, c := range []struct {
		name, in, want string
	}{
		{"env file", "DB_HOST=db\nDB_PASSWORD=hunter2hunter2\n", "DB_HOST=db\nDB_PASSWORD=[REDACTED:secret-assignment]\n"},
		{"export quoted", `export API_KEY="abc123def456"`, `export API_KEY="[REDACTED:secret-assignment]"`},
		{"yaml", "db:\n  password: s3cr3t-value\n", "db:\n  password: [REDACTED:secret-assignment]\n"},
		{"json in text", `{"client_secret": "a\"b-c1234"}`, `{"client_secret": "[REDACTED:secret-assignment]"}`},
		{"go assignment", `token := "tok_9f8e7d6c"`, `token := "[REDACTED:secret-assignment]"`},
		{"flag", `mysql --password hunter22 -h db`, `mysql --password [REDACTED:secret-flag] -h db`},
		{"flag equals", `deploy --api-key=k-12345678`, `deploy --api-key=[REDACTED:secret-assignment]`},
		{"mysql -p", `mysql -u root -pMyS3cretPass123 shop`, `mysql -u root -p[REDACTED:secret-flag] shop`},
		{"mysqldump -p", `mysqldump --single-transaction -p'Abc 123' shop > d.sql`, `mysqldump --single-transaction -p'[REDACTED:secret-flag]' shop > d.sql`},
		{"sshpass", `sshpass -p 'Hunter2Hunter2' ssh deploy@h`, `sshpass -p '[REDACTED:secret-flag]' ssh deploy@h`},
		{"redis-cli", `redis-cli -h cache -a s3cr3tRedisPw get k`, `redis-cli -h cache -a [REDACTED:secret-flag] get k`},
		{"aws configure set", `aws configure set aws_secret_access_key Zk8qL2mN4pR6sT8vX0yB2dF4hJ6kM8nQ1rT3wY5z`, `aws configure set aws_secret_access_key [REDACTED:secret-flag]`},
		{"mysql asks", `mysql -u root -p shop`, `mysql -u root -p shop`},
		{"mysql variable", `mysql -p$MYSQL_PWD shop`, `mysql -p$MYSQL_PWD shop`},
		{"aws configure set region", `aws configure set region eu-west-1`, `aws configure set region eu-west-1`},
		{"not mysql", `go test -p 4 ./... && mysql_config -pedantic`, `go test -p 4 ./... && mysql_config -pedantic`},
		{"mysql's directory", `find /etc/mysql -name "*.cnf" -print`, `find /etc/mysql -name "*.cnf" -print`},
		{"a container named mysql", `docker run -d --name mysql -p3306:3306 mysql:8`, `docker run -d --name mysql -p3306:3306 mysql:8`},
		{"mysql's port", `mysql -h db -P3306 -u root shop`, `mysql -h db -P3306 -u root shop`},
		{"mysql in a shell", `bash -lc mysql -uroot -pS3cretPass99 shop`, `bash -lc mysql -uroot -p[REDACTED:secret-flag] shop`},
		{"mysql after cd", `cd app && sudo /usr/bin/mysql -pS3cretPass99 shop`, `cd app && sudo /usr/bin/mysql -p[REDACTED:secret-flag] shop`},
		{"query string", `GET /v1?access_token=abcdefgh12&x=1`, `GET /v1?access_token=[REDACTED:secret-assignment]&x=1`},
		{"bearer header", `curl -H "Authorization: Bearer abc.def.ghi" https://x`, `curl -H "Authorization: Bearer [REDACTED:auth-header]" https://x`},
		{"basic header", "Authorization: Basic dXNlcjpwYXNz\n", "Authorization: Basic [REDACTED:auth-header]\n"},
		{"cookie", "Cookie: sid=abc123; theme=dark\n", "Cookie: [REDACTED:auth-header]\n"},
		{"url", `git clone https://bob:pa55word@git.example.com/r.git`, `git clone https://bob:[REDACTED:url-credentials]@git.example.com/r.git`},
		{"postgres url", `DATABASE_URL=postgres://app:Zx9!q@db:5432/app`, `DATABASE_URL=postgres://app:[REDACTED:url-credentials]@db:5432/app`},
		{"private key", "key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nAbC\n-----END RSA PRIVATE KEY-----\nafter", "key:\n[REDACTED:private-key]\nafter"},
		{"private key cut short", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk", "[REDACTED:private-key]"},
		{"github token", "pushed with ghp_1234567890abcdefghijABCDEFGHIJ123456 ok", "pushed with [REDACTED:github-pat] ok"},
		{"aws key", "AKIAZ5GMHYJK7Q2XWN4P", "[REDACTED:aws-access-token]"},
		{"json in a string", `{\"password\":\"Zx9SecretPw77qq\"}`, `{\"password\":\"[REDACTED:secret-assignment]\"}`},
		{"json in a string, space before the colon", "{\\\"password\\\" :\t\\\"Zx9SecretPw77qq\\\"}", "{\\\"password\\\" :\t\\\"[REDACTED:secret-assignment]\\\"}"},
		{"json in a string twice", `{\\\"password\\\":\\\"Zx9SecretPw77qq\\\"}`, `{\\\"password\\\":\\\"[REDACTED:secret-assignment]\\\"}`},
		{"slashes escaped", `postgres:\/\/bob:Zx9SecretPw77q@db.example.com\/app`, `postgres:\/\/bob:[REDACTED:url-credentials]@db.example.com\/app`},
		{"characters escaped", `ghp\u005fhGAkWvj7FAc9QeWJKY40uvSwMFLZDe1f8rES end`, `[REDACTED:github-pat] end`},
		{"netrc", "machine github.com login bob password Zx9SecretPw77q", "machine github.com login bob password [REDACTED:secret-assignment]"},
		{"netrc lines", "machine api.example.com\n  login bob\n  password Zx9Secret\nmachine x", "machine api.example.com\n  login bob\n  password [REDACTED:secret-assignment]\nmachine x"},
		{"bearer alone", `H=$(echo Bearer eyJhbGciOiJIUzI1NiJ9xyzabc1234567890)`, `H=$(echo Bearer [REDACTED:auth-header])`},
		{"bearer in prose", "uses Bearer authentication for its requests", "uses Bearer authentication for its requests"},
		{"bearer and a word", "the Bearer token_is_what_the_server_sends_back", "the Bearer token_is_what_the_server_sends_back"},
		{"env as json", `[{"name":"DB_PASSWORD","value":"Qw964VeryRandom9x"},{"name":"HOST","value":"db"}]`, `[{"name":"DB_PASSWORD","value":"[REDACTED:secret-assignment]"},{"name":"HOST","value":"db"}]`},
		{"env as json, value first", `{"value":"Qw900VeryRandom9x", "name":"API_TOKEN"}`, `{"value":"[REDACTED:secret-assignment]", "name":"API_TOKEN"}`},
		{"env as json, a long value first", `{"value":"` + strings.Repeat("Qw9x", 50) + `","name":"DB_PASSWORD"}`, `{"value":"[REDACTED:secret-assignment]","name":"DB_PASSWORD"}`},
		{"env as kubectl prints it", "\"env\": [\n  {\n    \"name\": \"DB_PASSWORD\",\n    \"value\": \"Qw964VeryRandom9x\"\n  }\n]", "\"env\": [\n  {\n    \"name\": \"DB_PASSWORD\",\n    \"value\": \"[REDACTED:secret-assignment]\"\n  }\n]"},
		{"env as yaml", "- name: DB_PASSWORD\n  value: Qw900VeryRandom9x\n- name: HOST\n  value: db.local", "- name: DB_PASSWORD\n  value: [REDACTED:secret-assignment]\n- name: HOST\n  value: db.local"},
		{"escapes of nothing", `\uZZZZ \q password`, `\uZZZZ \q password`},
		{"escapes of escapes", strings.Repeat(`\u005c`, 5000) + "u005c", strings.Repeat(`\u005c`, 5000) + "u005c"}, // read thrice, not 5,000 times

		{"placeholder var", "password=${DB_PASSWORD}", "password=${DB_PASSWORD}"},
		{"placeholder mask", "password: ****", "password: ****"},
		{"token count", "max_tokens: 4096, input_tokens=12", "max_tokens: 4096, input_tokens=12"},
		{"prose", "the password is checked by the auth module", "the password is checked by the auth module"},
		{"short number", "pin: 1234", "pin: 1234"},
		{"empty", "", ""},
		{"author", "author: Jane Doe", "author: Jane Doe"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, n := Default().Text(c.in)
			if got != c.want {
				t.Errorf("Text(%q)\n got %q\nwant %q", c.in, got, c.want)
			}
			if want := strings.Count(c.want, "[REDACTED:"); n != want {
				t.Errorf("count %d, want %d", n, want)
			}
		})
	}
}

func TestField(t *testing.T) {
	for _, c := range []struct{ key, value, want string }{
		{"password", "hunter2", Mark(RuleAssignment)},
		{"X-Api-Key", "k1", "k1"}, // too short to be anything
		{"apiKey", "abcdef", Mark(RuleAssignment)},
		{"Authorization", "Bearer abcdefgh", "Bearer " + Mark(RuleAuthHeader)},
		{"token", "${TOKEN}", "${TOKEN}"},
		{"SENTRY_DSN", "https://3f9a@o1.ingest.sentry.io/7", Mark(RuleAssignment)},
		{"ssh_key", "AAAAC3NzaC1lZDI1NTE5AAAA", Mark(RuleAssignment)},
		{"slackWebhookUrl", "https://hooks.example.com/T0/B0/x", Mark(RuleAssignment)},
		{"bearer", "eyJhbGciOiJIUzI1NiJ9", Mark(RuleAssignment)},
		{"dsname", "payments", "payments"}, // a word that holds dsn
		{"command", "echo $HOME", "echo $HOME"},
		{"command", "export GITHUB_TOKEN=ghp_1234567890abcdefghijABCDEFGHIJ123456", "export GITHUB_TOKEN=" + Mark("github-pat")},
	} {
		if got, _ := Default().Field(c.key, c.value, nil); got != c.want {
			t.Errorf("Field(%q, %q) = %q, want %q", c.key, c.value, got, c.want)
		}
	}
}

func TestOptions(t *testing.T) {
	r, err := New(Options{
		Disable: []string{RuleURLCreds},
		Allow:   []string{`^hunter2$`},
		Extra:   []Pattern{{ID: "acme-key", Regex: `acme_[a-z0-9]{8}`}},
	})
	if err != nil {
		t.Fatal(err)
	}
	in := "https://u:pw123456@h password=hunter2 password=other123 id acme_12345678"
	want := "https://u:pw123456@h password=hunter2 password=[REDACTED:secret-assignment] id [REDACTED:acme-key]"
	if got, _ := r.Text(in); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	for _, bad := range []Options{
		{Disable: []string{"no-such-rule"}},
		{Allow: []string{"("}},
		{Extra: []Pattern{{ID: "x", Regex: "("}}},
		{Extra: []Pattern{{Regex: "x"}}},
	} {
		if _, err := New(bad); err == nil {
			t.Errorf("New(%+v) accepted", bad)
		}
	}
}

func TestFindMergesOverlaps(t *testing.T) {
	// gitleaks' generic rule and agmem's assignment rule both find this one.
	text := `api_key = "Zx81Qp0LmN3vB7cK"`
	if f := Default().Find(text); len(f) != 1 {
		t.Fatalf("Find(%q) = %+v, want one finding", text, f)
	}
}

func BenchmarkText(b *testing.B) {
	payload := strings.Repeat(`{"command":"go test ./...","description":"run the tests"} ok  	github.com/x/y	0.01s `, 20)
	secrets := payload + ` export GITHUB_TOKEN=ghp_1234567890abcdefghijABCDEFGHIJ123456 password=hunter22`
	for name, text := range map[string]string{"clean-2KiB": payload, "secrets-2KiB": secrets, "clean-1MiB": strings.Repeat(payload, 512)} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for i := 0; i < b.N; i++ {
				Default().Text(text)
			}
		})
	}
}

// BenchmarkSeenAgain is the second pass over a 1 MiB result of an entry in which a
// secret was seen: not repeated in it, and repeated once.
func BenchmarkSeenAgain(b *testing.B) {
	var seen Seen
	Default().Field("DB_PASSWORD", "Zq8vLm3pRt6Wx", &seen)
	Default().Field("API_TOKEN", "k-9f8e7d6c5b4a3", &seen)
	text := strings.Repeat("a line of a large result, 40 bytes long\n", 1<<20/40)
	for name, text := range map[string]string{"none": text, "one": text[:len(text)/2] + "Zq8vLm3pRt6Wx" + text[len(text)/2:]} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				seen.Again(text)
			}
		})
	}
}

// TestRulesCompile compiles every rule's regex in each form it may be used in: rules
// are compiled lazily, so a bad one would otherwise fail only on the text that wakes it.
func TestRulesCompile(t *testing.T) {
	for _, r := range builtin() {
		r.re()
		r.anchored()
		r.loose()
	}
}

func TestFirstByte(t *testing.T) {
	for re, want := range map[string]string{
		`^\$(?:\d+|{\d+})$`: "$", `^%(?:[A-Z_]+)%$`: "%", `^/Users/x`: "/", `^@x@$`: "@", `^\{\d{0,2}}$`: "{",
		`(?i)^true|false|null$`: "", `^(?i:a+|b+)$`: "", `^abc`: "", `^\d`: "", `x`: "",
	} {
		c, ok := firstByte(re)
		if got := map[bool]string{true: string(c), false: ""}[ok]; got != want {
			t.Errorf("firstByte(%q) = %q, want %q", re, got, want)
		}
	}
}

// TestReviewedLeaks holds inputs that once slipped through: each secret must go.
func TestReviewedLeaks(t *testing.T) {
	long := strings.Repeat("a-b_c", 60)
	body := strings.Repeat("x", 320)
	for _, c := range []struct{ in, secret string }{
		{"DB_PASSWORD=Trueblue2024x", "Trueblue2024x"},
		{"git clone https://bob:TrueNorth77@h/r.git", "TrueNorth77"},
		{"api_token=abcFALSEdef12345", "abcFALSEdef12345"},
		{"Authorization: Bearer trueZx81Qp0LmN3vB7cK", "trueZx81Qp0LmN3vB7cK"},
		{"see [REDACTED:foo and then password=hunter2hunter2", "hunter2hunter2"},
		{"[REDACTED: note password=hunter2hunter2 ]", "hunter2hunter2"},
		{`export PASSWORD="` + long + `"`, long},
		{`export PASSWORD='` + long + `'`, long},
		{"curl -sS -X POST -d '" + body + "' https://api.example.com -u admin:S3cr3tP4ssw0rd", "S3cr3tP4ssw0rd"},
		{"https://bob:" + strings.Repeat("Zq9", 400) + "@host/x", strings.Repeat("Zq9", 400)},
		{"DB_PASS=Zx81Qp0LmN", "Zx81Qp0LmN"},
		{"MYSQL_PWD=Zx81Qp0LmN", "Zx81Qp0LmN"},
		{`{"password":"$Summer2024"}`, "$Summer2024"},
	} {
		if out, _ := Default().Text(c.in); strings.Contains(out, c.secret) {
			t.Errorf("Text(%.60q) keeps the secret: %.100q", c.in, out)
		}
	}
	for _, keep := range []string{"bypass: allowed", "PWD=/home/ana/app", "password=$DB_PASSWORD", "token: ${API_TOKEN}"} {
		if out, _ := Default().Text(keep); out != keep {
			t.Errorf("Text(%q) = %q, want it kept", keep, out)
		}
	}
}

func TestFieldHeaderWithUserPattern(t *testing.T) {
	r, err := New(Options{Extra: []Pattern{{ID: "authz", Regex: `(?i)authorization:.*`}}, Allow: []string{`^hunter2hunter2$`}})
	if err != nil {
		t.Fatal(err)
	}
	if out, _ := r.Field("Proxy-Authorization", "Bearer abcdefgh", nil); strings.Contains(out, "abcdefgh") {
		t.Errorf("header value kept: %q", out)
	}
	if out, n := r.Field("password", "hunter2hunter2", nil); out != "hunter2hunter2" || n != 0 {
		t.Errorf("an allowed value under a secret key is redacted: %q", out)
	}
	if _, err := New(Options{Extra: []Pattern{{ID: "Bad Id", Regex: "x"}}}); err == nil {
		t.Error("a pattern id a mark cannot carry is accepted")
	}
}

func TestCut(t *testing.T) {
	token := "ghp_1234567890abcdefghijABCDEFGHIJ123456"
	value := strings.Repeat("password=hunter2hunter2 ", 200) + strings.Repeat(".", 90) + token + " tail"
	limit := strings.Index(value, token) + 10 // the cut falls inside the token
	out, n := Default().Cut("", value, limit, nil)
	if strings.Contains(out, "ghp_1234567890") || strings.Contains(out, "hunter2") || !strings.HasSuffix(out, Mark("github-pat")) {
		t.Errorf("Cut leaves part of a secret: ...%q", out[max(0, len(out)-80):])
	}
	if n != 201 {
		t.Errorf("Cut counts %d secrets, want 201", n)
	}
	if out, _ := Default().Cut("", "short", 3, nil); out != "sho" {
		t.Errorf("Cut(short, 3) = %q", out)
	}
}

// BenchmarkFindSource finds secrets in 1 KiB pieces of Go's own sources, as the ingest
// bench records them: "token", "key" and "secret" are common words there, and "s." is
// everywhere.
func BenchmarkFindSource(b *testing.B) {
	pieces := testsource.Pieces(b, 512)
	r := Default()
	b.SetBytes(1000)
	for i := 0; b.Loop(); i++ {
		r.Find(pieces[i%len(pieces)].Text)
	}
}

// BenchmarkFieldSource redacts, as agmem record --jsonl does a read_file's result,
// 1 KiB pieces of files from all over Go's sources, where the key = value rules' words
// ("key", "token", "auth", "access") are in every other identifier.
func BenchmarkFieldSource(b *testing.B) {
	pieces := testsource.Pieces(b, math.MaxInt)
	r := Default()
	b.SetBytes(1000)
	for i := 0; b.Loop(); i++ {
		r.Field("result", pieces[i%len(pieces)].Text, nil)
	}
}

// BenchmarkFindSourceFile finds secrets in 128 KB of Go's sources at once, as an agent
// reads a whole file: "s." occurs in it more often than windows are kept for.
func BenchmarkFindSourceFile(b *testing.B) {
	var text strings.Builder
	for _, p := range testsource.Pieces(b, 128) {
		text.WriteString(p.Text)
	}
	r := Default()
	b.SetBytes(int64(text.Len()))
	for b.Loop() {
		r.Find(text.String())
	}
}

// BenchmarkFindEscapedJSON finds secrets in a MiB of JSON as PHP writes it, with no
// white space and an escape every few bytes (https:\/\/, \u00e9): what a curl of such
// an API gives back. Each escape's span is read once (around), where looking for
// each one's end anew took 25 s.
func BenchmarkFindEscapedJSON(b *testing.B) {
	var text strings.Builder
	for i := 0; text.Len() < 1<<20; i++ {
		fmt.Fprintf(&text, `{"id":%d,"url":"https:\/\/example.com\/wp-content\/uploads\/%d.jpg","title":"Caf\u00e9-%d"},`, i, i, i)
	}
	r := Default()
	b.SetBytes(int64(text.Len()))
	for b.Loop() {
		r.Find(text.String())
	}
}

// TestMayMatch checks the literals a rule is known to need before its regex runs: none
// that a match could lack, and none that a case-folded match could spell otherwise.
func TestMayMatch(t *testing.T) {
	for _, c := range []struct {
		regex, text string
		want        bool
	}{
		{`(?i)[\w.-]{0,50}?(?:lob)[ \t]*=(test_[a-f0-9]{4})`, "x = test_abcd", false},
		{`(?i)[\w.-]{0,50}?(?:lob)[ \t]*=(test_[a-f0-9]{4})`, "LOB = TEST_abcd", true},
		{`(?i)token=\w+`, "TOKEN=abc", true},      // "token": (?i)k is also the Kelvin sign
		{`(?i)token=\w+`, "to\u212aen=abc", true}, // …which matches it
		{`abc|xyz`, "xyz", true},
		{`(?:abc)?x`, "x", true},
		{`(?:abc){0,2}x`, "x", true},
		{`(?:abc){1,2}x`, "x", false},
		{`(?:abc)+x`, "x", false},
		{"\ufffd\ufffdx", "\xff\xfex", true},
		{`[a-z]+://[^\s@]*:([^\s@]+)@`, "see https://golang.org/x", false}, // a single "@" counts
		{`[a-z]+://[^\s@]*:([^\s@]+)@`, "git://u:p@h", true},
		{`(?i)a=s`, "A=\u017f", true}, // (?i)s also matches the long s
	} {
		r := &rule{id: "t", regex: c.regex}
		if got := r.mayMatch(c.text); got != c.want {
			t.Errorf("mayMatch(%q) under %q = %v, want %v", c.text, c.regex, got, c.want)
		}
		if m := regexp.MustCompile(c.regex).MatchString(c.text); m && !r.mayMatch(c.text) {
			t.Errorf("%q matches %q, mayMatch says it cannot", c.regex, c.text)
		}
	}
}

// TestUncut: text cut short loses the start of a mark the cut went through, and keeps
// a whole mark and any other bracket.
func TestUncut(t *testing.T) {
	for in, want := range map[string]string{
		"--token [REDAC":                  "--token",
		"--token [":                       "--token",
		"--token [REDACTED:github-p":      "--token",
		"--token [REDACTED:github-pat]":   "--token [REDACTED:github-pat]",
		"[REDACTED:aws] and [REDACTED:gi": "[REDACTED:aws] and",
		"a list [1, 2":                    "a list [1, 2",
		"not a rule [REDACTED:foo bar":    "not a rule [REDACTED:foo bar",
		"no bracket":                      "no bracket",
	} {
		if got := Uncut(in); got != want {
			t.Errorf("Uncut(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestMarkRules: the rules of whole marks, in order; what only looks like a mark is
// none.
func TestMarkRules(t *testing.T) {
	got := MarkRules("a [REDACTED:aws-access-token] b [REDACTED:] c [REDACTED:github-pat][REDACTED:x.y_z-1] [REDACTED:Upper] [REDACTED:open")
	if want := []string{"aws-access-token", "github-pat", "x.y_z-1"}; !slices.Equal(got, want) {
		t.Errorf("MarkRules = %q, want %q", got, want)
	}
}

// TestSeenManySecrets: past manyHeads secrets seen, Again looks at every offset, and
// hides what looking for each head hides.
func TestSeenManySecrets(t *testing.T) {
	for _, n := range []int{manyHeads - 1, manyHeads + 1} {
		var seen Seen
		for i := range n {
			Default().Field("password", fmt.Sprintf("Zq8vLm%03dRt6Wx", i), &seen)
		}
		got, count := seen.Again("one Zq8vLm042Rt6Wx, then Zq8vLm000Rt6Wx and Zq8vLm999Rt6Wx.")
		if want := "one [REDACTED:secret-assignment], then [REDACTED:secret-assignment] and Zq8vLm999Rt6Wx."; got != want || count != 2 {
			t.Errorf("%d secrets seen: %q, %d; want %q, 2", n, got, count, want)
		}
	}
}

// TestSeen: a secret a rule found in one value of an entry is hidden in the others by
// Again, where no rule would find it; one shorter than minSeen is not, nor is a mark's
// text touched, and one secret that holds another is hidden whole.
func TestSeen(t *testing.T) {
	r := Default()
	var seen Seen
	if out, n := r.Field("password", "Zq8vLm3pRt6Wx", &seen); out != Mark(RuleAssignment) || n != 1 {
		t.Fatalf("the secret itself: %q %d", out, n)
	}
	if out, n := seen.Again("connected as Zq8vLm3pRt6Wx, twice: Zq8vLm3pRt6Wx"); out != "connected as [REDACTED:secret-assignment], twice: [REDACTED:secret-assignment]" || n != 2 {
		t.Errorf("repeated: %q %d", out, n)
	}
	r.Cut("note", "token=Qx9vLm3pRt6Wy and more", 8, &seen) // found across the cut
	if out, n := seen.Again("as Qx9vLm3pRt6Wy"); out != "as [REDACTED:secret-assignment]" || n != 1 {
		t.Errorf("seen by Cut: %q %d", out, n)
	}
	r.Field("command", `echo '{\"api_secret\":\"Qw9\/xY7zP2kLmN\"}' | jq -r .api_secret`, &seen) // found escaped
	if out, n := seen.Again("the secret is Qw9/xY7zP2kLmN"); out != "the secret is [REDACTED:secret-assignment]" || n != 1 {
		t.Errorf("seen escaped, printed as it reads: %q %d", out, n)
	}
	r.Field("pin", "12345", &seen) // too short to hide elsewhere
	if out, n := seen.Again("pin 12345"); out != "pin 12345" || n != 0 {
		t.Errorf("a short secret hidden elsewhere: %q %d", out, n)
	}
	r.Field("api_key", "assignment", &seen) // the text of a mark's rule
	if out, n := seen.Again("[REDACTED:secret-assignment] and assignment"); out != "[REDACTED:secret-assignment] and [REDACTED:secret-assignment]" || n != 1 {
		t.Errorf("a mark's text: %q %d", out, n)
	}
	r.Field("token", "Zq8vLm3pRt6WxLonger", &seen)
	if out, _ := seen.Again("Zq8vLm3pRt6WxLonger"); out != Mark(RuleAssignment) {
		t.Errorf("a secret holding another: %q", out)
	}
	r.Field("password", "hunter2hunter2X", &seen) // two that overlap where a text holds them
	r.Field("api_key", "abcdefhunt", &seen)
	if out, n := seen.Again("value abcdefhunter2hunter2X end"); out != "value [REDACTED:secret-assignment] end" || n != 1 {
		t.Errorf("overlapping secrets: %q %d", out, n)
	}
	r.Field("token", "T5y6zzzzzzzzzzzzzzzzzzzzzz", &seen)
	r.Field("secret", "Q1w2E3r4T5y6U7", &seen)
	if out, n := seen.AgainCut("cut in Q1w2E3r4T5y6"); out != "cut in [REDACTED:secret-assignment]" || n != 1 {
		t.Errorf("the longest start of a secret at a cut: %q %d", out, n)
	}
	r.Field("", "curl -u ana:Hunter2Secret9 https://x.example", &seen) // user:password
	if out, n := seen.Again("logged in with Hunter2Secret9"); out != "logged in with [REDACTED:curl-auth-user]" || n != 1 {
		t.Errorf("the password of a user:password: %q %d", out, n)
	}
	var none *Seen
	if out, n := r.Field("password", "Zq8vLm3pRt6Wx", none); out != Mark(RuleAssignment) || n != 1 || none.Any() {
		t.Errorf("no seen: %q %d", out, n)
	}
	if out, n := none.Again("Zq8vLm3pRt6Wx"); out != "Zq8vLm3pRt6Wx" || n != 0 {
		t.Errorf("nothing seen: %q %d", out, n)
	}
}
