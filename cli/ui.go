package cli

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/internal/memrepo"
	"github.com/agmem/agmem/ui"
)

func newUICommand(e *env) *ucli.Command {
	return &ucli.Command{
		Name:  "ui",
		Usage: "a local web page of sessions, timelines, observations and search (read-only)",
		Description: "Serves the memory repo's pages on 127.0.0.1 (a free port unless --addr says), prints\n" +
			"their URL, which holds a random token every request needs, and opens it in the\n" +
			"browser unless --no-open. It changes nothing in the repo. Stop it with Ctrl-C.",
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "addr", Value: "127.0.0.1:0", Usage: "the address to listen on (a port of 0: any free one); another than loopback lets other machines try the token"},
			&ucli.BoolFlag{Name: "no-open", Usage: "print the URL, do not open a browser"},
		},
		Action: onRepo(e, func(c *ucli.Context, repo memrepo.Repo) error {
			return runUI(e, repo, c.String("addr"), !c.Bool("no-open"))
		}),
	}
}

func runUI(e *env, repo memrepo.Repo, addr string, open bool) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return hint.With(fmt.Errorf("listen on %s: %w", addr, err), "give another --addr, such as 127.0.0.1:0 for any free port")
	}
	defer l.Close()
	if ip := l.Addr().(*net.TCPAddr).IP; !ip.IsLoopback() {
		warn(e, fmt.Errorf("the viewer listens on %s, which other machines may reach: only its token keeps them out", l.Addr()))
	}
	m, err := openLive(repo)
	if err != nil {
		return err
	}
	token := ui.NewToken()
	srv, err := ui.New(repo, m, token)
	if err != nil {
		return err
	}
	defer srv.Close()
	// Caught before the URL is out: whoever reads it may stop the viewer at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	host := l.Addr().String()
	shown := host // the address a browser is sent to
	if a := l.Addr().(*net.TCPAddr); a.IP.IsUnspecified() {
		shown = net.JoinHostPort("127.0.0.1", strconv.Itoa(a.Port))
	}
	url := "http://" + shown + "/?token=" + token
	fmt.Fprintf(e.stdout, "agmem ui: %s\n", url)
	if open {
		openBrowser(url)
	}
	server := &http.Server{Handler: srv.Handler(host), ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout: 30 * time.Second, WriteTimeout: 60 * time.Second, IdleTimeout: 2 * time.Minute}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		server.Shutdown(shutdown)
	}()
	if err := server.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// openBrowser asks the desktop to open url, if it has a way; a machine without one
// (a server, CI) has the printed URL. The browser is given a file of the user's own
// that sends it on to url, never url itself: a command line is for every user to read,
// and a browser keeps the one it was started with.
func openBrowser(url string) {
	name := "xdg-open"
	if runtime.GOOS == "darwin" {
		name = "open"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return
	}
	f, err := os.CreateTemp("", "agmem-ui-*.html") // 0600
	if err != nil {
		return
	}
	fmt.Fprintf(f, "<!doctype html><meta http-equiv=\"refresh\" content=\"0;url=%s\"><title>agmem ui</title>\n", html.EscapeString(url))
	f.Close()
	cmd := exec.Command(path, f.Name())
	if cmd.Start() != nil {
		os.Remove(f.Name())
		return
	}
	go func() {
		cmd.Wait()
		time.Sleep(time.Minute) // time for a browser just started to read it
		os.Remove(f.Name())
	}()
}
