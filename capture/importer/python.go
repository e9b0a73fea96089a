package importer

import (
	"encoding/json"
	"io"
	"os"

	"github.com/agmem/agmem/memory"
)

// pythonSession is the Python agmem's daemon_session.json, as far as agmem reads it.
type pythonSession struct {
	SessionID    string            `json:"session_id"`
	Observations []json.RawMessage `json:"observations"`
}

// sessionOf reads a session file's session id and the ids of its observations.
func sessionOf(path string) (session string, ids []string, err error) {
	fh, err := os.Open(path)
	if err != nil {
		return "", nil, err
	}
	defer fh.Close()
	var s struct {
		SessionID    string `json:"session_id"`
		Observations []struct {
			ID string `json:"id"`
		} `json:"observations"`
	}
	if err := json.NewDecoder(fh).Decode(&s); err != nil {
		return "", nil, err
	}
	for _, o := range s.Observations {
		if id, err := memory.NormalizeID(o.ID); err == nil {
			ids = append(ids, id)
		}
	}
	return s.SessionID, ids, nil
}

// pythonSession gives each observation of a daemon_session.json, in the session the
// file names.
func (f *File) pythonSession(in io.Reader, each func(Item) error) error {
	var session pythonSession
	if err := json.NewDecoder(in).Decode(&session); err != nil {
		return err
	}
	for i, raw := range session.Observations {
		if err := each(Item{Object: raw, Session: session.SessionID, Line: i + 1}); err != nil {
			return err
		}
	}
	return nil
}
