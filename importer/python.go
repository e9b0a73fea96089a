package importer

import (
	"bufio"
	"encoding/json"
	"time"

	"github.com/agmem/agmem/capture"
)

// readPythonSession reads the Python agmem's daemon_session.json: its observations,
// each in the session it names.
func readPythonSession(br *bufio.Reader, p capture.Policy, now time.Time, f *File) error {
	var session struct {
		SessionID    string            `json:"session_id"`
		Observations []json.RawMessage `json:"observations"`
	}
	if err := json.NewDecoder(br).Decode(&session); err != nil {
		return err
	}
	for _, raw := range session.Observations {
		var n capture.Native
		if err := json.Unmarshal(raw, &n); err != nil || n.ToolName == nil {
			f.NotUnderstood++
			continue
		}
		if n.SessionID == "" {
			n.SessionID = session.SessionID
		}
		if n.Source == "" {
			n.Source = capture.SourceNative
		}
		d, err := capture.FromNative(n, p, now)
		if err == nil && n.ID == "" {
			identify(d, raw, n.Timestamp != "")
		}
		f.add(decoded{d, err})
	}
	return nil
}
