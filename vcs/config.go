package vcs

import (
	"cmp"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/config"
	format "github.com/go-git/go-git/v5/plumbing/format/config"
)

// GitConfig reads git's configuration as git reads it, each file over the ones before:
// the system's (unless GIT_CONFIG_NOSYSTEM), the user's ($GIT_CONFIG_GLOBAL, else
// $XDG_CONFIG_HOME/git/config then ~/.gitconfig), the repository's; include and
// includeIf are not followed. It returns the value of a variable ("commit.gpgSign",
// "gpg.ssh.allowedSignersFile"), "" when nothing sets it: section and key compare
// without regard to case, a subsection exactly.
func (r *Git) GitConfig() func(name string) string {
	files := r.configs()
	return func(name string) string { return setting(files, name) }
}

func setting(files []*format.Config, name string) string {
	section, key := name, ""
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		section, key = name[:i], name[i+1:]
	}
	section, sub, _ := strings.Cut(section, ".")
	value := ""
	for _, raw := range files {
		if !raw.HasSection(section) {
			continue
		}
		s := raw.Section(section)
		opts := s.Options
		if sub != "" {
			if !s.HasSubsection(sub) {
				continue
			}
			opts = s.Subsection(sub).Options
		}
		if opts.Has(key) {
			value = opts.Get(key)
		}
	}
	return value
}

// configs are git's configuration files that can be read, in git's order.
func (r *Git) configs() []*format.Config {
	var files []string
	if os.Getenv("GIT_CONFIG_NOSYSTEM") == "" {
		files = append(files, cmp.Or(os.Getenv("GIT_CONFIG_SYSTEM"), "/etc/gitconfig"))
	}
	if global := os.Getenv("GIT_CONFIG_GLOBAL"); global != "" {
		files = append(files, global)
	} else if home, err := os.UserHomeDir(); err == nil {
		xdg := os.Getenv("XDG_CONFIG_HOME")
		if xdg == "" {
			xdg = filepath.Join(home, ".config")
		}
		files = append(files, filepath.Join(xdg, "git", "config"), filepath.Join(home, ".gitconfig"))
	}
	var out []*format.Config
	for _, f := range files {
		file, err := os.Open(f)
		if err != nil {
			continue
		}
		c, err := config.ReadConfig(file)
		file.Close()
		if err == nil && c.Raw != nil {
			out = append(out, c.Raw)
		}
	}
	if c, err := r.st.Config(); err == nil && c.Raw != nil {
		out = append(out, c.Raw)
	}
	return out
}
