package importer

import (
	"encoding/json"
	"io"
	"os"

	"github.com/agmem/agmem/capture"
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

// pythonSession reads a daemon_session.json: its observations, each in the session it
// names.
func (r *reader) pythonSession(in io.Reader) error {
	var session pythonSession
	if err := json.NewDecoder(in).Decode(&session); err != nil {
		return err
	}
	for _, raw := range session.Observations {
		var n capture.Native
		if err := json.Unmarshal(raw, &n); err != nil || n.ToolName == nil {
			r.f.NotUnderstood++
			continue
		}
		if n.SessionID == "" {
			n.SessionID = session.SessionID
		}
		if n.Source == "" {
			n.Source = capture.SourceNative
		}
		d, err := capture.FromNative(n, r.p, r.now)
		if err == nil && n.ID == "" {
			d.IdentifyBy(raw, n.Timestamp != "")
		}
		r.add(decoded{d, err}, len(raw))
	}
	return nil
}
