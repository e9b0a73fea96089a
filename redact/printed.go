package redact

import (
	"iter"
	"path"
	"slices"
	"strings"
)

// PrintedSecret is the name of a secret a shell command prints, or "": the output of
// "echo $DB_PASSWORD", "printenv API_TOKEN", "aws configure get
// aws_secret_access_key" or "vault kv get -field=password secret/db" is a secret's
// value alone, which no rule can tell from any other word. Any step of a list or a
// pipeline counts ("source .env && echo $API_KEY", "echo $TOKEN | base64"), and so does
// a step run through a shell ("bash -lc …"), and a program that reads a secret from its
// environment ("python -c 'print(os.environ[\"API_KEY\"])'"). The command is read as
// words, quotes not parsed: a command read wrongly hides more of its output, never less.
func PrintedSecret(command string) string {
	for step, words := range steps(command) {
		if name := printedBy(words); name != "" {
			return name
		}
		if name := readFromEnv(step); name != "" {
			return name
		}
	}
	return ""
}

// steps are the steps of a shell command (stepSeparator's), each with the words of the
// command it runs (commandWords).
func steps(command string) iter.Seq2[string, []string] {
	return func(yield func(string, []string) bool) {
		for _, step := range strings.FieldsFunc(command, stepSeparator) {
			if !yield(step, commandWords(strings.Fields(step))) {
				return
			}
		}
	}
}

// PrintedFile is the glob of a withheld file (withheldBy's answer for a path, "" for
// none) that a shell command prints: "cat ~/.netrc", "head -5 .env", "sort < .env",
// in any step of it, as PrintedSecret reads steps.
func PrintedFile(command string, withheldBy func(path string) string) string {
	for _, words := range steps(command) {
		if len(words) == 0 || !slices.Contains(fileReaders, path.Base(words[0])) {
			continue
		}
		for _, w := range words[1:] {
			if w = strings.Trim(strings.TrimLeft(w, "<"), `"'`); w != "" && w[0] != '-' {
				if glob := withheldBy(w); glob != "" {
					return glob
				}
			}
		}
	}
	return ""
}

// fileReaders are the commands that print what is in the files they are given.
var fileReaders = []string{"cat", "tac", "nl", "head", "tail", "less", "more", "bat", "batcat", "view", "strings",
	"xxd", "od", "hexdump", "base64", "grep", "egrep", "rg", "ag", "awk", "sed", "sort", "uniq", "cut", "column",
	"jq", "yq", "type", "Get-Content", "gc"}

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

// commandWords are a step's words from the command it runs on: past variables set for
// it ("TOKEN=x printenv TOKEN"), the words that run another command ("sudo -u app",
// "env -i", "exec", "time"), a loop's or a condition's ("do", "then"), and a shell's
// -c (Codex gives ["bash", "-lc", "…"]). Quotes around a word are not the word's.
func commandWords(words []string) []string {
	for len(words) > 0 {
		if at := ShellCommandAt(words); at > 0 {
			words = words[at:]
			continue
		}
		w := strings.Trim(words[0], `"'`)
		switch {
		case w == "":
		case strings.Contains(w, "=") && !strings.HasPrefix(w, "-"):
		case w == "do" || w == "then" || w == "else" || w == "{" || w == "!" ||
			w == "exec" || w == "command" || w == "builtin" || w == "time" || w == "nohup":
		case w == "sudo" || w == "env":
			for len(words) > 1 && strings.HasPrefix(words[1], "-") {
				if words[1] == "-u" || words[1] == "-g" { // and its user's or group's name
					words = words[1:]
				}
				words = words[1:]
			}
		default:
			out := append([]string{w}, words[1:]...)
			for i := range out[1:] {
				out[i+1] = strings.Trim(out[i+1], `"'`)
			}
			return out
		}
		words = words[1:]
	}
	return nil
}

