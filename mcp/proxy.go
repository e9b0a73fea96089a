package mcp

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultMaxMessage is the default bound on a message the proxy reads: 64 MiB, as
// capture.max_input_bytes. A longer one is relayed all the same.
const DefaultMaxMessage = 64 << 20

// Proxy runs one stdio MCP server and relays between it and a client. Record and Warn
// are called on goroutines of their own, never on the relay path.
type Proxy struct {
	Command string   // the server's executable
	Args    []string // its arguments

	Stdin  io.Reader // what the client sends
	Stdout io.Writer // where the server's messages go, for the client
	Stderr io.Writer // where the server's stderr goes

	// Record is given the calls as they finish, a batch at a time; nil records nothing.
	Record func([]Call) error
	// Warn is told, once each, of the first batch Record could not record and of the
	// first message too large to read. Relaying goes on regardless.
	Warn func(error)
	// Methods are recorded besides tools/call, e.g. resources/read; "*" records every
	// request.
	Methods []string
	// Grace bounds each step of stopping once the client has closed its input: the wait
	// for answers still due; then, the server's input closed, the wait for it to exit;
	// then, after SIGTERM, the wait before SIGKILL.
	Grace time.Duration
	// Signals are forwarded to the server (to its process group, on unix).
	Signals <-chan os.Signal
	// MaxMessage bounds a message the proxy reads to pair calls (0: DefaultMaxMessage).
	MaxMessage int
}

// drainOutput is how long the server's output is still read after it exited: a child
// of the server that holds it open must not hold the proxy up.
const drainOutput = time.Second

// Run starts the server and relays until it exits, and returns how it ended (ExitCode
// says it as a number); err is set only when the server could not be started. When Run
// returns, every call the client made has been given to Record, those the server did
// not answer with why. Run does not wait for Stdin to end once the server has exited.
func (p *Proxy) Run() (*os.ProcessState, error) {
	cmd, serverIn, serverOut, err := p.start()
	if err != nil {
		return nil, err
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()

	limit := p.MaxMessage
	if limit <= 0 {
		limit = DefaultMaxMessage
	}
	record := p.Record
	if record == nil {
		record = func([]Call) error { return nil }
	}
	rec := startRecorder(record, func(err error) {
		p.Warn(fmt.Errorf("calls are not being recorded (relaying goes on): %w", err))
	})
	behind := 4 * int64(limit) // how far the tracker may fall behind the relays
	t := startTracking(newTracker(p.Methods, rec.calls.put), behind)
	var tooLarge sync.Once
	relayed := func(from side, src io.Reader, dst io.Writer) *relay {
		return &relay{from: from, src: src, dst: dst, lines: t.lines, budget: t.budget, limit: limit, skipped: func() {
			tooLarge.Do(func() {
				p.Warn(fmt.Errorf("a message over %d bytes, or one that came while %d bytes waited to be read, was relayed but not read; a call it answered is recorded with no answer", limit, behind))
			})
		}}
	}
	go relayed(fromClient, p.Stdin, serverIn).run()
	serverDone := make(chan struct{})
	go func() {
		relayed(fromServer, serverOut, p.Stdout).run()
		close(serverDone)
	}()

	var gaveUp atomic.Bool // the client closed, and answers were still due after Grace
	clientClosed := t.clientClosed
	for running := true; running; {
		select {
		case sig := <-p.Signals:
			signalServer(cmd.Process, sig)
		case <-clientClosed:
			clientClosed = nil
			go p.stop(cmd.Process, serverIn, t.drained, exited, &gaveUp)
		case <-exited:
			running = false
		}
	}

	serverOut.SetReadDeadline(time.Now().Add(drainOutput))
	<-serverDone
	serverIn.Close()
	t.lines.close()
	<-t.done
	why := "no answer: the server ended (" + cmd.ProcessState.String() + ")"
	if gaveUp.Load() {
		why = fmt.Sprintf("no answer within %s of the client closing its input", p.Grace)
	}
	t.tr.end(why, time.Now())
	rec.close()
	return cmd.ProcessState, nil
}

// start starts the server with pipes for its input and output, and Stderr as its
// stderr.
func (p *Proxy) start() (cmd *exec.Cmd, serverIn, serverOut *os.File, err error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, nil, nil, err
	}
	cmd = exec.Command(p.Command, p.Args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, p.Stderr
	cmd.SysProcAttr = ownGroup()
	cmd.WaitDelay = drainOutput // a child of the server that keeps its stderr open
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, nil, nil, err
	}
	return cmd, inW, outR, nil
}

// stop ends the server once the client has closed its input, as the MCP stdio transport
// says a client does: when the answers still due are in (or after Grace), it closes the
// server's input; if the server has not exited after Grace, SIGTERM; after Grace more,
// SIGKILL.
func (p *Proxy) stop(proc *os.Process, input *os.File, drained, exited <-chan struct{}, gaveUp *atomic.Bool) {
	within := func(c <-chan struct{}) bool {
		timer := time.NewTimer(p.Grace)
		defer timer.Stop()
		select {
		case <-c:
			return true
		case <-exited:
			return true
		case <-timer.C:
			return false
		}
	}
	if !within(drained) {
		gaveUp.Store(true)
	}
	input.Close()
	if within(exited) {
		return
	}
	terminate(proc)
	if within(exited) {
		return
	}
	proc.Kill()
}

// tracking is the tracker's goroutine: it reads the relayed lines in the order they
// were relayed, and says when the client has closed its input and when, after that,
// no request is in flight.
type tracking struct {
	lines        *queue[line]
	budget       *atomic.Int64 // bytes more the relays may queue
	tr           *tracker
	clientClosed chan struct{}
	drained      chan struct{}
	done         chan struct{}
}

// pair hands a line to the tracker. A panic there would end the proxy with Go's exit
// status 2 ("block" to agents), so it costs the line its pairing, nothing more.
func (t *tracking) pair(l line) {
	defer func() { recover() }()
	if l.from == fromClient {
		t.tr.fromClient(l.data, l.at)
	} else {
		t.tr.fromServer(l.data, l.at)
	}
}

func startTracking(tr *tracker, budget int64) *tracking {
	t := &tracking{lines: newQueue[line](), budget: new(atomic.Int64), tr: tr,
		clientClosed: make(chan struct{}), drained: make(chan struct{}), done: make(chan struct{})}
	t.budget.Store(budget)
	go t.run()
	return t
}

func (t *tracking) run() {
	defer close(t.done)
	closing, drained := false, false
	for {
		batch, ok := t.lines.take()
		if !ok {
			return
		}
		for _, l := range batch {
			switch {
			case l.eof && l.from == fromClient:
				closing = true
				close(t.clientClosed)
			case !l.eof:
				t.pair(l)
			}
			t.budget.Add(int64(len(l.data)))
			if closing && !drained && t.tr.inFlight() == 0 {
				drained = true
				close(t.drained)
			}
		}
	}
}
