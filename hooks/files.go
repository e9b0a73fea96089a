package hooks

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/agmem/agmem/internal/atomicfile"
)

// Scope says whose settings: the user's, under $HOME, which every project shares; or one
// project's, under its directory.
type Scope string

// Scopes.
const (
	User    Scope = "user"
	Project Scope = "project"
)

// Place is where settings are looked for.
type Place struct {
	Home    string // $HOME
	Project string // the project's directory: where the agent runs
	Getenv  func(string) string
}

// Path is the agent's hook settings file for a scope.
func (a Agent) Path(p Place, s Scope) string { return filepath.Join(a.dir(p, s), a.File) }

func (a Agent) dir(p Place, s Scope) string {
	if s == Project {
		return filepath.Join(p.Project, a.Dir)
	}
	if a.DirEnv != "" && p.Getenv(a.DirEnv) != "" {
		return p.Getenv(a.DirEnv)
	}
	return filepath.Join(p.Home, a.Dir)
}

// Edit is one file's planned change.
type Edit struct {
	Path     string
	Old, New []byte // Old is nil when there is no file
	What     string // what changes, for people; "" when nothing does
	Remove   bool   // the file goes (uninstalled), New being what it would hold
}

// Plan is what installing or uninstalling would do.
type Plan struct {
	Edits    []Edit
	Warnings []string
}

// BackupSuffix names the copy of a file as it was before agmem first changed it.
const BackupSuffix = ".agmem-backup"

// PlanInstall reads the agent's files and says how installing hooks running r changes them.
func (a Agent) PlanInstall(p Place, s Scope, r Recorder, self string) (Plan, error) {
	path := a.Path(p, s)
	old, err := readFile(path)
	if err != nil {
		return Plan{}, err
	}
	text, ch, err := a.Install(old, r, self)
	if err != nil {
		return Plan{}, fmt.Errorf("%s: %w", path, err)
	}
	plan := Plan{Edits: []Edit{{Path: path, Old: old, New: text, What: ch.String()}}}
	sw := a.Switch
	if sw == nil {
		return plan, nil
	}
	if sw.File != a.File { // Install has set one in the hooks file already
		path = filepath.Join(a.dir(p, s), sw.File)
		if old, err = readFile(path); err != nil {
			return Plan{}, err
		}
		edit := Edit{Path: path, Old: old, New: old}
		if sw.toml() {
			// A rename agmem cannot make (a dotted key, an inline table) is left to the
			// user: Codex still reads the old name, with its warning.
			switch renamed, done, err := sw.renameDeprecated(old); {
			case err != nil && !errors.Is(err, errRenameRefused):
				return Plan{}, fmt.Errorf("%s: %w", path, err)
			case err != nil:
				plan.Warnings = append(plan.Warnings, fmt.Sprintf("%s: %v; rename it %s by hand", path, err, sw))
			case done:
				edit.New, edit.What = renamed, fmt.Sprintf("%s, which %s warns of on every run, renamed %s", sw.Deprecated, a.Title, sw)
			}
		}
		if state, err := sw.State(edit.New); err != nil {
			return Plan{}, fmt.Errorf("%s: %w", path, err)
		} else if state == SwitchUnset {
			if edit.New, err = sw.Enable(edit.New); err != nil {
				return Plan{}, fmt.Errorf("%s: %w", path, err)
			}
			edit.What = sw.String() + " = true added"
		}
		plan.Edits = append(plan.Edits, edit)
		text = edit.New
	}
	if state, setting, _ := sw.read(text); state == SwitchOff {
		plan.Warnings = append(plan.Warnings, fmt.Sprintf("%s runs no hooks while %s is switched off in %s: agmem left it so; set it to true to let them run",
			a.Title, setting, path))
	}
	return plan, nil
}

// PlanUninstall reads the agent's hooks file and says how removing agmem's hooks changes
// it. The switch that turns hooks on is left as it is: other hooks may need it.
func (a Agent) PlanUninstall(p Place, s Scope, self string) (Plan, error) {
	path := a.Path(p, s)
	old, err := readFile(path)
	if err != nil || old == nil {
		return Plan{Edits: []Edit{{Path: path}}}, err
	}
	text, ch, err := a.Uninstall(old, self)
	if err != nil {
		return Plan{}, fmt.Errorf("%s: %w", path, err)
	}
	made, _, err := a.Install(nil, Recorder{Binary: "agmem-record"}, self)
	if err == nil {
		made, _, err = a.Uninstall(made, self)
	}
	if err != nil {
		return Plan{}, err
	}
	return Plan{Edits: []Edit{uninstalled(path, old, text, made, ch.String())}}, nil
}

