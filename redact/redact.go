package redact

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Pattern is a rule a user adds: a regex whose whole match, or first non-empty
// submatch, is a secret.
type Pattern struct {
	ID    string `json:"id" toml:"id"`
	Regex string `json:"regex" toml:"regex"`
}

// Options change the built-in rule set.
type Options struct {
	Disable []string  // rule ids switched off
	Allow   []string  // regexes: a secret one of them matches is kept
	Extra   []Pattern // rules added to the built-in ones
}

// Redactor finds and replaces secrets. It is safe for concurrent use.
type Redactor struct {
	rules []*rule
	allow []*regexp.Regexp
	// keyRule says whether the secret-assignment rule is on, which also covers values
	// under a secret's key in JSON.
	keyRule bool

	once sync.Once
	pf   *prefilter
}

// Finding is a secret in a text.
type Finding struct {
	Rule       string   // the rule that names it: the most specific that found it
	Also       []string // the other rules that found it, or part of it
	Start, End int      // byte offsets of the secret
}

// New builds a redactor: agmem's rules, then gitleaks', then opts.Extra, less the
// disabled ones. Nothing is compiled until a text needs it, except the user's regexes,
// which are checked here.
func New(opts Options) (*Redactor, error) {
	off := map[string]bool{}
	for _, id := range opts.Disable {
		if !known(id) {
			return nil, fmt.Errorf("redact: no rule %q to disable", id)
		}
		off[id] = true
	}
	r := &Redactor{keyRule: !off[RuleAssignment]}
	for _, ru := range builtin() {
		if !off[ru.id] {
			r.rules = append(r.rules, ru)
		}
	}
	for _, p := range opts.Extra {
		re, err := regexp.Compile(p.Regex)
		if err != nil {
			return nil, fmt.Errorf("redact: pattern %q: %w", p.ID, err)
		}
		if p.ID == "" {
			return nil, fmt.Errorf("redact: pattern %q has no id", p.Regex)
		}
		ru := &rule{id: p.ID, regex: p.Regex, compiled: re}
		ru.once.Do(func() {})
		r.rules = append(r.rules, ru)
	}
	for _, a := range opts.Allow {
		re, err := regexp.Compile(a)
		if err != nil {
			return nil, fmt.Errorf("redact: allow %q: %w", a, err)
		}
		r.allow = append(r.allow, re)
	}
	return r, nil
}

// Default is the redactor of the built-in rules.
var Default = sync.OnceValue(func() *Redactor {
	r, _ := New(Options{})
	return r
})

// builtin is agmem's rules and gitleaks', each id once. The rules live for the
// process, compiled on first use.
var builtin = sync.OnceValue(func() []*rule {
	rules := ownRules()
	own := map[string]bool{}
	for _, r := range rules {
		own[r.id] = true
	}
	for i := range gitleaksRules {
		if r := &gitleaksRules[i]; !own[r.id] {
			rules = append(rules, r)
		}
	}
	return rules
})

func known(id string) bool {
	for _, r := range builtin() {
		if r.id == id {
			return true
		}
	}
	return false
}

// RuleIDs lists the built-in rules' ids.
func RuleIDs() []string {
	var ids []string
	for _, r := range builtin() {
		ids = append(ids, r.id)
	}
	return ids
}

// Find returns the secrets in text, in order, none overlapping: overlapping findings
// become one, named by the most specific rule among them (github-pat rather than
// secret-assignment).
func (r *Redactor) Find(text string) []Finding {
	if len(text) < 8 {
		return nil
	}
	r.once.Do(func() { r.pf = newPrefilter(r.rules) })
	var found []Finding
	marks := markSpans(text)
	for _, h := range r.pf.rules(text, r.rules) {
		if h.whole {
			found = r.findRule(found, r.rules[h.rule], text, 0, len(text), marks)
			continue
		}
		for _, w := range windows(text, h.at) {
			found = r.findRule(found, r.rules[h.rule], text, w[0], w[1], marks)
		}
		found = r.findAnchored(found, r.rules[h.rule], text, h.anchors, marks)
	}
	return merge(found)
}

