package redact

import (
	"math"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// rule is one way to find a secret, in gitleaks' terms: a regex, the keywords without
// which it cannot match, an entropy floor and allowlists for what it wrongly finds.
type rule struct {
	id          string
	regex       string
	keywords    []string // lower case; the rule runs only on text that holds one
	entropy     float64  // a secret must be more random than this, in bits per character
	secretGroup int      // the submatch that is the secret; 0: the first non-empty one
	allow       []allowlist
	// secret, for agmem's own rules, picks the secret out of a match (submatch indexes)
	// or rejects the match; gitleaks' rules use secretGroup.
	secret func(text string, m []int) (start, end int, ok bool)
	// keyed says that every match holds one of the keywords, within reach of the
	// window around it (agmem's own rules); for gitleaks' rules, a keyword written
	// literally in the regex is taken to be in the match.
	keyed bool
	// anchoredKey says that every match starts at the identifier holding a keyword,
	// however long (agmem's key = value rules).
	anchoredKey bool
	// gitleaks marks gitleaks' rules, to which gitleaks' global allowlist applies; the
	// generated file sets it.
	gitleaks bool

	once       sync.Once
	compiled   *regexp.Regexp
	anchorOnce sync.Once
	looseOnce  sync.Once
	anchoredRe *regexp.Regexp
	looseRe    *regexp.Regexp
	afterOnce  sync.Once
	afterRe    *regexp.Regexp
	// What the regex promises of every match, read from it once: the literals it
	// holds, how it begins, and whether it starts where one of the keywords does.
	parseOnce       sync.Once
	need            []literal
	lead            lead
	startsAtKeyword bool
}

// literal is a string that every match of a rule's regex holds, in lower case when the
// regex ignores its case.
type literal struct {
	s    string
	fold bool
}

// mayMatch says whether text holds every literal the rule's regex needs: a text that
// does not cannot match, and costs no regex. It spares the windows around a keyword in
// a rule's value (gitleaks' lob-api-key wakes at "test_") that lack the key ("lob"),
// and the links without an "@" around the "://" that wakes url-credentials.
func (r *rule) mayMatch(text string) bool {
	r.parse()
	for _, l := range r.need {
		if !l.fold && !strings.Contains(text, l.s) || l.fold && indexFold(text, l.s) < 0 {
			return false
		}
	}
	return true
}

func (r *rule) parse() {
	r.parseOnce.Do(func() {
		tree, err := syntax.Parse(r.regex, syntax.Perl)
		if err != nil {
			return
		}
		r.need = needed(tree, nil)
		r.lead = leadOf(tree)
		// agmem's own rules go on from a rejected match's key (see matches), not
		// from the next keyword.
		r.startsAtKeyword = r.secret == nil && startsAtKeyword(tree, r.keywords)
	})
}

// needed appends to out the literals that every match of re holds, however short: a
// single "@" spares url-credentials the windows around the "://" of Go source's links.
// A literal whose case is ignored counts only when all its letters fold within
// ASCII: (?i)k also matches the Kelvin sign, which a check in ASCII would miss.
func needed(re *syntax.Regexp, out []literal) []literal {
	switch re.Op {
	case syntax.OpLiteral:
		l := literal{s: string(re.Rune), fold: re.Flags&syntax.FoldCase != 0}
		// U+FFFD in a regex also matches bytes that are not UTF-8.
		if l.s != "" && (!l.fold || asciiFold(l.s)) && !strings.ContainsRune(l.s, utf8.RuneError) {
			if l.fold {
				l.s = strings.ToLower(l.s)
			}
			out = append(out, l)
		}
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			out = needed(sub, out)
		}
	case syntax.OpCapture, syntax.OpPlus:
		out = needed(re.Sub[0], out)
	case syntax.OpRepeat:
		if re.Min > 0 {
			out = needed(re.Sub[0], out)
		}
	}
	return out
}

// mayStart says whether a match of the rule's regex may start at the start of text, as
// far as the way every match begins tells.
func (r *rule) mayStart(text string) bool {
	r.parse()
	return r.lead.allows(text)
}