// uninstalled is an uninstall's edit of the file at path, from old to text. Where text
// holds only what agmem's install and uninstall leave of no file (made), and agmem made
// the file (no backup of it is there, and agmem keeps one of every file that was there
// before it first changed it), the file goes, as if agmem had never been installed;
// unless it is a link, whose file stays, or read-only.
func uninstalled(path string, old, text, made []byte, what string) Edit {
	e := Edit{Path: path, Old: old, New: text, What: what}
	if _, err := os.Lstat(path + BackupSuffix); err == nil || !e.Changes() || !bytes.Equal(bytes.TrimSpace(text), bytes.TrimSpace(made)) {
		return e
	}
	// A link's file is written (whoever made the link keeps it); a read-only one is
	// refused, as Write refuses any.
	if fi, err := os.Lstat(path); err != nil || fi.Mode()&fs.ModeSymlink != 0 || fi.Mode().Perm()&0o200 == 0 {
		return e
	}
	e.Remove = true
	e.What += "; the file, which agmem made, removed"
	return e
}

func (c Change) String() string {
	var parts []string
	for _, p := range []struct {
		verb   string
		events []string
	}{{"added for", c.Added}, {"updated for", c.Updated}, {"removed from", c.Removed}} {
		if len(p.events) > 0 {
			parts = append(parts, p.verb+" "+strings.Join(p.events, ", "))
		}
	}
	var s []string
	if len(parts) > 0 {
		s = append(s, "agmem's hooks "+strings.Join(parts, "; "))
	}
	if c.Enabled != "" {
		s = append(s, c.Enabled+" = true added")
	}
	return strings.Join(s, "; ")
}

// Status is what one settings file holds of agmem's.
type Status struct {
	Agent  string `json:"agent"`
	Title  string `json:"title"`
	Scope  Scope  `json:"scope"`
	Path   string `json:"file"`
	Exists bool   `json:"exists"`
	Found
	MissingBinaries []string      `json:"missing_binaries,omitempty"` // recorders' binaries, named by absolute path, that are not there
	Error           string        `json:"error,omitempty"`
	Switch          *SwitchStatus `json:"switch,omitempty"`
	Trust           *Trust        `json:"trust,omitempty"` // for an agent that runs only hooks a person trusted
}

// SwitchStatus is the state of the switch that lets the agent run hooks.
type SwitchStatus struct {
	Path    string `json:"file"`
	Setting string `json:"setting"` // the one set false, when one is; else the one agmem writes
	State   string `json:"state"`   // on, off, unset, or why it cannot be read
}

// Status reads the agent's files for a scope.
func (a Agent) Status(p Place, s Scope, self string) Status {
	st := Status{Agent: a.Name, Title: a.Title, Scope: s, Path: a.Path(p, s)}
	src, err := readFile(st.Path)
	st.Exists = src != nil
	if err == nil {
		st.Found, err = a.Inspect(src, self)
	}
	if err != nil {
		st.Error = err.Error()
	}
	if a.Trusts && st.Error == "" && len(st.Events) > 0 {
		st.Trust = a.trustOf(p, s, src, self)
	}
	for _, r := range st.Recorders {
		// A bare name is looked up on the agent's $PATH, which agmem does not know.
		if _, err := os.Stat(r.Binary); filepath.IsAbs(r.Binary) && errors.Is(err, fs.ErrNotExist) {
			st.MissingBinaries = append(st.MissingBinaries, r.Binary)
		}
	}
	if sw := a.Switch; sw != nil && (sw.File != a.File || st.Error == "") { // the file's error says it all
		st.Switch = &SwitchStatus{Path: filepath.Join(a.dir(p, s), sw.File), Setting: sw.String()}
		if sw.File != a.File {
			src, err = readFile(st.Switch.Path)
		}
		if err == nil {
			st.Switch.State, st.Switch.Setting, err = sw.read(src)
		}
		if err != nil {
			st.Switch.State, st.Switch.Setting = err.Error(), sw.String()
		}
	}
	return st
}

