package gitsync

// HelperName is the executable that talks to remotes: cmd/agmem-sync.
const HelperName = "agmem-sync"

// The helper's credentials for http(s) remotes come from its environment, never from
// the request or its command line: agmem sets them from [sync] username and password.
const (
	EnvUsername = "AGMEM_SYNC_USERNAME"
	EnvPassword = "AGMEM_SYNC_PASSWORD"
)

// Op is what the helper is asked to do.
type Op string

const (
	OpPush  Op = "push"
	OpFetch Op = "fetch"
)

// Request is what agmem writes to agmem-sync's standard input, as one JSON document.
type Request struct {
	Op     Op     `json:"op"`
	GitDir string `json:"git_dir"`
	// Remote is a remote that the repository's git configuration names.
	Remote   string   `json:"remote"`
	RefSpecs []string `json:"refspecs"`
	// SSHKey is a private key file for ssh remotes; "" uses the ssh agent.
	SSHKey string `json:"ssh_key,omitempty"`
}

// Response is what agmem-sync writes to its standard output, as one JSON document.
type Response struct {
	// UpToDate says the remote (push) or the local refs (fetch) needed nothing.
	UpToDate bool     `json:"up_to_date,omitempty"`
	Failure  *Failure `json:"failure,omitempty"`
}

// Failure is why the remote did not do what was asked.
type Failure struct {
	Kind    Kind   `json:"kind"`
	Message string `json:"message"`
}

// Kind sorts failures by what the person who hit one can do about it.
type Kind string

const (
	KindUnreachable  Kind = "unreachable"   // nothing answered: down, wrong host, no network
	KindNoRepository Kind = "no-repository" // it answered, but holds no repository there
	KindAuthRequired Kind = "auth-required" // it wants credentials and got none
	KindAuthFailed   Kind = "auth-failed"   // it refused the credentials it got
	KindHostKey      Kind = "host-key"      // an ssh host whose key is not known
	KindDiverged     Kind = "diverged"      // the branch there is not an ancestor of the one pushed
	KindRejected     Kind = "rejected"      // it refused the update: a hook, its settings
	KindOther        Kind = "failed"
)