// lead is how every match of a regex begins: a run of characters of one set, then one
// of another set that the run cannot hold. In the key = value rules the run is the key
// and what may follow it up to the operator, the other set the operator's first
// characters: an identifier in Go source that holds "key" or "token" is seldom followed
// by one, and a look at a few bytes spares running the regex there.
type lead struct {
	known     bool
	run, next asciiSet
}

// allows says whether the first character of text past the run is one of next. A byte
// outside ASCII ends the look, allowing the text: it may start a character that folds
// to one of either set ((?i)k also matches the Kelvin sign).
func (l *lead) allows(text string) bool {
	if !l.known {
		return true
	}
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case c >= utf8.RuneSelf:
			return true
		case !l.run.has(c):
			return l.next.has(c)
		}
	}
	return false
}

// leadOf finds how every match of re begins: the longest start of the concatenation re
// whose characters are none of those that the rest of it must begin with.
func leadOf(re *syntax.Regexp) lead {
	var l lead
	if re.Op != syntax.OpConcat {
		return l
	}
	var run asciiSet
	for k, sub := range re.Sub {
		var next asciiSet
		rest := &syntax.Regexp{Op: syntax.OpConcat, Sub: re.Sub[k:]}
		if !first(rest, &next) && run[0]&next[0] == 0 && run[1]&next[1] == 0 {
			l = lead{known: true, run: run, next: next}
		}
		chars(sub, &run)
	}
	return l
}

// first adds to s the ASCII characters a match of re may begin with, and says whether
// the match may be empty.
func first(re *syntax.Regexp, s *asciiSet) (mayBeEmpty bool) {
	switch re.Op {
	case syntax.OpLiteral:
		if len(re.Rune) == 0 {
			return true
		}
		s.addFold(re.Rune[0], re.Flags)
		return false
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		chars(re, s)
		return false
	case syntax.OpNoMatch:
		return false
	case syntax.OpCapture, syntax.OpPlus:
		return first(re.Sub[0], s)
	case syntax.OpStar, syntax.OpQuest:
		first(re.Sub[0], s)
		return true
	case syntax.OpRepeat:
		return first(re.Sub[0], s) || re.Min == 0
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if !first(sub, s) {
				return false
			}
		}
		return true
	case syntax.OpAlternate:
		mayBeEmpty := false
		for _, sub := range re.Sub {
			mayBeEmpty = first(sub, s) || mayBeEmpty
		}
		return mayBeEmpty
	}
	return true // an empty match, or an assertion: ^, $, \b
}

// chars adds to s the ASCII characters a match of re may hold.
func chars(re *syntax.Regexp, s *asciiSet) {
	switch re.Op {
	case syntax.OpLiteral:
		for _, c := range re.Rune {
			s.addFold(c, re.Flags)
		}
	case syntax.OpCharClass:
		for i := 0; i < len(re.Rune); i += 2 {
			for c := re.Rune[i]; c <= min(re.Rune[i+1], utf8.RuneSelf-1); c++ {
				s.add(c)
			}
		}
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		*s = asciiSet{^uint64(0), ^uint64(0)}
	}
	for _, sub := range re.Sub {
		chars(sub, s)
	}
}

// asciiSet is a set of ASCII characters, a bit each.
type asciiSet [2]uint64

func (s *asciiSet) add(c rune) {
	if c < utf8.RuneSelf {
		s[c/64] |= 1 << (c % 64)
	}
}

// addFold adds c, and the characters case folding makes it equal to if flags say so.
func (s *asciiSet) addFold(c rune, flags syntax.Flags) {
	s.add(c)
	for f := unicode.SimpleFold(c); flags&syntax.FoldCase != 0 && f != c; f = unicode.SimpleFold(f) {
		s.add(f)
	}
}

// has says whether the ASCII character c is in s.
func (s *asciiSet) has(c byte) bool { return s[c/64]&(1<<(c%64)) != 0 }

