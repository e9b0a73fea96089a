// Package ui owns agmem ui: a local, read-only web viewer of a memory repo — its
// sessions, a session's timeline, an observation, search, a commit — served with the
// standard library from embedded templates, a style sheet and one plain script, with
// nothing fetched from elsewhere.
//
// It is safe on a shared machine: it answers only requests that carry its random token
// (in the URL it prints, then in a cookie) and that name its own address as Host (a
// page of another site that rebinds its name to 127.0.0.1 gets nothing); every value
// from an observation is escaped by html/template; the Content-Security-Policy allows
// only its own script and style, never an inline one. Nothing it does changes the repo.
package ui

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/agmem/agmem/internal/hint"
	"github.com/agmem/agmem/internal/memrepo"
	"github.com/agmem/agmem/recall"
)

//go:embed templates/*.html static/*
var files embed.FS

// cookiePrefix names the cookie that holds the token once the printed URL was opened:
// agmem_ui_<port>. Cookies are not kept apart by port: two viewers on one machine must
// not overwrite each other's.
const cookiePrefix = "agmem_ui_"

// refreshBudget bounds how long a page waits for the search index to catch up with
// the journal and git before it answers from the index as it is.
const refreshBudget = 200 * time.Millisecond

// Server serves one memory repo's pages, one request at a time: go-git's storage and
// the index are read by one goroutine at a time, and each request first takes in what
// other processes (a flush, the daemon) wrote since the last one.
type Server struct {
	repo  memrepo.Repo
	token string
	pages *template.Template

	mu  sync.Mutex
	mem *recall.Memory
}

// NewToken is a random token for a Server: 128 bits, hex.
func NewToken() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// New serves repo's memory, mem, which the Server closes; requests must carry token.
// Each page waits for what is new in the memory at most refreshBudget.
func New(repo memrepo.Repo, mem *recall.Memory, token string) (*Server, error) {
	pages, err := template.New("").Funcs(funcs).ParseFS(files, "templates/*.html")
	if err != nil {
		mem.Close()
		return nil, err
	}
	return &Server{repo: repo, token: token, pages: pages, mem: mem}, nil
}

// Close closes the memory's index.
func (s *Server) Close() error { return s.mem.Close() }

// Handler serves the pages to requests that name the address it listens on, addr
// ("127.0.0.1:8123"), as their Host and carry the token.
func (s *Server) Handler(addr string) http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(files, "static")
	serveFile := http.FileServerFS(static)
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "" || strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r) // a file, not a listing of them
			return
		}
		serveFile.ServeHTTP(w, r)
	})))
	mux.HandleFunc("GET /{$}", s.sessionsPage)
	mux.HandleFunc("GET /session/{id}", s.sessionPage)
	mux.HandleFunc("GET /session/{id}/count", s.sessionCount)
	mux.HandleFunc("GET /observation/{id}", s.observationPage)
	mux.HandleFunc("GET /search", s.searchPage)
	mux.HandleFunc("GET /commit/{hash}", s.commitPage)
	return s.guard(addr, mux)
}

// guard lets through only GET and HEAD requests for addr that carry the token, one at
// a time, and gives every answer the headers that keep a page to itself.
func (s *Server) guard(addr string, next http.Handler) http.Handler {
	listenHost, port, _ := net.SplitHostPort(addr)
	cookie := cookiePrefix + port
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "+
			"connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer") // the token may be in the URL
		h.Set("Cache-Control", "no-store")
		if !hostAllowed(r.Host, listenHost, port) {
			http.Error(w, "agmem ui answers only at its own address, "+addr, http.StatusMisdirectedRequest)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, "agmem ui is read-only", http.StatusMethodNotAllowed)
			return
		}
		if t := r.URL.Query().Get("token"); t != "" && s.valid(t) {
			http.SetCookie(w, &http.Cookie{Name: cookie, Value: t, Path: "/", HttpOnly: true,
				SameSite: http.SameSiteStrictMode})
			q := r.URL.Query()
			q.Del("token")
			// To this server's own path: "//elsewhere/" would be another site.
			to := "/" + strings.TrimLeft(r.URL.EscapedPath(), "/\\")
			if len(q) > 0 {
				to += "?" + q.Encode()
			}
			http.Redirect(w, r, to, http.StatusSeeOther)
			return
		}
		if c, err := r.Cookie(cookie); err != nil || !s.valid(c.Value) {
			http.Error(w, "agmem ui needs its token: open the URL agmem ui printed", http.StatusForbidden)
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if err := s.mem.Recheck(); err != nil {
			http.Error(w, "agmem ui: "+hint.OneLine(err.Error()), http.StatusServiceUnavailable)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// hostAllowed reports whether a request's Host names this server: its port (80 when
// none is given) and, for its host, the address it listens on, an address of this
// machine when it listens on all of them, or "localhost". A name any other DNS server
// answers is refused: a page of another site that rebinds its name to 127.0.0.1 gets
// nothing.
func hostAllowed(requested, listenHost, port string) bool {
	host, p, err := net.SplitHostPort(requested)
	if err != nil {
		host, p = requested, "80"
	}
	if p != port {
		return false
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") || host == listenHost {
		return true
	}
	ip, listen := net.ParseIP(host), net.ParseIP(listenHost)
	if ip == nil || listen == nil {
		return false
	}
	if ip.Equal(listen) {
		return true
	}
	if !listen.IsUnspecified() {
		return false
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}

func (s *Server) valid(token string) bool {
	return subtle.ConstantTimeCompare([]byte(token), []byte(s.token)) == 1
}

// memory is the memory brought up to date, within refreshBudget: a page answers from
// the index as it is rather than not at all.
func (s *Server) memory(r *http.Request) *recall.Memory {
	ctx, cancel := context.WithTimeout(r.Context(), refreshBudget)
	defer cancel()
	s.mem.Refresh(ctx)
	return s.mem
}
