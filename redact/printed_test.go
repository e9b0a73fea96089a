package redact

import (
	"strings"
	"testing"
)

func TestPrintedSecret(t *testing.T) {
	for command, want := range map[string]string{
		"echo $DB_PASSWORD":                                "DB_PASSWORD",
		`echo "${OPENAI_API_KEY}"`:                         "OPENAI_API_KEY",
		`echo -n "token: $GITHUB_TOKEN."`:                  "GITHUB_TOKEN",
		`printf '%s\n' "$AWS_SECRET_ACCESS_KEY"`:           "AWS_SECRET_ACCESS_KEY",
		"echo ${STRIPE_SECRET:-none}":                      "STRIPE_SECRET",
		"echo $HOME $API_TOKEN":                            "API_TOKEN",
		"printenv SLACK_TOKEN":                             "SLACK_TOKEN",
		"env -i printenv DB_PASS":                          "DB_PASS",
		"source .env && echo $API_KEY":                     "API_KEY",
		"cd app; echo $API_KEY | base64":                   "API_KEY",
		"export X=1\necho $MYSQL_PWD":                      "MYSQL_PWD",
		"echo $(echo $API_KEY)":                            "API_KEY",
		"bash -lc echo $API_KEY":                           "API_KEY", // Codex's ["bash", "-lc", "…"], joined
		`bash -c "echo $API_KEY"`:                          "API_KEY",
		`bash --login -c 'echo $TOKEN'`:                    "TOKEN",
		`bash -o pipefail -c 'printenv API_TOKEN'`:         "API_TOKEN",
		`fish --command 'echo $TOKEN'`:                     "TOKEN",
		`sh -ec 'echo $API_KEY'`:                           "API_KEY",
		`bash script.sh -c 'echo $API_KEY'`:                "",
		"sudo -u app printenv API_TOKEN":                   "API_TOKEN",
		"TOKEN=x /usr/bin/printenv TOKEN":                  "TOKEN",
		"aws configure get aws_secret_access_key":          "aws_secret_access_key",
		"aws configure get aws_session_token --profile ci": "aws_session_token",
		"gcloud auth print-access-token":                   "gcloud auth print-access-token",
		"gh auth token --hostname github.com":              "gh auth token",
		"op read op://vault/db/password":                   "op read",
		"pass show db/prod":                                "pass show",
		"security find-generic-password -s api -w":         "security find-generic-password",
		"aws ecr get-login-password --region eu-west-1 | docker login --username AWS --password-stdin x": "aws ecr get-login-password",
		"vault kv get -field=password secret/db":                                                         "vault kv get",
		"aws secretsmanager get-secret-value --secret-id db --output text":                               "aws secretsmanager get-secret-value",
		"kubectl get secret db -o jsonpath='{.data.password}' | base64 -d":                               "kubectl get secret",
		"cat /run/secrets/db_password":                                                                   "/run/secrets/db_password",
		`python3 -c 'import os; print(os.environ["API_KEY"])'`:                                           "API_KEY",
		`node -e 'console.log(process.env.GITHUB_TOKEN)'`:                                                "GITHUB_TOKEN",
		"Write-Output $env:API_KEY":                                                                      "API_KEY",
		"for i in 1 2; do echo $DB_PASSWORD; done":                                                       "DB_PASSWORD",

		"echo $HOME":                   "",
		"echo $PWD":                    "",
		"echo DB_PASSWORD":             "", // the name, not its value
		"echo $MAX_TOKENS":             "",
		"printenv":                     "", // KEY=value lines: the assignment rule finds them
		"printenv PATH":                "",
		"aws configure get region":     "",
		"aws s3 ls":                    "",
		"git config --get user.email":  "",
		"go test ./... -run TestToken": "",
		"grep -r API_KEY .":            "",
		"cat $TOKEN_FILE":              "",
		"gh pr list":                   "",
		"echo $":                       "",
		"echo ${":                      "",
		"":                             "",
		"bash -lc":                     "",
		"sudo":                         "",
		"echo $1password":              "",
		"echo café $HOME":              "",
	} {
		if got := PrintedSecret(command); got != want {
			t.Errorf("PrintedSecret(%q) = %q, want %q", command, got, want)
		}
	}
}

func TestPrintedFile(t *testing.T) {
	withheld := func(path string) string {
		if strings.HasSuffix(path, ".netrc") || strings.Contains(path, ".env") {
			return "a glob"
		}
		return ""
	}
	for command, want := range map[string]string{
		"cat ~/.netrc ~/.pgpass":         "a glob",
		"cd app && head -5 .env | wc":    "a glob",
		"sort < .env.local":              "a glob",
		`bash -lc "grep API '.env'"`:     "a glob",
		"cat README.md":                  "",
		"cp .env .env.bak":               "", // prints nothing
		"grep -r --include=.env TOKEN .": "",
	} {
		if got := PrintedFile(command, withheld); got != want {
			t.Errorf("PrintedFile(%q) = %q, want %q", command, got, want)
		}
	}
}