// asciiFold says whether every character of s, and every character that case folding
// makes it equal to, is ASCII.
func asciiFold(s string) bool {
	for _, c := range s {
		for f := unicode.SimpleFold(c); ; f = unicode.SimpleFold(f) {
			if f >= utf8.RuneSelf {
				return false
			}
			if f == c {
				break
			}
		}
	}
	return true
}

// indexFold is the offset of the lower-case ASCII kw in s, ignoring ASCII case, or -1.
func indexFold(s, kw string) int {
	for i := 0; i+len(kw) <= len(s); i++ {
		if lower(s[i]) == kw[0] && hasPrefixFold(s[i:], kw) {
			return i
		}
	}
	return -1
}

// matchesStartAtKeyword says whether every match of the rule's regex starts at an
// offset where the prefilter finds one of its keywords. gitleaks' rules of a token's
// own format begin with \b and a literal or an alternation of literals ("hvs\.",
// "s\."): they can run only at the keywords' offsets instead of over windows around
// them, where a keyword as common as "s." makes the regex try every byte.
func (r *rule) matchesStartAtKeyword() bool {
	r.parse()
	return r.startsAtKeyword
}

// startsAtKeyword says whether every match of re starts with one of keywords, ignoring
// ASCII case.
func startsAtKeyword(re *syntax.Regexp, keywords []string) bool {
	heads, _ := prefixes(re)
	for _, h := range heads {
		if !slices.ContainsFunc(keywords, func(kw string) bool { return len(kw) >= 2 && strings.HasPrefix(h, kw) }) {
			return false
		}
	}
	return len(heads) > 0
}

// maxPrefixes bounds the strings prefixes lists: past it they are not lengthened.
const maxPrefixes = 64

// prefixes returns strings one of which every match of re starts with, as the
// prefilter sees text (ASCII letters in lower case), and whether every match is one of
// them exactly. A prefix stops before a character that is not ASCII or that case
// folding may make so: (?i)s also matches "ſ", in which the prefilter finds no "s".
func prefixes(re *syntax.Regexp) ([]string, bool) {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return []string{""}, true
	case syntax.OpLiteral:
		var b []byte
		for _, c := range re.Rune {
			if c >= utf8.RuneSelf || re.Flags&syntax.FoldCase != 0 && !asciiFold(string(c)) {
				return []string{string(b)}, false
			}
			b = append(b, lower(byte(c)))
		}
		return []string{string(b)}, true
	case syntax.OpCharClass:
		var out []string
		for i := 0; i < len(re.Rune); i += 2 {
			for c := re.Rune[i]; c <= re.Rune[i+1]; c++ {
				if c >= utf8.RuneSelf || len(out) == maxPrefixes {
					return []string{""}, false
				}
				if s := string(lower(byte(c))); !slices.Contains(out, s) {
					out = append(out, s)
				}
			}
		}
		return out, true
	case syntax.OpCapture:
		return prefixes(re.Sub[0])
	case syntax.OpQuest:
		out, exact := prefixes(re.Sub[0])
		return append(out, ""), exact
	case syntax.OpPlus:
		out, _ := prefixes(re.Sub[0])
		return out, false
	case syntax.OpRepeat:
		if re.Min == 0 {
			return []string{""}, false
		}
		out, _ := prefixes(re.Sub[0])
		return out, false
	case syntax.OpAlternate:
		var out []string
		exact := true
		for _, sub := range re.Sub {
			p, e := prefixes(sub)
			out, exact = append(out, p...), exact && e
		}
		return out, exact
	case syntax.OpConcat:
		out, exact := []string{""}, true
		for _, sub := range re.Sub {
			p, e := prefixes(sub)
			if len(out)*len(p) > maxPrefixes {
				return out, false
			}
			var next []string
			for _, a := range out {
				for _, b := range p {
					next = append(next, a+b)
				}
			}
			if out, exact = next, e; !exact {
				break
			}
		}
		return out, exact
	}
	return []string{""}, false
}

