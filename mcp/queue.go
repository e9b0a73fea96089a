package mcp

import "sync"

// queue hands values from any number of goroutines to one that takes them all at once.
// put never waits: a producer on the relay path must not be held up by the consumer.
// What is put after close is dropped.
type queue[T any] struct {
	mu     sync.Mutex
	items  []T
	closed bool
	wake   chan struct{} // holds a token while items or the close wait to be taken
}

func newQueue[T any]() *queue[T] { return &queue[T]{wake: make(chan struct{}, 1)} }

func (q *queue[T]) put(v T) {
	q.mu.Lock()
	if !q.closed {
		q.items = append(q.items, v)
	}
	q.mu.Unlock()
	q.signal()
}

// close says nothing more will be put; take returns what is left, then false.
func (q *queue[T]) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
}

func (q *queue[T]) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// take waits for values and returns all of them, in the order they were put; ok is
// false once the queue is closed and empty.
func (q *queue[T]) take() (items []T, ok bool) {
	for {
		q.mu.Lock()
		items, closed := q.items, q.closed
		q.items = nil
		q.mu.Unlock()
		if len(items) > 0 || closed {
			return items, len(items) > 0
		}
		<-q.wake
	}
}
