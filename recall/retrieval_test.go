package recall_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agmem/agmem/recall"
	"github.com/agmem/agmem/record"
)

// labelledQuery is a query of testdata/retrieval/queries.json: what a person would
// type, search's filters, and the entries that answer it right.
type labelledQuery struct {
	Query   string `json:"query"`
	Filters struct {
		Session string    `json:"session"`
		Agent   string    `json:"agent"`
		Type    string    `json:"type"`
		Tool    string    `json:"tool"`
		Project string    `json:"project"`
		Failed  bool      `json:"failed"`
		Since   time.Time `json:"since"`
		Until   time.Time `json:"until"`
	} `json:"filters"`
	Want []string `json:"want"`
	Why  string   `json:"why"`
}

// Retrieval quality: for every labelled query of the corpus (42 sessions of three
// agents in five projects), a right answer ranks in the top 5, with the corpus half
// committed and half pending, and again all committed.
func TestRetrievalTop5(t *testing.T) {
	corpus, err := os.ReadFile("testdata/retrieval/corpus.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var queries []labelledQuery
	data, err := os.ReadFile("testdata/retrieval/queries.json")
	if err == nil {
		err = json.Unmarshal(data, &queries)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(queries) < 20 {
		t.Fatalf("%d labelled queries, want at least 20", len(queries))
	}

	// Half the sessions, by order of first appearance, are flushed before the others
	// are recorded.
	var first, second bytes.Buffer
	sessions := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(corpus))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line struct {
			Session string `json:"session_id"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		if _, ok := sessions[line.Session]; !ok {
			sessions[line.Session] = len(sessions)
		}
		half := &first
		if sessions[line.Session]%2 == 1 {
			half = &second
		}
		half.Write(sc.Bytes())
		half.WriteByte('\n')
	}
	if len(sessions) < 30 {
		t.Fatalf("%d sessions in the corpus, want at least 30", len(sessions))
	}
	m := newMemRepo(t)
	m.lines(&first)
	m.flush()
	m.lines(&second)
	check := func(when string, committed bool) {
		t.Helper()
		mem := m.open()
		for _, q := range queries {
			f := q.Filters
			res, err := mem.Search(recall.Query{Text: q.Query, Session: f.Session, Agent: f.Agent, Type: f.Type,
				Tool: f.Tool, Project: f.Project, Failed: f.Failed, Since: f.Since, Until: f.Until, Limit: 5})
			if err != nil {
				t.Errorf("%s: %q: %v", when, q.Query, err)
				continue
			}
			rank := slices.IndexFunc(res.Hits, func(h recall.Hit) bool { return slices.Contains(q.Want, h.ID) })
			if rank < 0 {
				var got []string
				for _, h := range res.Hits {
					got = append(got, h.ID+" "+h.Summary)
				}
				t.Errorf("%s: %q %+v (%s): no right answer in the top 5 of %d:\n\t%s",
					when, q.Query, f, q.Why, res.Total, strings.Join(got, "\n\t"))
			}
			for _, h := range res.Hits {
				if committed && (h.Commit == "" || h.Path == "" && h.Event == "") {
					t.Errorf("%s: %q: %s is cited as pending after the flush", when, q.Query, h.ID)
				}
			}
		}
	}
	check("half committed", false)
	m.flush()
	check("all committed", true)
}

// lines records native JSONL lines, as agmem record --jsonl does.
func (m *memRepo) lines(in *bytes.Buffer) {
	m.t.Helper()
	r, err := record.Open(m.repo.Root, record.Options{Getenv: func(string) string { return "" }})
	if err != nil {
		m.t.Fatal(err)
	}
	out, err := r.Lines(in)
	if err != nil || len(out.Refused) > 0 {
		m.t.Fatalf("record: %v %v", err, out.Refused)
	}
}

// corpusMemory is a memory repo of the retrieval corpus, all of it committed, opened.
func corpusMemory(t *testing.T) *recall.Memory {
	t.Helper()
	corpus, err := os.ReadFile("testdata/retrieval/corpus.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	m := newMemRepo(t)
	m.lines(bytes.NewBuffer(corpus))
	m.flush()
	return m.open()
}

// TestProjectRelative: a project filter names a directory as a person types it, relative
// to the working directory or with a slash at its end, and means the same sessions.
func TestProjectRelative(t *testing.T) {
	mem := corpusMemory(t)
	t.Chdir("/home")
	shown := func(project string) string {
		t.Helper()
		res, err := mem.Search(recall.Query{Text: "test", Project: project, Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, h := range res.Hits {
			ids = append(ids, h.ID)
		}
		sessions, err := mem.Sessions(project, "", 50)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range sessions {
			ids = append(ids, s.ID)
		}
		return strings.Join(ids, " ")
	}
	want := shown("/home/ana/shop")
	if want == "" {
		t.Fatal("nothing of /home/ana/shop")
	}
	for _, project := range []string{"ana/shop", "./ana/shop/", "/home/ana/shop/", "../home/ana//shop"} {
		if got := shown(project); got != want {
			t.Errorf("project %q: %s\nwant what /home/ana/shop gives: %s", project, got, want)
		}
	}
}

// TestProjectNotASCII: the sessions under a directory whose name is not ASCII are found,
// as those under any other.
func TestProjectNotASCII(t *testing.T) {
	m := newMemRepo(t)
	for i, cwd := range []string{"/home/日本", "/home/日本/sub", "/home/café/deep", "/home/cafe/deep"} {
		m.record(fmt.Sprint("s", i), record.Observation{Tool: "Bash", ToolUseID: "b", Cwd: cwd,
			Time: time.Date(2026, 11, 30, 9, i, 0, 0, time.UTC), Arguments: map[string]any{"command": "make check"},
			Result: "every check of the project passed, nothing is left to do for today"})
	}
	mem := m.open()
	for project, want := range map[string]int{"/home/日本": 2, "/home/café": 1, "/home/日本/sub": 1, "/home": 4} {
		res, err := mem.Search(recall.Query{Text: "check", Project: project})
		if err != nil {
			t.Fatal(err)
		}
		sessions, err := mem.Sessions(project, "", 10)
		if err != nil {
			t.Fatal(err)
		}
		if res.Total != want || len(sessions) != want {
			t.Errorf("%s: %d hits, %d sessions, want %d", project, res.Total, len(sessions), want)
		}
	}
}

// TestSessionsOfAnAgent: the sessions of an agent are its own, and those of the three
// agents are every session there is.
func TestSessionsOfAnAgent(t *testing.T) {
	mem := corpusMemory(t)
	all, err := mem.Sessions("", "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, agent := range []string{"claude-code", "codex", "gemini-cli"} {
		of, err := mem.Sessions("", agent, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range of {
			if s.Agent != agent {
				t.Errorf("agent %s: session %s of %s", agent, s.ID, s.Agent)
			}
		}
		if len(of) == 0 {
			t.Errorf("agent %s: no session", agent)
		}
		n += len(of)
	}
	if n != len(all) {
		t.Errorf("the agents' sessions: %d; all sessions: %d", n, len(all))
	}
}

// TestWordsInJSONStrings: a word after an escape in an argument's or a JSON result's
// strings (a line end, a tab, an HTML character the journal escapes) is found, pending
// and committed, and its snippet shows the characters, not their escapes.
func TestWordsInJSONStrings(t *testing.T) {
	m := newMemRepo(t)
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	m.record("w", record.Observation{Tool: "Write", ToolUseID: "w1", Cwd: "/home/ana/shop", Time: at,
		Arguments: map[string]any{"file_path": "/home/ana/shop/index.html", "content": "<h1>Welcome</h1>\nwalrus second\tpelican"},
		Result:    "File created successfully at: /home/ana/shop/index.html"})
	m.record("w", record.Observation{Tool: "Bash", ToolUseID: "b1", Cwd: "/home/ana/shop", Time: at.Add(time.Second),
		Arguments: map[string]any{"command": "npm run migrate"},
		Result:    map[string]any{"stdout": "starting migration\nMigrationFailed after 3 attempts", "stderr": ""}})
	m.record("w", record.Observation{Tool: "Bash", ToolUseID: "b2", Cwd: "/home/ana/shop", Time: at.Add(2 * time.Second),
		Arguments: map[string]any{"command": "go test ./... 2>&1 | tee out.log && echo <done>"},
		Result:    "ok shop/cart 0.012s, ok shop/checkout 0.020s: all packages passed"})
	m.record("w", record.Observation{Tool: "Bash", ToolUseID: "b3", Cwd: "/home/ana/shop", Time: at.Add(3 * time.Second),
		Arguments: map[string]any{"command": "git commit -am fix"},
		Result:    `[main 1a2b3c] fix the \n escape in C:\new, a text that starts with a bracket`})
	for _, when := range []string{"pending", "committed"} {
		if when == "committed" {
			m.flush()
		}
		for word, snippet := range map[string]string{
			"escape":          `fix the \n **escape** in C:\new`,
			"walrus":          "**walrus**",
			"pelican":         "**pelican**",
			"welcome":         "<h1>**Welcome**</h1>",
			"migrationfailed": "**MigrationFailed** after",
			"tee":             "| **tee** out.log && echo <done>",
		} {
			res := m.search(recall.Query{Text: word})
			if len(res.Hits) != 1 || !strings.Contains(res.Hits[0].Snippet, snippet) {
				t.Errorf("%s, %s: %d hits, %+v; want one, its snippet with %q", when, word, len(res.Hits), res.Hits, snippet)
			}
		}
	}
	// The snippet of a committed call is cut from its markdown file when the file shows
	// the match: a result the file shows as JSON is read with its escapes decoded, as
	// the entry's words are (else the snippet comes from the whole entry, slower).
	hit := m.search(recall.Query{Text: "migrationfailed"}).Hits[0]
	if texts := recall.ShownOf(m.open(), hit.Ref); len(texts) < 2 || !strings.Contains(texts[1], "migration\nMigrationFailed") {
		t.Errorf("the markdown's result, as snippets read it: %q", texts)
	}
}

// TestProjectOfEveryCall: a session worked in each directory its calls name, not only
// in the one it began in: one that began in /home/ana and went on in /home/ana/shop is
// found by a search of the project, listed among its sessions, and told of at the
// start of the project's next session.
func TestProjectOfEveryCall(t *testing.T) {
	m := newMemRepo(t)
	for i, c := range []struct{ cwd, command string }{{"/home/ana", "cd shop && ls"}, {"/home/ana/shop", "make build"}, {"/home/ana/shop", "make test"}} {
		m.record("m1", record.Observation{Tool: "Bash", ToolUseID: fmt.Sprint("a", i), Cwd: c.cwd,
			Time: time.Date(2026, 11, 29, 9, i, 0, 0, time.UTC), Arguments: map[string]any{"command": c.command},
			Result: "the result of this call is long enough to be kept, and says bravo"})
	}
	m.flush()
	mem := m.open()
	for project, want := range map[string]int{"/home/ana/shop": 3, "/home/ana": 3, "/home/bo": 0} {
		res, err := mem.Search(recall.Query{Text: "bravo", Project: project})
		if err != nil {
			t.Fatal(err)
		}
		sessions, err := mem.Sessions(project, "", 10)
		if err != nil {
			t.Fatal(err)
		}
		if res.Total != want || len(sessions) != min(want, 1) {
			t.Errorf("%s: %d hits, %d sessions; want %d, %d", project, res.Total, len(sessions), want, min(want, 1))
		}
	}
	ctx, err := mem.Context("/home/ana/shop", 6000)
	if err != nil || !strings.Contains(ctx.Text, "make test") {
		t.Errorf("the project's context: %+v, %v", ctx, err)
	}
}