// matchAt is the match of the rule's regex that a search of text[start:end] finds at
// offset q, or nil. The regex runs anchored at q, after the byte before q as context
// for \b and (?m)^, unless q is start. Keywords are ASCII, so that byte is a whole
// character, or the last byte of one, or one that is not UTF-8: the last two are, as
// every character outside ASCII, neither a word character nor a newline.
func (r *rule) matchAt(text string, start, q, end int) []int {
	if q == start {
		return shift(r.anchored().FindStringSubmatchIndex(text[q:end]), q)
	}
	m := shift(r.after().FindStringSubmatchIndex(text[q-1:end]), q-1)
	if m != nil {
		m[0] = q // the byte of context is not part of the match
	}
	return m
}

// after is the rule's regex matched only after the first character of a text.
func (r *rule) after() *regexp.Regexp {
	r.afterOnce.Do(func() { r.afterRe = regexp.MustCompile(`^(?s:.)(?:` + r.regex + `)`) })
	return r.afterRe
}

// hitKind is how the text around a keyword is scanned for a rule.
type hitKind uint8

const (
	unknownHit hitKind = iota
	wholeHit           // the match may not hold the keyword: scan the whole text
	windowHit          // the match holds the keyword: scan a window around it
	anchorHit          // the keyword is in the key of a key = value rule: match from its identifier
)

// semiGeneric is how gitleaks' key = value rules begin: an identifier that holds one
// of the key's words, then an operator and the value.
const semiGeneric = `(?i)[\w.-]{0,50}?(?:`

// hitKind says how to scan around keyword kw. A match holds kw when the regex spells
// it literally ("hvs\." for "hvs."); a keyword whose metacharacters the regex leaves
// unescaped may be matched by other text ("hooks.slack.com" by "hooksxslackxcom").
func (r *rule) hitKind(kw string) hitKind {
	re := strings.ToLower(r.regex)
	if strings.HasPrefix(r.regex, semiGeneric) {
		// The keyword is in the key, or in the value a few characters after it.
		key := re[len(semiGeneric):]
		if end := closingParen(key); end >= 0 && (strings.Contains(key[:end], kw) || keyedGitleaks(r.id)) {
			return anchorHit
		}
		return windowHit
	}
	if r.anchoredKey {
		return anchorHit
	}
	if strings.Contains(r.regex, ".*") || strings.Contains(r.regex, ".+") {
		return wholeHit // the match may run far from the keyword (curl … -u user:pass)
	}
	if r.keyed || keyedGitleaks(r.id) ||
		strings.Contains(re, regexp.QuoteMeta(kw)) && (kw == regexp.QuoteMeta(kw) || !strings.Contains(re, kw)) {
		return windowHit
	}
	return wholeHit
}

// closingParen is the offset of the parenthesis that closes a group just opened in s.
func closingParen(s string) int {
	depth := 1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return i
			}
		}
	}
	return -1
}

// keyedGitleaks names gitleaks' rules whose matches hold a keyword that the regex does
// not spell out: generic-api-key writes "passw(?:or)?d". TestGitleaksParity checks it.
func keyedGitleaks(id string) bool { return id == "generic-api-key" }

// compiledRule is a rule of a regex already compiled (a user's pattern, checked when
// the redactor was made).
func compiledRule(id string, re *regexp.Regexp) *rule {
	r := &rule{id: id, regex: re.String()}
	r.once.Do(func() { r.compiled = re })
	return r
}

func (r *rule) re() *regexp.Regexp {
	r.once.Do(func() { r.compiled = regexp.MustCompile(r.regex) })
	return r.compiled
}

// anchored is the rule's regex matched only from the start of a text.
func (r *rule) anchored() *regexp.Regexp {
	r.anchorOnce.Do(func() { r.anchoredRe = regexp.MustCompile(`^(?:` + r.regex + `)`) })
	return r.anchoredRe
}

// loose is anchored with every bounded repetition past 8 left unbounded: it matches
// wherever anchored does, and compiles five times faster (gitleaks' key = value
// regexes repeat [\w.-]{0,50}? and [\w.=-]{10,150}, each copy an instruction), so a
// text it does not match costs no compilation of the exact regex.
func (r *rule) loose() *regexp.Regexp {
	r.looseOnce.Do(func() {
		tree, err := syntax.Parse(`^(?:`+r.regex+`)`, syntax.Perl)
		if err != nil {
			panic(err) // the generated rules are valid regexes: a test compiles each
		}
		r.looseRe = regexp.MustCompile(unbound(tree).String())
	})
	return r.looseRe
}

