package vcs

import "sync"

// boundedCache keeps values by key up to max bytes of them in all, dropping the oldest
// first. Values are never changed in place, so a value got stays whole.
type boundedCache[K comparable, V interface{ size() int }] struct {
	mu    sync.Mutex
	max   int
	byKey map[K]V
	order []K // oldest first
	bytes int
}

func (c *boundedCache[K, V]) get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.byKey[k]
	return v, ok
}

func (c *boundedCache[K, V]) put(k K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byKey[k]; ok {
		return
	}
	if c.byKey == nil {
		c.byKey = map[K]V{}
	}
	c.byKey[k], c.order = v, append(c.order, k)
	for c.bytes += v.size(); c.bytes > c.max && len(c.order) > 1; c.order = c.order[1:] {
		c.bytes -= c.byKey[c.order[0]].size()
		delete(c.byKey, c.order[0])
	}
}