// ShellCommandAt is where the command a shell is given to run starts among words,
// words[0] the shell: past -c (alone or among one-letter flags: bash -lc, as Codex
// gives it; sh -ec) or --command, and the options before it (--login, -o pipefail,
// --rcfile FILE). It is 0 when words run no shell, or a shell given no command (a
// script's name comes first).
func ShellCommandAt(words []string) int {
	if len(words) == 0 || !isShell(strings.Trim(words[0], `"'`)) {
		return 0
	}
	for i := 1; i < len(words)-1; i++ {
		switch w := strings.Trim(words[i], `"'`); {
		case w == "-o" || w == "+o" || w == "-O" || w == "+O" || w == "--rcfile" || w == "--init-file":
			i++ // and its value
		case w == "--command" || len(w) >= 2 && w[0] == '-' && w[1] != '-' && strings.Contains(w, "c"):
			return i + 1
		case strings.HasPrefix(w, "-") || strings.HasPrefix(w, "+"):
		default:
			return 0
		}
	}
	return 0
}

func isShell(w string) bool {
	switch path.Base(w) {
	case "sh", "bash", "zsh", "dash", "ksh", "fish":
		return true
	}
	return false
}

// credentialCommands print a credential, whatever names it: the first words of each.
var credentialCommands = [][]string{
	{"gcloud", "auth", "print-access-token"},
	{"gcloud", "auth", "print-identity-token"},
	{"gcloud", "auth", "application-default", "print-access-token"},
	{"gcloud", "secrets", "versions", "access"},
	{"gh", "auth", "token"},
	{"heroku", "auth:token"},
	{"op", "read"},
	{"pass", "show"},
	{"bw", "get"},
	{"lpass", "show"},
	{"security", "find-generic-password"},
	{"security", "find-internet-password"},
	{"aws", "ecr", "get-login-password"},
	{"aws", "secretsmanager", "get-secret-value"},
	{"aws", "ssm", "get-parameter"},
	{"aws", "ssm", "get-parameters"},
	{"az", "account", "get-access-token"},
	{"az", "keyvault", "secret", "show"},
	{"vault", "kv", "get"},
	{"vault", "read"},
	{"kubectl", "get", "secret"},
	{"kubectl", "get", "secrets"},
	{"doppler", "secrets", "get"},
	{"doctl", "auth", "token"},
}

// printedBy is the name of a secret a step that runs the command of words prints, or "".
func printedBy(words []string) string {
	if len(words) == 0 {
		return ""
	}
	command := path.Base(words[0])
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
	case "cat": // a secret mounted by Docker or Kubernetes
		for _, w := range words[1:] {
			if strings.HasPrefix(w, "/run/secrets/") || strings.HasPrefix(w, "/var/run/secrets/") {
				return w
			}
		}
	case "aws": // aws configure get aws_secret_access_key
		if len(words) > 3 && words[1] == "configure" && words[2] == "get" && SecretKey(words[3]) {
			return words[3]
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
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// secretExpansion is the name of a variable word expands that names a secret, written
// as the environment's are (upper case: a loop's "$pass" is none), or "": "$API_KEY",
// "${DB_PASSWORD}", "token: $TOKEN", "${SECRET:-none}".
func secretExpansion(word string) string {
	for i := strings.IndexByte(word, '$'); i >= 0; {
		rest := strings.TrimPrefix(word[i+1:], "{")
		if name := envName(rest); name != "" && SecretKey(name) {
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

// envName is the name of an environment variable that s starts with: upper case
// letters, digits and "_", not starting with a digit; "" for none.
func envName(s string) string {
	n := 0
	for n < len(s) && (s[n] == '_' || 'A' <= s[n] && s[n] <= 'Z' || n > 0 && '0' <= s[n] && s[n] <= '9') {
		n++
	}
	if n < len(s) && 'a' <= s[n] && s[n] <= 'z' {
		return "" // "$Path": not written as the environment's are
	}
	return s[:n]
}

// envReads are how programs read a variable of their environment, in the languages
// agents run inline ("python -c", "node -e", "ruby -e", PowerShell).
var envReads = []string{`environ["`, `environ['`, `environ.get("`, `environ.get('`, `getenv("`, `getenv('`,
	`process.env.`, `process.env["`, `process.env['`, `ENV["`, `ENV['`, `$env:`}

// readFromEnv is the name of a secret that a step's program reads from its
// environment, or "".
func readFromEnv(step string) string {
	for _, r := range envReads {
		for rest := step; ; {
			i := strings.Index(rest, r)
			if i < 0 {
				break
			}
			rest = rest[i+len(r):]
			if name := envName(rest); name != "" && SecretKey(name) {
				return name
			}
		}
	}
	return ""
}