func unbound(re *syntax.Regexp) *syntax.Regexp {
	if re.Op == syntax.OpRepeat && re.Max > 8 {
		re.Max = -1
	}
	for _, sub := range re.Sub {
		unbound(sub)
	}
	return re
}

// allowlist says which findings of a rule are not secrets, as gitleaks' [[allowlists]]
// do: a finding is allowed when its target matches a regex or its secret holds a
// stopword (both, when and is set).
type allowlist struct {
	and       bool
	target    string // "secret" (""), "match" or "line"
	regexes   []string
	stopwords []string // lower case

	once     sync.Once
	compiled []func() *regexp.Regexp
}

func (a *allowlist) allows(secret, match, line string) bool {
	target := secret
	switch a.target {
	case "match":
		target = match
	case "line":
		target = line
	}
	var checks []bool
	if len(a.regexes) > 0 {
		checks = append(checks, a.regexAllows(target))
	}
	if len(a.stopwords) > 0 {
		checks = append(checks, holdsStopword(secret, a.stopwords))
	}
	for _, ok := range checks {
		if ok && !a.and {
			return true
		}
		if !ok && a.and {
			return false
		}
	}
	return a.and && len(checks) > 0
}

func (a *allowlist) regexAllows(s string) bool {
	if s == "" {
		return false
	}
	a.once.Do(func() {
		for _, re := range a.regexes {
			a.compiled = append(a.compiled, sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(re) }))
		}
	})
	for i, re := range a.regexes {
		if c, ok := firstByte(re); ok && s[0] != c {
			continue // cannot match: no need to compile it
		}
		if a.compiled[i]().MatchString(s) {
			return true
		}
	}
	return false
}

