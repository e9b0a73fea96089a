package record

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/agmem/agmem/capture"
	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/internal/memrepo"
	"github.com/agmem/agmem/journal"
)

// This file is the hook's path, top to bottom: what an agent's hook runs on every tool
// call, "agmem-record" or "agmem record", reads its payload on stdin, decodes it,
// applies the capture policy, and appends it to the journal in one transaction.

// Env is what "agmem record" reads and writes besides its flags.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
}

// Run is "agmem record": it records what f and e's stdin describe into the memory repo
// repoFlag names (see memrepo.Locate), and prints the id of each new observation.
// Input not worth capturing, or opted out of, is passed over: exit 0, and why with
// --verbose.
func Run(e Env, repoFlag string, f Flags) error {
	repo, err := memrepo.Locate(repoFlag, e.Getenv)
	if err != nil {
		return err
	}
	r, err := OpenRepo(repo, Options{Session: f.Session, Agent: f.Agent, Getenv: e.Getenv})
	if err != nil {
		return err
	}
	if r.off != "" {
		// Before anything else is read: an opted-out project's hook stays silent,
		// whatever it is given.
		printOutcome(e, f, Outcome{NotCaptured: []string{r.off}})
		return nil
	}
	var out Outcome
	switch {
	case f.Tool != "":
		obs, err := f.observation(r.maxInput)
		if err != nil {
			return err
		}
		if out, err = r.Record(obs); err == nil && len(out.Refused) > 0 {
			err = hint.With(out.Refused[0], `run "agmem record --help"`)
		}
		printOutcome(e, f, out)
		return err
	case f.JSONL:
		out, err = r.Lines(e.Stdin)
	default:
		var data []byte
		if data, err = readPayload(e.Stdin, r.maxInput); err == nil {
			out, err = r.Payload(data)
		}
	}
	printOutcome(e, f, out)
	if err != nil {
		return err
	}
	if n := len(out.Refused); n > 0 {
		return hint.With(fmt.Errorf("%d line(s) were not recorded; the other lines were", n),
			"fix the lines named above and record them again; recording a line twice keeps it once")
	}
	return nil
}

// Payload records one JSON object: a hook payload of an agent agmem knows, or a
// native observation (FORMAT.md §Input).
func (r *Recorder) Payload(data []byte) (Outcome, error) {
	var out Outcome
	if r.off != "" {
		out.NotCaptured = []string{r.off}
		return out, nil
	}
	now := time.Now()
	d, err := capture.Decode(data, r.policy, now)
	if err != nil {
		return out, r.redacted(hint.Else(err, "give a native object {\"tool_name\", \"arguments\", \"result\"} or a hook payload"), data)
	}
	entries, err := r.admit(d, nil, &out)
	if err != nil {
		return out, r.redacted(err, data)
	}
	return out, r.write(entries, journal.AppendOptions{Now: now}, &out)
}

// readPayload reads one object of at most limit bytes: a larger one is refused, not a
// reason to run out of memory in an agent's hook.
func readPayload(in io.Reader, limit int) ([]byte, error) {
	if f, ok := in.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			return nil, hint.With(errors.New("no input: stdin is a terminal"),
				`pipe a JSON object into "agmem record", or use "agmem record --tool NAME"`)
		}
	}
	data, err := io.ReadAll(io.LimitReader(in, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("read stdin: %w", err)
	}
	if len(data) > limit {
		return nil, hint.With(fmt.Errorf("input is larger than %s; nothing was recorded", sizeName(limit)),
			"capture.max_input_bytes raises the bound; a large value is cut to capture.max_value_bytes once read")
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, hint.With(errors.New("no input on stdin"),
			`pipe a JSON object into "agmem record", or use "agmem record --tool NAME"`)
	}
	return data, nil
}

func sizeName(n int) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// printOutcome prints the id of each new observation on stdout, what was refused on
// stderr, and, with --verbose, what was passed over and what was recorded before.
func printOutcome(e Env, f Flags, out Outcome) {
	ids := bufio.NewWriter(e.Stdout) // a --jsonl's million ids, not held twice
	for _, rec := range out.Recorded {
		switch {
		case rec.Duplicate:
			if f.Verbose {
				fmt.Fprintf(e.Stderr, "agmem: already recorded: %s\n", rec.ID)
			}
		case !rec.Event:
			ids.WriteString(rec.ID)
			ids.WriteByte('\n')
		}
		if rec.Spooled && f.Verbose {
			fmt.Fprintf(e.Stderr, "agmem: kept aside while another agmem held the journal, to be recorded by its next write: %s\n", rec.ID)
		}
	}
	ids.Flush()
	if f.Tool == "" {
		for _, err := range out.Refused {
			fmt.Fprintln(e.Stderr, "agmem: "+hint.OneLine(err.Error()))
		}
	}
	if f.Verbose {
		for _, why := range out.NotCaptured {
			fmt.Fprintln(e.Stderr, "agmem: not captured: "+why)
		}
	}
}
