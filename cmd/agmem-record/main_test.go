package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// allowed are the packages outside the standard library that agmem-record may link:
// what recording needs (capture, redaction, the journal, the configuration) and giving a
// kept context block (sessionstart, sessionstart/kept), and
// nothing of git, the command line library or the model's client, each of whose
// package initialisation would cost every tool call of every agent. A package added
// here is a cost on the hot path: measure the hook before and after (BENCHMARKS.md).
var allowed = []string{
	"github.com/agmem/agmem/capture",
	"github.com/agmem/agmem/capture/importer",
	"github.com/agmem/agmem/classify",
	"github.com/agmem/agmem/cmd/agmem-record",
	"github.com/agmem/agmem/internal/atomicfile",
	"github.com/agmem/agmem/internal/config",
	"github.com/agmem/agmem/internal/failpoint",
	"github.com/agmem/agmem/internal/flock",
	"github.com/agmem/agmem/internal/hint",
	"github.com/agmem/agmem/internal/jsonscan",
	"github.com/agmem/agmem/internal/lines",
	"github.com/agmem/agmem/internal/memrepo",
	"github.com/agmem/agmem/journal",
	"github.com/agmem/agmem/memory",
	"github.com/agmem/agmem/record",
	"github.com/agmem/agmem/redact",
	"github.com/agmem/agmem/sessionstart",
	"github.com/agmem/agmem/sessionstart/kept",
	"github.com/BurntSushi/toml",
	"github.com/BurntSushi/toml/internal",
	"github.com/pierrec/lz4/v4",
	"github.com/pierrec/lz4/v4/internal/lz4block",
	"github.com/pierrec/lz4/v4/internal/lz4errors",
	"github.com/pierrec/lz4/v4/internal/lz4stream",
	"github.com/pierrec/lz4/v4/internal/xxh32",
	"go.etcd.io/bbolt",
	"go.etcd.io/bbolt/errors",
	"go.etcd.io/bbolt/internal/common",
	"go.etcd.io/bbolt/internal/freelist",
	"golang.org/x/sys/unix",
}

// heavyStd are standard packages agmem-record must not link: the network stack and
// TLS, templates, subprocesses and the like, none of which recording needs.
var heavyStd = []string{"net", "net/http", "crypto/tls", "crypto/x509", "os/exec", "text/template",
	"html/template", "encoding/gob", "log/slog", "compress/flate", "archive/zip", "database/sql"}

// TestLinksOnlyRecording keeps agmem-record what hooks need it to be.
func TestLinksOnlyRecording(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		first, _, _ := strings.Cut(pkg, "/")
		inStd := !strings.Contains(first, ".") && !strings.HasPrefix(pkg, "github.com/")
		switch {
		case inStd && slices.Contains(heavyStd, pkg):
			t.Errorf("agmem-record links %s", pkg)
		case !inStd && !slices.Contains(allowed, pkg):
			t.Errorf("agmem-record links %s, which is not on the allow-list", pkg)
		}
	}
}