// firstByte is the byte every match of re starts with, when re says so plainly: "^",
// then a literal character or an escaped one ("^\$", "^%"). Most of gitleaks' global
// allowlist is of this shape, and compiling all of it costs a quarter millisecond.
func firstByte(re string) (byte, bool) {
	if len(re) < 2 || re[0] != '^' {
		return 0, false
	}
	c := re[1]
	if c == '\\' && len(re) > 2 && strings.IndexByte(`$.{}()[]*+?|^\/`, re[2]) >= 0 {
		return re[2], true
	}
	if strings.IndexByte(`$.{}()[]*+?|^\`, c) >= 0 || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' {
		return 0, false // a metacharacter, or a letter that (?i) may fold
	}
	return c, true
}

func holdsStopword(secret string, stopwords []string) bool {
	s := strings.ToLower(secret)
	for _, w := range stopwords {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// entropy is the Shannon entropy of s in bits per character, as gitleaks measures it.
func entropy(s string) float64 {
	if s == "" {
		return 0
	}
	counts := map[rune]int{}
	for _, c := range s {
		counts[c]++
	}
	var e float64
	inv := 1 / float64(len(s))
	for _, n := range counts {
		f := float64(n) * inv
		e -= f * math.Log2(f)
	}
	return e
}

// Rule ids of agmem's own rules.
const (
	RuleAssignment = "secret-assignment" // a value whose key names a secret
	RuleFlag       = "secret-flag"       // --password VALUE, --token=VALUE, mysql -pVALUE
	RuleAuthHeader = "auth-header"       // Authorization and Cookie headers
	RuleURLCreds   = "url-credentials"   // scheme://user:password@host
	RulePrivateKey = "private-key"       // a PEM private key block, even cut short
)

// ownRules are agmem's rules. They run before gitleaks' and replace gitleaks' rule of
// the same id.
func ownRules() []*rule {
	return []*rule{
		{
			id:    RulePrivateKey,
			keyed: true,
			// A block cut off by truncation is redacted to the end of the text.
			regex:    `(?i)-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----(?s:.*?)(?:-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----|\z)`,
			keywords: []string{"-----begin"},
			secret:   wholeMatch,
		},
		{
			id:       RuleURLCreds,
			keyed:    true,
			regex:    `\b[a-zA-Z][a-zA-Z0-9+.-]{1,20}://[^\s:@/"'<>]*:([^\s@/"'<>]+)@`,
			keywords: []string{"://"},
			secret:   group(1),
		},
		{
			id:       RuleAuthHeader,
			keyed:    true,
			regex:    `(?i)\b(?:(?:proxy-)?authorization|(?:set-)?cookie)["']?[ \t]*[:=][ \t]*["']?(?:(?:bearer|basic|token|digest|negotiate|apikey)[ \t]+)?([^\s"';]{4,}(?:[ \t]*;[ \t]*[^\s"';]+)*)`,
			keywords: []string{"authorization", "cookie"},
			secret:   group(1),
		},
		// A token after "Bearer" without its header's name (what a log or a variable
		// holds of a header): a long word of a token's characters, digits among its
		// letters, random enough.
		{
			id:       RuleAuthHeader,
			keyed:    true,
			regex:    `(?i)\bbearer[ \t]+([a-z0-9._~+/-]{16,}=*)`,
			keywords: []string{"bearer"},
			entropy:  3,
			secret:   tokenLike,
		},
		// A .netrc's password, on the machine's line or a line after it. (Its default
		// entry is left out: "default" is in every switch of source code, and the rule
		// woken at each cost a fifth of redacting it.)
		{
			id:       RuleAssignment,
			keyed:    true,
			regex:    `(?i)\bmachine[ \t]+\S+(?:\s+(?:login|account)[ \t]+\S+)*\s+password[ \t]+` + quotedOrBare,
			keywords: []string{"machine"},
			secret:   firstValue,
		},
		{
			id:          RuleAssignment,
			keyed:       true,
			anchoredKey: true,
			// KEY=VALUE, KEY: VALUE, "KEY": "VALUE", KEY := VALUE, KEY => VALUE.
			regex:    `(?i)([a-z0-9_.-]+)["']?[ \t]*(?::=|=>|\|\|=|=|:)[ \t]*` + quotedOrBare,
			keywords: assignmentKeywords,
			secret:   assignedValue,
		},
		// A value named by the member beside it, in JSON or YAML written as text (what
		// kubectl get -o json or -o yaml prints, a HAR): {"name": "DB_PASSWORD", "value":
		// "…"}, whichever comes first, on one line or on two, and "- name: DB_PASSWORD"
		// over "  value: …". Each is looked for around its first member's name, where
		// its window reaches the other past a long value.
		{
			id:       RuleAssignment,
			keyed:    true,
			regex:    `(?i)"name"\s*:\s*"([a-z0-9_.-]+)"\s*,\s*"value"\s*:\s*` + quotedOrBare,
			keywords: []string{`"name"`},
			secret:   assignedValue,
		},
		{
			id:       RuleAssignment,
			keyed:    true,
			regex:    `(?i)"value"\s*:\s*"((?:[^"\\\n]|\\.)+)"\s*,\s*"name"\s*:\s*"([a-z0-9_.-]+)"`,
			keywords: []string{`"value"`},
			secret:   valueBeforeName,
		},
		{
			id:       RuleAssignment,
			keyed:    true,
			regex:    `(?i)\bname:[ \t]*["']?([a-z0-9_.-]+)["']?[ \t]*\r?\n[ \t]*value:[ \t]*` + quotedOrBare,
			keywords: []string{"name:"},
			secret:   assignedValue,
		},
		{
			id:          RuleFlag,
			keyed:       true,
			anchoredKey: true,
			regex:       `(?i)(?:^|[\s"'])(--?[a-z][a-z0-9_.-]*)(?:[ \t]+|=)` + quotedOrBare,
			keywords:    assignmentKeywords,
			secret:      assignedValue,
		},
		// The flags of command line tools that take a password by a short name, which
		// says nothing of a secret elsewhere: mysql's -pVALUE (written together: -p
		// alone asks for it), sshpass's -p VALUE, redis-cli's -a VALUE; and aws configure
		// set KEY VALUE, whose key names the secret. The tool is the command a step runs
		// (commandStart), so that "find /etc/mysql -print" and "docker run --name mysql
		// -p3306:3306" keep their flags; the flags' case counts (mysql's -P is a port).
		{
			id:       RuleFlag,
			keyed:    true,
			regex:    commandStart + `(?i:mysql(?:dump|admin|import|show|check|pump|sh)?|mariadb(?:-dump|-admin)?)(?:[ \t][^\n;&|]*?)?[ \t]-p(?:"((?:[^"\\\n]|\\.)+)"|'([^'\n]+)'|([^\s"'&,;)\]}<>-][^\s"'&,;)\]}<>]*))`,
			keywords: []string{"mysql", "mariadb"},
			secret:   firstValue,
		},
		{
			id:       RuleFlag,
			keyed:    true,
			regex:    commandStart + `(?i:sshpass)(?:[ \t][^\n;&|]*?)?[ \t]-p[ \t]*` + quotedOrBare,
			keywords: []string{"sshpass"},
			secret:   firstValue,
		},
		{
			id:       RuleFlag,
			keyed:    true,
			regex:    commandStart + `(?i:redis-cli)(?:[ \t][^\n;&|]*?)?[ \t]-a[ \t]+` + quotedOrBare,
			keywords: []string{"redis-cli"},
			secret:   firstValue,
		},
		{
			id:       RuleFlag,
			keyed:    true,
			regex:    `(?i)\bconfigure[ \t]+set[ \t]+([a-z0-9_.-]+)[ \t]+` + quotedOrBare,
			keywords: []string{"configure"},
			secret:   assignedValue,
		},
	}
}

