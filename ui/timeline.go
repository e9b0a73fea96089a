package ui

import (
	"cmp"
	"fmt"
	"time"

	"github.com/agmem/agmem/memory"
)

// The timeline's picture: an SVG time axis with a lane per memory type, each call a
// bar from its start to its end, events as marks above. Past maxBars calls it is drawn
// from a summary: the axis cut into columns, one bar a column and lane, as dark as the
// calls it holds are many, red when one of them failed.
const (
	svgWidth    = 1000
	laneHeight  = 28
	axisTop     = 24 // room for the event marks
	labelWidth  = 90
	maxBars     = 2000
	summaryCols = 400
	maxMarks    = 500 // past it, events other than prompts and the context given are not drawn, and those are drawn a column at a time
)

var lanes = []memory.Type{memory.Episodic, memory.Semantic, memory.Procedural}

// timeline is what the session page draws.
type timeline struct {
	Width, Height int
	Lanes         []lane
	Bars          []bar
	Marks         []mark
	Ticks         []tick
	Summary       bool // drawn from a summary: too many calls for a bar each
}

type lane struct {
	Name string
	Y    int
}

type bar struct {
	X, Y, W, H float64
	Failed     bool
	Opacity    float64
	ID         string // the call it opens
	Title      string
}

type mark struct {
	X     float64
	ID    string // the event it opens
	Title string
	Kind  string // "prompt", "context" or "event"
}

type tick struct {
	X    float64
	Text string
}

func drawTimeline(entries []memory.Entry) timeline {
	t := timeline{Width: svgWidth, Height: axisTop + len(lanes)*laneHeight + 20}
	for i, l := range lanes {
		t.Lanes = append(t.Lanes, lane{Name: string(l), Y: axisTop + i*laneHeight})
	}
	if len(entries) == 0 {
		return t
	}
	start, end := entries[0].Time(), entries[0].Time()
	observations := 0
	for _, e := range entries {
		at, until := span(e)
		start, end = minTime(start, at), maxTime(end, until)
		if e.Observation != nil {
			observations++
		}
	}
	if !end.After(start) {
		end = start.Add(time.Second)
	}
	scale := float64(svgWidth-labelWidth) / float64(end.Sub(start))
	x := func(at time.Time) float64 { return labelWidth + float64(at.Sub(start))*scale }
	layout := "15:04:05"
	if end.Sub(start) > 24*time.Hour || start.Local().Day() != end.Local().Day() {
		layout = "Jan 2 15:04"
	}
	for i := 0; i <= 4; i++ {
		at := start.Add(end.Sub(start) * time.Duration(i) / 4)
		t.Ticks = append(t.Ticks, tick{X: x(at), Text: at.Local().Format(layout)})
	}
	events := len(entries) - observations
	laneOf := func(o *memory.Observation) int {
		for i, l := range lanes {
			if o.MemoryType == l {
				return i
			}
		}
		return 0
	}
	t.Summary = observations > maxBars
	type cell struct {
		n      int
		failed bool
		first  string
	}
	var cells [][summaryCols]cell
	if t.Summary {
		cells = make([][summaryCols]cell, len(lanes))
	}
	for _, e := range entries {
		if ev := e.Event; ev != nil {
			kind := "event"
			switch ev.Name {
			case "UserPromptSubmit":
				kind = "prompt"
			case memory.ContextGiven:
				kind = "context"
			}
			if kind == "event" && events > maxMarks {
				continue
			}
			t.Marks = append(t.Marks, mark{X: x(ev.Timestamp), ID: ev.ID, Kind: kind,
				Title: ev.Name + " " + clipText(ev.Text, 120)})
			continue
		}
		o := e.Observation
		l := laneOf(o)
		if t.Summary {
			col := min(int((x(o.Timestamp)-labelWidth)/float64(svgWidth-labelWidth)*summaryCols), summaryCols-1)
			c := &cells[l][col]
			if c.n == 0 {
				c.first = o.ID
			}
			c.n++
			c.failed = c.failed || o.Error != ""
			continue
		}
		at, until := span(e)
		t.Bars = append(t.Bars, bar{X: x(at), Y: float64(axisTop + l*laneHeight + 4), W: max(x(until)-x(at), 2),
			H: laneHeight - 8, Failed: o.Error != "", Opacity: 1, ID: o.ID,
			Title: fmt.Sprintf("%s (%s)", clipText(cmp.Or(o.Summary, o.ToolName), 120), duration(o))})
	}
	if len(t.Marks) > maxMarks {
		t.Marks = markColumns(t.Marks)
	}
	if t.Summary {
		colWidth := float64(svgWidth-labelWidth) / summaryCols
		for l := range cells {
			for col, c := range cells[l] {
				if c.n == 0 {
					continue
				}
				t.Bars = append(t.Bars, bar{X: labelWidth + float64(col)*colWidth, Y: float64(axisTop + l*laneHeight + 4),
					W: colWidth, H: laneHeight - 8, Failed: c.failed, Opacity: min(0.25+float64(c.n)/20, 1),
					ID: c.first, Title: fmt.Sprintf("%d calls", c.n)})
			}
		}
	}
	return t
}

// markColumns draws marks too many to draw each (a session of thousands of prompts)
// as the bars' summary draws calls: one mark a column of the axis and kind, which
// opens the first of its events and says how many it stands for.
func markColumns(marks []mark) []mark {
	type key struct {
		col  int
		kind string
	}
	var out []mark
	var n []int // how many marks each of out stands for
	at := map[key]int{}
	for _, m := range marks {
		k := key{min(int((m.X-labelWidth)/float64(svgWidth-labelWidth)*summaryCols), summaryCols-1), m.Kind}
		i, ok := at[k]
		if !ok {
			i, at[k] = len(out), len(out)
			out, n = append(out, m), append(n, 0)
		}
		n[i]++
	}
	for i := range out {
		if n[i] > 1 {
			out[i].Title = fmt.Sprintf("%d %s events, the first %s", n[i], out[i].Kind, out[i].Title)
		}
	}
	return out
}

// span is when an entry began and ended: a call lasts its duration_ms.
func span(e memory.Entry) (time.Time, time.Time) {
	at := e.Time()
	if o := e.Observation; o != nil && o.DurationMS != nil && *o.DurationMS > 0 {
		return at, at.Add(time.Duration(*o.DurationMS) * time.Millisecond)
	}
	return at, at
}

func duration(o *memory.Observation) string {
	if o.DurationMS == nil {
		return "no duration"
	}
	return (time.Duration(*o.DurationMS) * time.Millisecond).String()
}

func clipText(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
