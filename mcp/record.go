package mcp

import "fmt"

// recorder hands finished calls to the record function on a goroutine of its own, in
// batches: while one batch is being written, the calls that finish meanwhile wait and
// go together in the next, so a burst of calls costs a few journal transactions rather
// than one each, and a call that comes alone is written at once.
type recorder struct {
	calls  *queue[Call]
	record func([]Call) error
	failed func(error) // told of the first batch that could not be recorded
	done   chan struct{}
}

func startRecorder(record func([]Call) error, failed func(error)) *recorder {
	r := &recorder{calls: newQueue[Call](), record: record, failed: failed, done: make(chan struct{})}
	go r.run()
	return r
}

func (r *recorder) run() {
	defer close(r.done)
	warned := false
	for {
		batch, ok := r.calls.take()
		if !ok {
			return
		}
		if err := r.recordSafely(batch); err != nil && !warned {
			warned = true
			r.failed(err)
		}
	}
}

// recordSafely records a batch, turning a panic into an error: a goroutine's panic
// would end the proxy with Go's exit status 2, which agents read as "block".
func (r *recorder) recordSafely(batch []Call) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("internal error while recording: %v", p)
		}
	}()
	return r.record(batch)
}

// close waits until every call put has been handed to the record function.
func (r *recorder) close() {
	r.calls.close()
	<-r.done
}
