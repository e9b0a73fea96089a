package redact

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/agmem/agmem/internal/jsonscan"
)

// Pattern is a rule a user adds: a regex whose whole match, or first non-empty
// submatch, is a secret.
type Pattern struct {
	ID    string `json:"id"`
	Regex string `json:"regex"`
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
	r := &Redactor{keyRule: !off[RuleAssignment], rules: make([]*rule, 0, len(builtin())+len(opts.Extra))}
	for _, ru := range builtin() {
		if !off[ru.id] {
			r.rules = append(r.rules, ru)
		}
	}
	for _, p := range opts.Extra {
		if err := CheckRuleID(p.ID); err != nil {
			return nil, fmt.Errorf("redact: pattern %q: %w", p.Regex, err)
		}
		re, err := regexp.Compile(p.Regex)
		if err != nil {
			return nil, fmt.Errorf("redact: pattern %q: %w", p.ID, err)
		}
		r.rules = append(r.rules, compiledRule(p.ID, re))
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

// CheckRuleID refuses an id that a mark could not carry whole: 1 to 64 of a-z, 0-9,
// ".", "_" and "-", starting with a letter or a digit.
func CheckRuleID(id string) error {
	if id == "" || ruleIDLen(id) != len(id) {
		return fmt.Errorf("rule id %q is not 1 to 64 of a-z, 0-9, \".\", \"_\" and \"-\"", id)
	}
	return nil
}

// Default is the redactor of the built-in rules.
var Default = sync.OnceValue(func() *Redactor {
	r, _ := New(Options{})
	return r
})

// builtin is agmem's rules and gitleaks', each id once. The rules live for the
// process, compiled on first use. gitleaks' stay where the generated file put them:
// they are static data, and a write to each would copy every page of it.
var builtin = sync.OnceValue(func() []*rule {
	own := ownRules()
	rules := make([]*rule, 0, len(own)+len(gitleaksRules))
	rules = append(rules, own...)
	for i := range gitleaksRules {
		r := &gitleaksRules[i]
		if !slices.ContainsFunc(own, func(o *rule) bool { return o.id == r.id }) {
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
		if !slices.Contains(ids, r.id) { // agmem's secret-flag is several rules
			ids = append(ids, r.id)
		}
	}
	return ids
}

// Find returns the secrets in text, in order, none overlapping: overlapping findings
// become one, named by the most specific rule among them (github-pat rather than
// secret-assignment). Text that holds JSON's escapes (JSON written into a string, as a
// log or a command prints it: {\"password\":\"…\"}, https:\/\/user:pw@, ghp\u005f…) is
// searched around them as it reads with them written as their characters too, and each
// secret found so is where the escapes that spell it are.
func (r *Redactor) Find(text string) []Finding { return r.findEscaped(text, 0) }

// maxUnescaped is how many times over Find reads escapes written as their characters:
// JSON in a string in JSON in a string, as a log of a log holds it.
const maxUnescaped = 3

func (r *Redactor) findEscaped(text string, depth int) []Finding {
	found := r.find(text, true)
	if depth == maxUnescaped {
		return found
	}
	more := false
	for _, w := range escapeWindows(text) {
		span := text[w[0]:w[1]]
		plain, at := jsonscan.AppendTextAt(make([]byte, 0, len(span)), []byte(span),
			make([]jsonscan.Escape, 0, strings.Count(span, `\`)))
		for _, f := range r.findEscaped(string(plain), depth+1) {
			f.Start, f.End = w[0]+escapedStart(at, f.Start), w[0]+escapedEnd(at, f.End)
			found, more = append(found, f), true
		}
	}
	if !more {
		return found
	}
	return merge(found)
}

// escapeReach is how far around an escape that hides what a rule reads Find reads the
// text again: reading all of a source file again for the one \u00e9 in it would cost
// as much as the first reading.
const escapeReach = 1024

// escapeWindows are the spans of text around each escape that hides what a rule reads,
// as JSON in a string holds them: a member's name in escaped quotes (\"password\":), a
// slash escaped (https:\/\/), a character by its code (Go's \u0026 for &), merged where
// they overlap. A span ends at a white space past escapeReach, as a keyword's window
// does: a value in JSON is not cut short. A quote escaped alone, as source code is full
// of, starts none.
func escapeWindows(text string) [][2]int {
	var spans [][2]int
	for i := strings.IndexByte(text, '\\'); i >= 0 && i+2 < len(text); {
		if c := text[i+1]; c == '/' || c == 'u' || c == '"' && colonNext(text[i+2:]) {
			spans = around(spans, text, i)
		}
		j := strings.IndexByte(text[i+2:], '\\')
		if j < 0 {
			break
		}
		i += 2 + j
	}
	return spans
}

// colonNext reports whether text starts with a colon after spaces or tabs, as a
// member's name is followed ("password" : as some formatters write it).
func colonNext(text string) bool {
	t := strings.TrimLeft(text, " \t")
	return t != "" && t[0] == ':'
}

// around adds to spans (in order, merged) the span around the escape at i. What is
// looked for its white space is only what lies past the last span's end, so that each
// byte is looked at once, however many escapes a text without white space holds.
func around(spans [][2]int, text string, i int) [][2]int {
	start, end := boundary(text, max(0, i-escapeReach)), min(len(text), i+escapeReach)
	n := len(spans)
	if n > 0 {
		if end <= spans[n-1][1] {
			return spans // within the last span already
		}
		end = max(end, spans[n-1][1])
	}
	for end < len(text) && !isSpace(text[end]) {
		end++
	}
	if n > 0 && start <= spans[n-1][1] {
		spans[n-1][1] = end
		return spans
	}
	return append(spans, [2]int{start, end})
}

// escapedStart is where in the escaped text the character at offset i of its plain
// text (jsonscan.AppendTextAt's, which said where each escape was) starts; escapedEnd
// where the one before offset i ends.
func escapedStart(at []jsonscan.Escape, i int) int {
	k := sort.Search(len(at), func(k int) bool { return at[k].Text > i }) - 1
	switch {
	case k < 0:
		return i
	case i < at[k].TextEnd:
		return at[k].Src
	}
	return at[k].SrcEnd + i - at[k].TextEnd
}

func escapedEnd(at []jsonscan.Escape, i int) int {
	k := sort.Search(len(at), func(k int) bool { return at[k].Text >= i }) - 1
	switch {
	case k < 0:
		return i
	case i <= at[k].TextEnd:
		return at[k].SrcEnd
	}
	return at[k].SrcEnd + i - at[k].TextEnd
}

// find is Find; atKeywords false has every rule's regex search the whole of each window
// around its keywords, as Find did before rules whose matches start at a keyword ran
// only there: what Find must still find, for the tests.
func (r *Redactor) find(text string, atKeywords bool) []Finding {
	if len(text) < 8 {
		return nil
	}
	r.once.Do(func() { r.pf = newPrefilter(r.rules) })
	var found []Finding
	marks := markSpans(text)
	for _, h := range r.pf.rules(text, r.rules) {
		ru := r.rules[h.rule]
		var starts []int
		if atKeywords && ru.matchesStartAtKeyword() {
			starts = h.at
		}
		if h.whole {
			found = r.findRule(found, ru, text, 0, len(text), starts, marks)
			continue
		}
		for _, w := range windows(text, h.at) {
			found = r.findRule(found, ru, text, w[0], w[1], starts, marks)
		}
		found = r.findAnchored(found, ru, text, h.anchors, marks)
	}
	return merge(found)
}

// markSpans are the marks of an earlier redaction in text: what they cover is no
// secret, so that redacting twice changes nothing. Only a whole mark counts: a
// "[REDACTED:" that input wrote without a rule id and a "]" hides nothing.
func markSpans(text string) [][2]int {
	var spans [][2]int
	for at := 0; ; {
		i := strings.Index(text[at:], markPrefix)
		if i < 0 {
			return spans
		}
		start := at + i
		at = start + len(markPrefix)
		if n := ruleIDLen(text[at:]); n > 0 && at+n < len(text) && text[at+n] == ']' {
			at += n + 1
			spans = append(spans, [2]int{start, at})
		}
	}
}

const markPrefix = "[REDACTED:"

// MarkRules are the rules of the marks in text, one a mark, in order: what redaction hid
// there, as an audit counts it.
func MarkRules(text string) []string {
	var rules []string
	for _, m := range markSpans(text) {
		rules = append(rules, text[m[0]+len(markPrefix):m[1]-1])
	}
	return rules
}

// Uncut is text that its caller cut short, less the start of a mark the cut went
// through ("… --token [REDAC"): half a mark says nothing, and looks like a fault.
func Uncut(text string) string {
	i := strings.LastIndexByte(text, '[')
	if i < 0 {
		return text
	}
	tail := text[i:]
	// The start of the prefix, or the prefix and the start of a rule id (markSpans's).
	rule, ok := strings.CutPrefix(tail, markPrefix)
	if strings.HasPrefix(markPrefix, tail) || ok && ruleIDLen(rule) == len(rule) {
		return strings.TrimRight(text[:i], " ")
	}
	return text
}

// ruleIDLen is the length of the rule id s starts with: 1 to 64 of a-z, 0-9, ".", "_"
// and "-", starting with a letter or digit; 0 if none.
func ruleIDLen(s string) int {
	n := 0
	for n < len(s) && n < 64 {
		c := s[n]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || n > 0 && (c == '.' || c == '_' || c == '-')) {
			break
		}
		n++
	}
	return n
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
		end := windowEnd(text, a)
		if n := len(out); n > 0 && start <= out[n-1][1] {
			out[n-1][1] = max(out[n-1][1], end)
			continue
		}
		out = append(out, [2]int{start, end})
	}
	return out
}

// windowEnd is where a window around the keyword at a ends: past reachAfter, at the
// end of the keyword's line (no quoted value crosses a line) and of the word there.
func windowEnd(text string, a int) int {
	end := min(len(text), a+reachAfter)
	if nl := strings.IndexByte(text[a:], '\n'); nl > end-a {
		end = a + nl
	} else if nl < 0 {
		end = len(text)
	}
	for end < len(text) && !isSpace(text[end]) {
		end++
	}
	return end
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' }

func identifierByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-'
}

// findRule appends the findings of rule ru in text[start:end], widening the span while
// a match reaches its end. starts, if not nil, are the offsets of the rule's keywords,
// at which alone its matches can start: the regex runs only there.
func (r *Redactor) findRule(found []Finding, ru *rule, text string, start, end int, starts []int, marks [][2]int) []Finding {
	if !ru.mayMatch(text[start:end]) {
		return found
	}
	for {
		var matches [][]int
		if starts != nil {
			matches = ru.matchesFrom(text, start, end, starts)
		} else {
			matches = r.matches(ru, text[start:end])
			for _, m := range matches {
				shift(m, start)
			}
		}
		if n := len(matches); n > 0 && matches[n-1][1] == end && end < len(text) {
			end = min(len(text), end+max(reachAfter, end-start))
			continue
		}
		for _, m := range matches {
			if s, e, ok := r.secretOf(ru, text, m); ok && !overlaps(marks, s, e) {
				found = append(found, Finding{Rule: ru.id, Start: s, End: e})
			}
		}
		return found
	}
}

// matchesFrom are the matches of a rule whose matches start at its keywords in
// text[start:end], as FindAll finds them, from the keywords' offsets starts (ascending).
func (ru *rule) matchesFrom(text string, start, end int, starts []int) [][]int {
	var out [][]int
	from := start
	for _, q := range starts {
		if q >= end {
			break
		}
		if q < from {
			continue
		}
		if m := ru.matchAt(text, start, q, end); m != nil {
			out = append(out, m)
			from = m[1]
		}
	}
	return out
}

// shift adds offset to the submatch indexes m, of a match in a text that starts at
// offset, and returns m.
func shift(m []int, offset int) []int {
	for i := range m {
		if m[i] >= 0 {
			m[i] += offset
		}
	}
	return m
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
		end := windowEnd(text, a)
		if !ru.mayStart(text[start:]) || !ru.mayMatch(text[start:end]) || !ru.anchoredKey && !ru.loose().MatchString(text[start:]) {
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
			if s, e, ok := r.secretOf(ru, text, shift(m, start)); ok && !overlaps(marks, s, e) {
				found = append(found, Finding{Rule: ru.id, Start: s, End: e})
			}
			break
		}
	}
	return found
}

// matches are the rule's matches in text. gitleaks' rules take them as FindAll does;
// agmem's own rules go on from the end of a rejected match's key rather than of the
// match, so that in {"a": "password=x"} the value of "a" does not hide the password,
// and give only the matches their secret function accepts.
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
		_, _, ok := ru.secret(text, m)
		if !ok && len(m) > 3 && m[3] > m[0] {
			next = m[3]
		}
		// A rejected match is dropped here rather than judged again by secretOf,
		// unless it reaches the end, where findRule may widen the window for it.
		if ok || m[1] == len(text) {
			out = append(out, m)
		}
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
	if ru.gitleaks && gitleaksAllow.allows(secret, match, line) {
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
func Mark(rule string) string { return markPrefix + rule + "]" }

// Text returns text with every secret replaced by its mark, and how many there were.
func (r *Redactor) Text(text string) (string, int) {
	return replace(text, r.Find(text), len(text))
}

// Field redacts a value held under key (a JSON member, a header, an attribute): the
// whole value when the key names a secret and the value is no placeholder, else the
// secrets in it. The secrets found are added to seen (nil for none).
func (r *Redactor) Field(key, value string, seen *Seen) (string, int) {
	if r.wholeValue(key, value) {
		seen.add(value, RuleAssignment)
		return Mark(RuleAssignment), 1
	}
	return seen.replace(value, r.findField(key, value), len(value))
}

// Cut is Field for a value longer than limit: it keeps at most limit bytes of value,
// cut at a character boundary, and a secret that starts before the cut is replaced
// whole, wherever it ends, so that none is left half in the text. Secrets are looked
// for a little past the cut, for the ones that straddle it.
func (r *Redactor) Cut(key, value string, limit int, seen *Seen) (string, int) {
	if r.wholeValue(key, value) {
		seen.add(value, RuleAssignment)
		return Mark(RuleAssignment), 1
	}
	limit = boundary(value, limit)
	return seen.replace(value, r.findField(key, value[:boundary(value, limit+cutReach)]), limit)
}

// Seen are the secrets Field and Cut found in the values of one entry, for Again to
// hide wherever the entry repeats them: a secret a rule found once (a password given
// in a command) is hidden where no rule would find it (the command's output). A secret
// shorter than minSeen is hidden only where a rule finds it: a short value is too
// likely to be other words too. The zero Seen is empty; a nil one sees nothing.
type Seen struct {
	marks map[string]string // the mark of each secret, by its text and by its text in a JSON string
	// byHead lists the secrets by their first minSeen bytes, longest first: where a text
	// may hold one is found by looking for each head (eachStart).
	byHead map[string][]string
}

// minSeen is the shortest secret Seen hides wherever it is repeated, and minCutSeen
// the shortest start of one that AgainCut hides at the end of a value cut short.
const (
	minSeen    = 6
	minCutSeen = 3
)

// Any says whether any secret was seen.
func (s *Seen) Any() bool { return s != nil && len(s.marks) > 0 }

func (s *Seen) add(secret, rule string) {
	if s == nil || len(secret) < minSeen || strings.Contains(secret, markPrefix) {
		return
	}
	mark := Mark(rule)
	s.addText(secret, mark)
	// A container kept as its JSON text (too large, or too deep) holds it escaped.
	if q := jsonscan.AppendString(nil, secret, false); len(q) != len(secret)+2 {
		s.addText(string(q[1:len(q)-1]), mark)
	}
	// A credential given as user:password (curl -u) may be printed as the password.
	if _, password, ok := strings.Cut(secret, ":"); ok && len(password) >= minSeen {
		s.add(password, rule)
	}
	// One found in JSON written in a string (Find) may be printed as it reads.
	if strings.IndexByte(secret, '\\') >= 0 {
		if plain := string(jsonscan.AppendText(nil, []byte(secret))); plain != secret {
			s.add(plain, rule)
		}
	}
}

func (s *Seen) addText(secret, mark string) {
	if _, ok := s.marks[secret]; ok {
		return
	}
	if s.marks == nil {
		s.marks, s.byHead = map[string]string{}, map[string][]string{}
	}
	s.marks[secret] = mark
	head := secret[:minSeen]
	s.byHead[head] = append(s.byHead[head], secret)
	slices.SortFunc(s.byHead[head], func(a, b string) int { return cmp.Or(cmp.Compare(len(b), len(a)), strings.Compare(a, b)) })
}

// Again hides in text the secrets seen, but within a mark, and counts them: a second
// pass over an entry's values, once Field and Cut have seen them all. Secrets that
// overlap where text holds them are hidden together, under one mark.
func (s *Seen) Again(text string) (string, int) {
	if !s.Any() || len(text) < minSeen {
		return text, 0
	}
	var spans [][2]int // of secrets, in order, overlapping ones merged
	var marks []string // of each span: its longest secret's
	s.eachStart(text, func(i int) {
		for _, secret := range s.byHead[text[i:i+minSeen]] {
			if !strings.HasPrefix(text[i:], secret) {
				continue
			}
			end := i + len(secret)
			if n := len(spans); n > 0 && i < spans[n-1][1] {
				spans[n-1][1] = max(spans[n-1][1], end)
			} else {
				spans, marks = append(spans, [2]int{i, end}), append(marks, s.marks[secret])
			}
			break // the longest at i; a shorter one ends inside it
		}
	})
	if len(spans) == 0 {
		return text, 0
	}
	inMarks := markSpans(text)
	var b strings.Builder
	at, n := 0, 0
	for k, sp := range spans {
		if overlaps(inMarks, sp[0], sp[1]) {
			continue
		}
		b.WriteString(text[at:sp[0]])
		b.WriteString(marks[k])
		at, n = sp[1], n+1
	}
	if n == 0 {
		return text, 0
	}
	b.WriteString(text[at:])
	return b.String(), n
}

// manyHeads is how many heads of secrets make eachStart look at every offset of a text,
// rather than for each head with strings.Index (about a gigabyte a second): a lookup
// a byte, about 9 ms for a MiB, pays only for this many.
const manyHeads = 64

// eachStart calls fn, in order, with each offset of text where a secret seen may start:
// where one of their heads is, or, past manyHeads heads, every offset.
func (s *Seen) eachStart(text string, fn func(i int)) {
	if len(s.byHead) > manyHeads {
		for i := 0; i+minSeen <= len(text); i++ {
			fn(i)
		}
		return
	}
	var at []int
	for head := range s.byHead {
		for from := 0; ; {
			j := strings.Index(text[from:], head)
			if j < 0 {
				break
			}
			at, from = append(at, from+j), from+j+1
		}
	}
	slices.Sort(at)
	for _, i := range slices.Compact(at) {
		fn(i)
	}
}

// AgainCut is Again for a value cut short at its end, which may end with the start of
// a secret seen (at least minCutSeen bytes of it): the longest such start is hidden
// too, as Cut hides a secret a rule finds across its cut.
func (s *Seen) AgainCut(text string) (string, int) {
	if !s.Any() {
		return text, 0
	}
	text, n := s.Again(text)
	inMarks := markSpans(text)
	best, of := 0, "" // the longest start, and of which secret (the first in order, of those)
	for secret := range s.marks {
		for p := min(len(secret)-1, len(text)); p >= max(best, minCutSeen); p-- {
			if strings.HasSuffix(text, secret[:p]) && !overlaps(inMarks, len(text)-p, len(text)) {
				if p > best || secret < of {
					best, of = p, secret
				}
				break
			}
		}
	}
	if best == 0 {
		return text, n
	}
	return text[:len(text)-best] + s.marks[of], n + 1
}

// replace is the package's replace, adding the secrets found to s: those past the
// limit too, which Cut found and another value may hold whole.
func (s *Seen) replace(text string, found []Finding, limit int) (string, int) {
	for _, f := range found {
		s.add(text[f.Start:f.End], f.Rule)
	}
	return replace(text, found, limit)
}

// cutReach is how far past a cut Cut looks for a secret that straddles it.
const cutReach = 4096

// boundary is n, or less, at a character boundary of s, and at most len(s).
func boundary(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

// wholeValue says whether a value is a secret by its key alone.
func (r *Redactor) wholeValue(key, value string) bool {
	if !r.keyRule || !SecretKey(key) || Placeholder(value) {
		return false
	}
	for _, re := range r.allow {
		if re.MatchString(value) {
			return false
		}
	}
	return true
}

// findField finds the secrets of a value held under key; the value of a header is
// searched as a header line, so that the header rule sees its name.
func (r *Redactor) findField(key, value string) []Finding {
	if !headerKey(key) {
		return r.Find(value)
	}
	prefix := len(key) + 2
	var out []Finding
	for _, f := range r.Find(key + ": " + value) {
		if f.End > prefix {
			f.Start, f.End = max(0, f.Start-prefix), f.End-prefix
			out = append(out, f)
		}
	}
	return out
}

// replace writes text up to limit with each finding replaced by its mark, and counts
// them; a finding that starts before limit is replaced whole.
func replace(text string, found []Finding, limit int) (string, int) {
	if len(found) == 0 && limit >= len(text) {
		return text, 0
	}
	var b strings.Builder
	at, n := 0, 0
	for _, f := range found {
		if f.Start >= limit {
			break
		}
		b.WriteString(text[at:f.Start])
		b.WriteString(Mark(f.Rule))
		at, n = f.End, n+1
	}
	if at < limit {
		b.WriteString(text[at:limit])
	}
	return b.String(), n
}
