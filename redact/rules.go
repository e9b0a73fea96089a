package redact

import (
	"math"
	"regexp"
	"strings"
	"sync"
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

	once     sync.Once
	compiled *regexp.Regexp
}

// inMatch says whether a match of the rule holds keyword kw, so that scanning the text
// around kw finds it. A keyword with a regex metacharacter may be matched by other
// text ("hooks.slack.com" by "hooksxslackxcom"), so it does not count.
func (r *rule) inMatch(kw string) bool {
	return r.keyed || keyedGitleaks(r.id) ||
		!strings.ContainsAny(kw, `.+*?()[]{}|\^$`) && strings.Contains(strings.ToLower(r.regex), kw)
}

// keyedGitleaks names gitleaks' rules whose matches hold a keyword that the regex does
// not spell out: generic-api-key writes "passw(?:or)?d". TestGitleaksParity checks it.
func keyedGitleaks(id string) bool { return id == "generic-api-key" }

func (r *rule) re() *regexp.Regexp {
	r.once.Do(func() { r.compiled = regexp.MustCompile(r.regex) })
	return r.compiled
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
	compiled []*regexp.Regexp
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
			a.compiled = append(a.compiled, regexp.MustCompile(re))
		}
	})
	for _, re := range a.compiled {
		if re.MatchString(s) {
			return true
		}
	}
	return false
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
	RuleFlag       = "secret-flag"       // --password VALUE, --token=VALUE
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
		{
			id:    RuleAssignment,
			keyed: true,
			// KEY=VALUE, KEY: VALUE, "KEY": "VALUE", KEY := VALUE, KEY => VALUE.
			regex:    `(?i)([a-z0-9_.-]+)["']?[ \t]*(?::=|=>|\|\|=|=|:)[ \t]*` + quotedOrBare,
			keywords: assignmentKeywords,
			secret:   assignedValue,
		},
		{
			id:       RuleFlag,
			keyed:    true,
			regex:    `(?i)(?:^|[\s"'])(--?[a-z][a-z0-9_.-]*)(?:[ \t]+|=)` + quotedOrBare,
			keywords: assignmentKeywords,
			secret:   assignedValue,
		},
	}
}

// quotedOrBare is a value in double quotes (with escapes), in single quotes, or bare up
// to a space or a delimiter: submatches 2, 3 and 4 of the rules that use it.
const quotedOrBare = `(?:"((?:[^"\\\n]|\\.)+)"|'([^'\n]+)'|([^\s"'&,;)\]}<>]+))`

func wholeMatch(_ string, m []int) (int, int, bool) { return m[0], m[1], true }

func group(n int) func(string, []int) (int, int, bool) {
	return func(_ string, m []int) (int, int, bool) {
		return m[2*n], m[2*n+1], m[2*n] >= 0
	}
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

// secretKeyWords are what a key that names a secret holds, once lower-cased and
// stripped of "-", "_", "." and spaces.
var secretKeyWords = []string{
	"password", "passwd", "passphrase", "secret", "token", "apikey", "accesskey",
	"privatekey", "credential", "authkey", "sessionkey", "signingkey", "encryptionkey",
	"masterkey", "connectionstring",
}

// assignmentKeywords are in every key SecretKey accepts, as the key is written.
var assignmentKeywords = []string{"pass", "secret", "token", "key", "credential", "connection"}

// notSecretKeys are keys that hold a secret word and count or describe something else.
var notSecretKeys = []string{"tokens", "tokencount", "tokentype", "tokenizer", "tokenlimit", "secretname", "secretref"}

// SecretKey says whether a key (a JSON member name, a variable, a header, a flag) names
// a secret: "password", "api_key", "X-Api-Key", "--token", "clientSecret".
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
	return false
}

var placeholderRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^(?:\$\{?[\w.:-]*\}?|\$\(.*\)|\{\{.*\}\}|%[\w]+%|<[^>]*>|\*+|x{3,}|\.{3,}|true|false|null|none|nil|undefined|\[REDACTED[^\]]*\]|\d{1,6}|)$`)
})

// Placeholder says whether a value under a secret's key is no secret: empty, a variable
// reference ($X, ${X}, %X%, {{x}}), a mask (***, xxx, <password>), a boolean or null,
// a short number, or a redaction already made.
func Placeholder(v string) bool {
	v = strings.TrimSpace(v)
	return len(v) < 3 || placeholderRe().MatchString(v)
}
