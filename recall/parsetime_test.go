package recall_test

import (
	"testing"
	"time"

	"github.com/agmem/agmem/recall"
)

// TestParseTime: the forms a time filter takes, and times past what the index holds
// (Unix nanoseconds) bound nothing out rather than everything.
func TestParseTime(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		in   string
		want time.Time
	}{
		{"", time.Time{}},
		{"2026-11-30", time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)},
		{" 2026-11-30T09:00:00Z ", time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)},
		{"2026-11-30t09:00:00z", time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)}, // RFC 3339 allows lower case
		{"2026-11-30T09:00", time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)},
		{"2026-11-30T09:00:30", time.Date(2026, 11, 30, 9, 0, 30, 0, time.UTC)},
		{"2026-11-30T09:00+01:00", time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)},
		{"2026-11-30T09:00:00.5-02:00", time.Date(2026, 11, 30, 11, 0, 0, 5e8, time.UTC)},
		{"7d", now.Add(-7 * 24 * time.Hour)},
		{"90m", now.Add(-90 * time.Minute)},
		{"2300-01-01", time.Unix(0, 1<<63-1).UTC()},
		{"1600-01-01", time.Unix(0, -1<<63).UTC()},
		{"1000000d", time.Unix(0, -1<<63).UTC()},
	} {
		got, ok := recall.ParseTime(c.in, now)
		if !ok || !got.Equal(c.want) {
			t.Errorf("%q: %v %v, want %v", c.in, got, ok, c.want)
		}
	}
	for _, bad := range []string{"yesterday", "-3d", "-1h", "7 d", "2026-13-01", "08:00", "2026-11-30T25:00", "2026-11-30 09:00"} {
		if _, ok := recall.ParseTime(bad, now); ok {
			t.Errorf("%q read as a time", bad)
		}
	}
}