// commandStart is where a step of a shell command starts its command: the text's or a
// line's start, a list's or a pipeline's separator, a quote, a shell's -c, then maybe
// sudo, env, exec, time or nohup with their options, and the command's directory.
const commandStart = `(?:^|[;&|(\n"'` + "`" + `]|\s-[a-z]*c\s)[ \t]*(?:(?:sudo|env|exec|time|nohup)(?:[ \t]+-\S+)*[ \t]+)?(?:[^\s;&|"']*/)?`

// quotedOrBare is a value in double quotes (with escapes), in single quotes, or bare up
// to a space or a delimiter: submatches 2, 3 and 4 of the rules that use it.
const quotedOrBare = `(?:"((?:[^"\\\n]|\\.)+)"|'([^'\n]+)'|([^\s"'&,;)\]}<>]+))`

func wholeMatch(_ string, m []int) (int, int, bool) { return m[0], m[1], true }

func group(n int) func(string, []int) (int, int, bool) {
	return func(_ string, m []int) (int, int, bool) {
		return m[2*n], m[2*n+1], m[2*n] >= 0
	}
}

// firstValue accepts the first submatch that matched, unless it is a placeholder.
func firstValue(text string, m []int) (int, int, bool) {
	for g := 1; 2*g < len(m); g++ {
		if m[2*g] >= 0 {
			s, e := m[2*g], m[2*g+1]
			return s, e, !Placeholder(text[s:e])
		}
	}
	return 0, 0, false
}

// assignedValue accepts KEY=VALUE or --KEY VALUE when KEY names a secret and VALUE is
// not a placeholder.
func assignedValue(text string, m []int) (int, int, bool) {
	if !SecretKey(text[m[2]:m[3]]) {
		return 0, 0, false
	}
	for g := 2; g <= 4; g++ {
		if m[2*g] >= 0 {
			s, e := m[2*g], m[2*g+1]
			return s, e, !Placeholder(text[s:e])
		}
	}
	return 0, 0, false
}

// tokenLike accepts the first submatch where it holds a digit and a letter, as a
// token does and a word (token_is_what_the_server_sends) does not.
func tokenLike(text string, m []int) (int, int, bool) {
	start, end, ok := firstValue(text, m)
	v := text[start:end]
	return start, end, ok && strings.ContainsAny(v, "0123456789") && strings.ContainsFunc(v, unicode.IsLetter)
}