// markSpans are the marks of an earlier redaction in text: what they cover is no
// secret, so that redacting twice changes nothing.
func markSpans(text string) [][2]int {
	var spans [][2]int
	for at := 0; ; {
		i := strings.Index(text[at:], "[REDACTED:")
		if i < 0 {
			return spans
		}
		start := at + i
		end := len(text)
		if j := strings.IndexByte(text[start:], ']'); j >= 0 {
			end = start + j + 1
		}
		spans = append(spans, [2]int{start, end})
		at = end
	}
}

func overlaps(spans [][2]int, start, end int) bool {
	for _, s := range spans {
		if start < s[1] && s[0] < end {
			return true
		}
	}
	return false
}

// Reach of a window around a keyword: how far before it a match may start (at least
// reachBefore, and the whole identifier that holds the keyword), and how far after it
// one usually ends (reachAfter, then on to the end of the word there); a window that
// still cuts a match short is widened. Go's regexes cost up to a microsecond a byte on
// gitleaks' patterns in a fresh process, so every byte not scanned counts.
const (
	reachBefore   = 128
	reachAfter    = 256
	maxIdentifier = 256
)

// windows are the spans of text around keyword offsets at, merged where they overlap.
func windows(text string, at []int) [][2]int {
	var out [][2]int
	for _, a := range at {
		start := a
		for start > 0 && a-start < maxIdentifier && identifierByte(text[start-1]) {
			start--
		}
		start = max(0, min(start, a-reachBefore))
		end := min(len(text), a+reachAfter)
		for end < len(text) && end-a < 4*reachAfter && !isSpace(text[end]) {
			end++
		}
		if n := len(out); n > 0 && start <= out[n-1][1] {
			out[n-1][1] = max(out[n-1][1], end)
			continue
		}
		out = append(out, [2]int{start, end})
	}
	return out
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' }

func identifierByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-'
}

// findRule appends the findings of rule ru in text[start:end], widening the span while
// a match reaches its end.
func (r *Redactor) findRule(found []Finding, ru *rule, text string, start, end int, marks [][2]int) []Finding {
	for {
		matches := r.matches(ru, text[start:end])
		if n := len(matches); n > 0 && matches[n-1][1] == end-start && end < len(text) {
			end = min(len(text), end+max(reachAfter, end-start))
			continue
		}
		for _, m := range matches {
			for i := range m {
				if m[i] >= 0 {
					m[i] += start
				}
			}
			if s, e, ok := r.secretOf(ru, text, m); ok && !overlaps(marks, s, e) {
				found = append(found, Finding{Rule: ru.id, Start: s, End: e})
			}
		}
		return found
	}
}

// findAnchored appends the findings of a key = value rule that start at the
// identifiers holding the keywords at offsets at: the rule's regex begins with the
// identifier ([\w.-]{0,50}? and a key word, in gitleaks' rules), so no match of it can
// start anywhere else, and a regex anchored at the start stops within the match
// instead of trying every byte.
func (r *Redactor) findAnchored(found []Finding, ru *rule, text string, at []int, marks [][2]int) []Finding {
	reach := 50
	if ru.anchoredKey {
		reach = maxIdentifier
	}
	last := -1
	for _, a := range at {
		start := a
		for start > 0 && a-start < reach && identifierByte(text[start-1]) {
			start--
		}
		if start == last {
			continue
		}
		last = start
		end := min(len(text), a+reachAfter)
		if !ru.anchoredKey && !ru.loose().MatchString(text[start:]) {
			continue
		}
		for {
			m := ru.anchored().FindStringSubmatchIndex(text[start:end])
			if m != nil && m[1] == end-start && end < len(text) {
				end = min(len(text), end+max(reachAfter, end-start))
				continue
			}
			if m == nil {
				break
			}
			for i := range m {
				if m[i] >= 0 {
					m[i] += start
				}
			}
			if s, e, ok := r.secretOf(ru, text, m); ok && !overlaps(marks, s, e) {
				found = append(found, Finding{Rule: ru.id, Start: s, End: e})
			}
			break
		}
	}
	return found
}

// matches are the rule's matches in text. gitleaks' rules take them as FindAll does;
// agmem's own rules go on from the end of a rejected match's key rather than of the
// match, so that in {"a": "password=x"} the value of "a" does not hide the password.
func (r *Redactor) matches(ru *rule, text string) [][]int {
	if ru.secret == nil {
		return ru.re().FindAllStringSubmatchIndex(text, -1)
	}
	var out [][]int
	for at := 0; at < len(text); {
		m := ru.re().FindStringSubmatchIndex(text[at:])
		if m == nil {
			break
		}
		for i := range m {
			if m[i] >= 0 {
				m[i] += at
			}
		}
		next := m[1]
		if _, _, ok := ru.secret(text, m); !ok && len(m) > 3 && m[3] > m[0] {
			next = m[3]
		}
		out = append(out, m)
		at = max(next, m[0]+1)
	}
	return out
}

