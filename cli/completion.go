package cli

import (
	"fmt"

	ucli "github.com/urfave/cli/v2"

	"github.com/agmem/agmem/internal/hint"
)

// completionScripts ask agmem itself what comes next: urfave/cli answers
// --generate-bash-completion with the commands and flags that fit the words so far.
var completionScripts = map[string]string{
	"bash": `# agmem completion for bash: source <(agmem completion bash)
_agmem_complete() {
  local cur="${COMP_WORDS[COMP_CWORD]}"
  COMPREPLY=($(compgen -W "$("${COMP_WORDS[@]:0:COMP_CWORD}" --generate-bash-completion 2>/dev/null)" -- "$cur"))
}
complete -o default -F _agmem_complete agmem
`,
	"zsh": `#compdef agmem
# agmem completion for zsh: source <(agmem completion zsh)
_agmem() {
  local -a values
  values=("${(@f)$(${words[@]:0:CURRENT-1} --generate-bash-completion 2>/dev/null)}")
  _describe 'agmem' values
}
compdef _agmem agmem
`,
	"fish": `# agmem completion for fish: agmem completion fish | source
function __agmem_complete
    set -l words (commandline -opc)
    $words --generate-bash-completion 2>/dev/null
end
complete -c agmem -f -a '(__agmem_complete)'
`,
}

func newCompletionCommand(e *env) *ucli.Command {
	return &ucli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script (bash, zsh or fish)",
		ArgsUsage: "bash|zsh|fish",
		Action: func(c *ucli.Context) error {
			script, ok := completionScripts[c.Args().First()]
			if !ok || c.Args().Len() != 1 {
				return hint.With(fmt.Errorf("completion takes one shell: bash, zsh or fish"),
					`e.g. source <(agmem completion bash)`)
			}
			_, err := fmt.Fprint(e.stdout, script)
			return err
		},
	}
}