// valueBeforeName accepts a value (submatch 1) whose name comes after it (submatch 2)
// when the name names a secret and the value is not a placeholder.
func valueBeforeName(text string, m []int) (int, int, bool) {
	return m[2], m[3], SecretKey(text[m[4]:m[5]]) && !Placeholder(text[m[2]:m[3]])
}

// secretKeyWords are what a key that names a secret holds, once lower-cased and
// stripped of "-", "_", "." and spaces.
var secretKeyWords = []string{
	"password", "passwd", "passphrase", "secret", "token", "apikey", "accesskey",
	"privatekey", "credential", "authkey", "sessionkey", "signingkey", "encryptionkey",
	"masterkey", "connectionstring", "sshkey", "webhookurl",
}

// assignmentKeywords are in every key SecretKey accepts, as the key is written.
var assignmentKeywords = []string{"pass", "pwd", "secret", "token", "key", "credential", "connection", "webhook", "dsn", "bearer"}

// notSecretKeys are keys that hold a secret word and count or describe something else.
var notSecretKeys = []string{"tokens", "tokencount", "tokentype", "tokenizer", "tokenlimit", "secretname", "secretref"}

// SecretKey says whether a key (a JSON member name, a variable, a header, a flag) names
// a secret: "password", "api_key", "X-Api-Key", "--token", "clientSecret", "DB_PASS",
// "MYSQL_PWD".
func SecretKey(key string) bool {
	k := strings.Map(func(r rune) rune {
		switch r {
		case '-', '_', '.', ' ':
			return -1
		}
		return r
	}, strings.ToLower(key))
	for _, w := range notSecretKeys {
		if strings.Contains(k, w) {
			return false
		}
	}
	for _, w := range secretKeyWords {
		if strings.Contains(k, w) {
			return true
		}
	}
	// "pass", "pwd", "dsn" (a database's, with its password; Sentry's, with its key)
	// and "bearer" name a secret as a word of the key, not inside one ("bypass");
	// "PWD" alone is the shell's working directory.
	words := keyWords(key)
	for _, w := range words {
		if w == "pass" || w == "dsn" || w == "bearer" || w == "pwd" && len(words) > 1 {
			return true
		}
	}
	return false
}

// keyWords splits a key at "-", "_", ".", spaces and lower-to-upper case changes, in
// lower case: "dbPass" and "DB_PASS" are [db pass].
func keyWords(key string) []string {
	var words []string
	start := 0
	for i := 0; i <= len(key); i++ {
		split := i == len(key) || strings.IndexByte("-_. ", key[i]) >= 0
		camel := i > 0 && i < len(key) && 'A' <= key[i] && key[i] <= 'Z' && 'a' <= key[i-1] && key[i-1] <= 'z'
		if !split && !camel {
			continue
		}
		if i > start {
			words = append(words, strings.ToLower(key[start:i]))
		}
		start = i
		if split {
			start = i + 1
		}
	}
	return words
}

var placeholderRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:\$(?:[A-Z_]+|[a-z_]+)|\$\{[A-Za-z_][\w.:-]*\}?|\$\(.*\)|\{\{[ \t]*[\w .()|]+[ \t]*\}\}|%[A-Za-z_]+%|<[A-Za-z][A-Za-z _-]*>|\*+|(?i:x{3,})|\.{3,}|(?i:true|false|null|none|nil|undefined)|\d{1,3}|\[REDACTED:[a-z0-9][a-z0-9._-]*\])$`)
})

// Placeholder says whether a value under a secret's key is no secret: one or two
// characters, a variable reference ($X, ${X}, $(cmd), %X%, {{ x }}), a mask (***, xxx,
// ..., <password>), a boolean or null, a number of three digits at most, or a
// redaction already made.
func Placeholder(v string) bool {
	v = strings.TrimSpace(v)
	return len(v) < 3 || placeholderRe().MatchString(v)
}