// secretOf applies a rule's checks to one match, as gitleaks does: pick the secret,
// check its entropy, then the global and the rule's allowlists, then the user's.
func (r *Redactor) secretOf(ru *rule, text string, m []int) (int, int, bool) {
	start, end, ok := m[0], m[1], true
	switch {
	case ru.secret != nil:
		start, end, ok = ru.secret(text, m)
	case ru.secretGroup > 0 && 2*ru.secretGroup < len(m):
		start, end, ok = m[2*ru.secretGroup], m[2*ru.secretGroup+1], m[2*ru.secretGroup] >= 0
	default:
		for g := 2; g < len(m); g += 2 {
			if m[g] >= 0 && m[g+1] > m[g] {
				start, end = m[g], m[g+1]
				break
			}
		}
	}
	if !ok || end <= start {
		return 0, 0, false
	}
	secret, match := text[start:end], text[m[0]:m[1]]
	if ru.entropy > 0 && entropy(secret) <= ru.entropy {
		return 0, 0, false
	}
	line := lineAround(text, m[0], m[1])
	if gitleaksAllow.allows(secret, match, line) {
		return 0, 0, false
	}
	for i := range ru.allow {
		if ru.allow[i].allows(secret, match, line) {
			return 0, 0, false
		}
	}
	for _, re := range r.allow {
		if re.MatchString(secret) {
			return 0, 0, false
		}
	}
	return start, end, true
}

func lineAround(text string, start, end int) string {
	if i := strings.LastIndexByte(text[:start], '\n'); i >= 0 {
		start = i + 1
	} else {
		start = 0
	}
	if i := strings.IndexByte(text[end:], '\n'); i >= 0 {
		end += i
	} else {
		end = len(text)
	}
	return text[start:end]
}

func merge(found []Finding) []Finding {
	if len(found) < 2 {
		return found
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i].Start < found[j].Start })
	out := found[:1]
	for _, f := range found[1:] {
		last := &out[len(out)-1]
		if f.Start < last.End {
			last.End = max(last.End, f.End)
			if generic(last.Rule) && !generic(f.Rule) {
				last.Rule, f.Rule = f.Rule, last.Rule
			}
			if f.Rule != last.Rule && !slices.Contains(last.Also, f.Rule) {
				last.Also = append(last.Also, f.Rule)
			}
			continue
		}
		out = append(out, f)
	}
	return out
}

func headerKey(key string) bool {
	switch strings.ToLower(key) {
	case "authorization", "proxy-authorization", "cookie", "set-cookie":
		return true
	}
	return false
}

// generic says whether a rule finds secrets by their surroundings rather than by
// their shape, and so names them less well than a rule of a known format.
func generic(rule string) bool {
	return rule == RuleAssignment || rule == RuleFlag || rule == "generic-api-key"
}

// Mark is what a secret found by rule becomes.
func Mark(rule string) string { return "[REDACTED:" + rule + "]" }

// Text returns text with every secret replaced by its mark, and how many there were.
func (r *Redactor) Text(text string) (string, int) {
	found := r.Find(text)
	if len(found) == 0 {
		return text, 0
	}
	var b strings.Builder
	b.Grow(len(text))
	at := 0
	for _, f := range found {
		b.WriteString(text[at:f.Start])
		b.WriteString(Mark(f.Rule))
		at = f.End
	}
	b.WriteString(text[at:])
	return b.String(), len(found)
}

// Field redacts a value held under key (a JSON member, a header, an attribute): the
// whole value when the key names a secret and the value is no placeholder, else the
// secrets in it.
func (r *Redactor) Field(key, value string) (string, int) {
	if r.keyRule && SecretKey(key) && !Placeholder(value) {
		return Mark(RuleAssignment), 1
	}
	if headerKey(key) {
		// As a header line, so that the header rule sees its name.
		out, n := r.Text(key + ": " + value)
		return out[len(key)+2:], n
	}
	return r.Text(value)
}
