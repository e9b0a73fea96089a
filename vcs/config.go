package vcs

import (
	"strings"

	"github.com/go-git/go-git/v5/config"
)

// Setting is the value of the git configuration variable name ("commit.gpgSign",
// "gpg.ssh.allowedSignersFile"), read as git reads it: the repository's own
// configuration over the user's; "" when neither sets it. Section and key compare
// without regard to case, a subsection exactly.
func (r *Git) Setting(name string) string {
	section, key := name, ""
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		section, key = name[:i], name[i+1:]
	}
	section, sub, _ := strings.Cut(section, ".")
	for _, scope := range []func() (*config.Config, error){
		func() (*config.Config, error) { return r.st.Config() },
		func() (*config.Config, error) { return config.LoadConfig(config.GlobalScope) },
	} {
		c, err := scope()
		if err != nil || c.Raw == nil || !c.Raw.HasSection(section) {
			continue
		}
		s := c.Raw.Section(section)
		opts := s.Options
		if sub != "" {
			if !s.HasSubsection(sub) {
				continue
			}
			opts = s.Subsection(sub).Options
		}
		if opts.Has(key) {
			return opts.Get(key)
		}
	}
	return ""
}
