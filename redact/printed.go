package redact

import (
	"path"
	"strings"
)

// PrintedSecret is the name of a secret a shell command prints, or "": the output of
// "echo $DB_PASSWORD", "printenv API_TOKEN" or "aws configure get
// aws_secret_access_key" is a secret's value alone, which no rule can tell from any
// other word. Any step of a list or a pipeline counts ("source .env && echo $API_KEY",
// "echo $TOKEN | base64"), and so does a step run through a shell ("bash -lc …").
// The command is read as words, quotes not parsed: a command read wrongly hides more of
// its output, never less.
func PrintedSecret(command string) string {
	for _, step := range strings.FieldsFunc(command, stepSeparator) {
		if name := printedBy(strings.Fields(step)); name != "" {
			return name
		}
	}
	return ""
}

// stepSeparator says whether c ends a step of a shell command: a list's ";", "&&",
// "||" and "&", a pipeline's "|", a line's end, a subshell's parentheses, and a
// backquote or "$(" substitution's.
func stepSeparator(c rune) bool {
	switch c {
	case ';', '&', '|', '\n', '(', ')', '`':
		return true
	}
	return false
}

// credentialCommands print a credential of their own (a token, a password), whatever
// names it: the first words of each, as typed.
var credentialCommands = [][]string{
	{"gcloud", "auth", "print-access-token"},
	{"gcloud", "auth", "print-identity-token"},
	{"gcloud", "auth", "application-default", "print-access-token"},
	{"gh", "auth", "token"},
	{"heroku", "auth:token"},
	{"op", "read"},
	{"pass", "show"},
	{"security", "find-generic-password"},
	{"security", "find-internet-password"},
	{"aws", "ecr", "get-login-password"},
	{"az", "account", "get-access-token"},
	{"doctl", "auth", "token"},
}

// printedBy is the name of a secret the step of a command of words prints, or "". The
// command a step runs is looked for in each of its words, not only its first: it may
// come after variables set for it, "sudo -u app", "env -i" or a shell's "-c".
func printedBy(words []string) string {
	for i := range words {
		if name := printedFrom(words[i:]); name != "" {
			return name
		}
	}
	return ""
}

// printedFrom is printedBy of a command that starts with words[0].
func printedFrom(words []string) string {
	command := path.Base(strings.Trim(words[0], `"'`))
	switch command {
	case "echo", "printf", "print":
		for _, w := range words[1:] {
			if name := secretExpansion(w); name != "" {
				return name
			}
		}
	case "printenv":
		for _, w := range words[1:] {
			if SecretKey(w) {
				return w
			}
		}
	case "aws": // aws configure get aws_secret_access_key
		if len(words) > 3 && words[1] == "configure" && words[2] == "get" && SecretKey(words[3]) {
			return words[3]
		}
	case "git": // git config --get credential.token
		if len(words) > 2 && words[1] == "config" {
			for _, w := range words[2:] {
				if !strings.HasPrefix(w, "-") && SecretKey(w) {
					return w
				}
			}
		}
	}
	for _, c := range credentialCommands {
		if command == c[0] && len(words) >= len(c) && equalWords(words[1:len(c)], c[1:]) {
			return strings.Join(c, " ")
		}
	}
	return ""
}

func equalWords(a, b []string) bool {
	for i := range b {
		if strings.Trim(a[i], `"'`) != b[i] {
			return false
		}
	}
	return true
}

// secretExpansion is the name of a variable word expands that names a secret, or "":
// "$API_KEY", "${DB_PASSWORD}", "\"token: $TOKEN\"", "${SECRET:-none}".
func secretExpansion(word string) string {
	for i := strings.IndexByte(word, '$'); i >= 0; {
		rest := strings.TrimPrefix(word[i+1:], "{")
		n := 0
		for n < len(rest) && (rest[n] == '_' || 'a' <= rest[n]|0x20 && rest[n]|0x20 <= 'z' || n > 0 && '0' <= rest[n] && rest[n] <= '9') {
			n++
		}
		if name := rest[:n]; n > 0 && SecretKey(name) {
			return name
		}
		j := strings.IndexByte(rest, '$')
		if j < 0 {
			break
		}
		i = len(word) - len(rest) + j
	}
	return ""
}