// readFile returns the file's bytes, or nil (and no error) when there is no file.
func readFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// Changes says whether writing the edit would change anything.
func (e Edit) Changes() bool {
	return e.Remove || e.New != nil && (e.Old == nil || !bytes.Equal(e.Old, e.New))
}

// Write makes the change: first, if the file is there and has no backup yet, a copy of
// it as it was (which it returns); then the new text, in place of the old at once, with
// the old one's permissions. A symbolic link is followed, so the file it points at is
// changed and the link stays. If the file changed since it was read, nothing is written.
func (e Edit) Write() (backup string, err error) {
	target := e.Path
	if resolved, err := filepath.EvalSymlinks(e.Path); err == nil {
		target = resolved
	} else if to, lerr := os.Readlink(e.Path); lerr == nil {
		return "", fmt.Errorf("%w: %s is a link to %s, which is not there; nothing was written (make that file, or remove the link)", ErrUnreadable, e.Path, to)
	}
	now, err := readFile(target)
	if err != nil {
		return "", err
	}
	if !bytes.Equal(now, e.Old) || (now == nil) != (e.Old == nil) {
		return "", fmt.Errorf("%s changed while agmem was reading it; nothing was written", e.Path)
	}
	mode := fs.FileMode(0o644)
	var owner fs.FileInfo // whose the file is, or the directory it is made in
	if e.Old == nil {
		if owner, err = makeDirs(filepath.Dir(target)); err != nil {
			return "", err
		}
	} else {
		if owner, err = os.Stat(target); err != nil {
			return "", err
		}
		mode = owner.Mode().Perm()
		if mode&0o200 == 0 {
			// Replacing it would work (it is its directory's permission that counts), but
			// someone made it read-only so that nothing changes it.
			return "", fmt.Errorf("%w: %s is read-only (mode %04o), so agmem leaves it as it is (chmod u+w it first)", ErrUnreadable, e.Path, mode)
		}
		if e.Remove {
			return "", os.Remove(e.Path)
		}
		backup = e.Path + BackupSuffix
		if _, err := os.Lstat(backup); err == nil {
			backup = "" // the first version agmem changed is kept already
		} else if err := writeAtomic(backup, e.Old, mode, owner); err != nil {
			return "", fmt.Errorf("back up %s: %w", e.Path, err)
		}
	}
	return backup, writeAtomic(target, e.New, mode, owner)
}

// makeDirs makes dir and the directories above it that are missing, each its nearest
// existing one's owner's (giveBack), and returns what tells whose they are.
func makeDirs(dir string) (owner fs.FileInfo, err error) {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if owner, err = os.Stat(d); err == nil || !errors.Is(err, fs.ErrNotExist) || d == filepath.Dir(d) {
			break
		}
		missing = append(missing, d)
	}
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	for _, d := range missing {
		if err := giveBack(d, owner); err != nil {
			return nil, err
		}
	}
	return owner, nil
}

// writeAtomic replaces path with data: a reader sees the old file or the new, never
// part. It is owner's owner's (giveBack).
func writeAtomic(path string, data []byte, mode fs.FileMode, owner fs.FileInfo) error {
	err := atomicfile.Write(path, "."+filepath.Base(path)+".agmem-*", mode, func(w *bufio.Writer) error {
		_, err := w.Write(data)
		return err
	})
	if err != nil {
		return err
	}
	return giveBack(path, owner)
}

// Disabled says whether the agent's settings in src switch agmem's hook off by its name
// (Gemini CLI's hooksConfig.disabled, which "/hooks disable agmem" writes). A file that
// does not parse says nothing.
func (a Agent) Disabled(src []byte) bool {
	if a.HookName == "" || src == nil {
		return false
	}
	d, err := parseDocument(src, a.Comments)
	if err != nil {
		return false
	}
	config, _ := d.root.get("hooksConfig")
	if config == nil || config.kind != '{' {
		return false
	}
	list, _ := config.get("disabled")
	if list == nil || list.kind != '[' {
		return false
	}
	for _, n := range list.elems {
		if name, ok := d.stringAt(n); ok && name == a.HookName {
			return true
		}
	}
	return false
}
