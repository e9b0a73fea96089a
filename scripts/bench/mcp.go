package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// mcpLatency measures what `agmem mcp proxy` adds to a tool call: the round trip of
// tools/call read_text_file to the real filesystem server from npm, straight and
// through the proxy, the two sessions side by side in one loop that alternates which
// goes first. The proxy records every call into a memory repo meanwhile; the count
// recorded is checked at the end.
//
//	go run ./scripts/bench mcp -agmem BIN [-calls 1000] [-sizes 1024,65536]
func mcpLatency(args []string) error {
	fs := flag.NewFlagSet("mcp", flag.ExitOnError)
	bin := fs.String("agmem", "agmem", "the agmem binary")
	calls := fs.Int("calls", 1000, "timed calls of each session, per file size")
	sizes := fs.String("sizes", "1024,65536", "sizes in bytes of the file each call reads")
	npm := fs.String("npm", "mcp/testdata/npm", "where npm ci installed the filesystem server")
	fs.Parse(args)
	server, err := filepath.Abs(filepath.Join(*npm, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js"))
	if err != nil {
		return err
	}
	if _, err := os.Stat(server); err != nil {
		return fmt.Errorf("%w: run npm ci in %s", err, *npm)
	}
	repo, err := newMemoryRepo(*bin, "agmem-bench-mcp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(repo)
	files := filepath.Join(repo, "files")
	if err := os.Mkdir(files, 0o755); err != nil {
		return err
	}

	straight, err := startMCP(files, nil, "node", server, files)
	if err != nil {
		return err
	}
	proxied, err := startMCP(files, []string{"AGMEM_SESSION=bench-mcp"}, *bin, "--repo", repo, "mcp", "proxy", "--name", "fs", "--", "node", server, files)
	if err != nil {
		straight.close()
		return err
	}
	fmt.Printf("tools/call read_text_file, %d timed calls per session and size after 100 untimed, alternating\n", *calls)
	fmt.Printf("%-8s  %-30s  %-30s  %s\n", "file", "straight: median  p90  p99", "through agmem: median  p90  p99", "added at the median")
	id := 0
	for _, s := range strings.Split(*sizes, ",") {
		size, err := strconv.Atoi(s)
		if err != nil {
			return err
		}
		path := filepath.Join(files, fmt.Sprintf("file-%d.txt", size))
		if err := os.WriteFile(path, bytes.Repeat([]byte("a line of text in a file\n"), size/25+1)[:size], 0o644); err != nil {
			return err
		}
		var ds [2][]time.Duration
		for i := 0; i < 100+*calls; i++ {
			for k := 0; k < 2; k++ {
				which := (i + k) % 2 // alternate which session goes first
				id++
				d, err := []*mcpSession{straight, proxied}[which].call(id, path)
				if err != nil {
					return err
				}
				if i >= 100 {
					ds[which] = append(ds[which], d)
				}
			}
		}
		dist := func(d []time.Duration) string {
			return fmt.Sprintf("%-9s %-9s %s", ms(percentile(d, .5)), ms(percentile(d, .9)), ms(percentile(d, .99)))
		}
		fmt.Printf("%-8s  %-30s  %-30s  %s\n", sizeName(size), dist(ds[0]), dist(ds[1]), ms(percentile(ds[1], .5)-percentile(ds[0], .5)))
	}
	straight.close()
	began := time.Now()
	if err := proxied.close(); err != nil {
		return err
	}
	fmt.Printf("the proxy exited %s after its input closed, every call recorded by then\n", time.Since(began).Round(time.Millisecond))
	// A process's CPU time counts its children's: agmem's holds its server's.
	alone, both := cpu(straight.cmd.ProcessState), cpu(proxied.cmd.ProcessState)
	fmt.Printf("CPU per call: the server %s; agmem (relaying, pairing, redacting, journaling) %s\n",
		ms(alone/time.Duration(id/2)), ms((both-alone)/time.Duration(id/2)))
	out, err := exec.Command(*bin, "--repo", repo, "replay", "--json", "--session", "bench-mcp").Output()
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	if n := bytes.Count(out, []byte("\n")); n != id/2 {
		return fmt.Errorf("the proxy recorded %d calls of %d", n, id/2)
	}
	fmt.Printf("recorded: %d calls of %d\n", id/2, id/2)
	return nil
}

func cpu(s *os.ProcessState) time.Duration { return s.UserTime() + s.SystemTime() }

func sizeName(n int) string {
	if n%1024 == 0 {
		return fmt.Sprintf("%d KiB", n/1024)
	}
	return fmt.Sprintf("%d B", n)
}

// mcpSession is an MCP client of one server process, one call at a time.
type mcpSession struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func startMCP(dir string, env []string, name string, args ...string) (*mcpSession, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &mcpSession{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}
	if _, err := s.roundTrip(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`); err != nil {
		s.close()
		return nil, fmt.Errorf("%s: initialize: %w", name, err)
	}
	_, err = io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	return s, err
}

// call times one tools/call that reads path.
func (s *mcpSession) call(id int, path string) (time.Duration, error) {
	start := time.Now()
	answer, err := s.roundTrip(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":%q}}}`, id, path))
	d := time.Since(start)
	if err == nil && !bytes.Contains(answer, []byte(fmt.Sprintf(`"id":%d}`, id))) {
		err = fmt.Errorf("call %d answered %.200s", id, answer)
	}
	return d, err
}

// roundTrip sends a request and reads the line that answers it: the server sends
// nothing else unasked.
func (s *mcpSession) roundTrip(request string) ([]byte, error) {
	if _, err := io.WriteString(s.in, request+"\n"); err != nil {
		return nil, err
	}
	return s.out.ReadBytes('\n')
}

// close closes the server's input, as a client does, and waits for it to exit.
func (s *mcpSession) close() error {
	s.in.Close()
	err := s.cmd.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return fmt.Errorf("%s exited: %w", s.cmd.Path, err)
	}
	return err
}
