package processors

import "container/list"

// stateCache holds the committed state of recently active browsers, least recently used first out.
// It is only a cache: ClickHouse's session_state is the store, so an evicted or dropped browser
// costs one batched lookup the next time it appears, never a wrong answer. Memory is bounded both
// in browsers and in seen-event hashes (8 bytes each), the part that varies per browser.
type stateCache struct {
	maxBrowsers, maxHashes int
	hashes                 int
	ll                     *list.List // front: most recently used
	m                      map[browserKey]*list.Element
}

type cacheEntry struct {
	key       browserKey
	partition int32
	st        *browserState
}

func newStateCache(maxBrowsers, maxHashes int) *stateCache {
	return &stateCache{maxBrowsers: maxBrowsers, maxHashes: maxHashes, ll: list.New(), m: map[browserKey]*list.Element{}}
}

// get returns the state of k (nil if absent) and marks it used.
func (c *stateCache) get(k browserKey) (*browserState, bool) {
	el, ok := c.m[k]
	if !ok {
		return nil, false
	}
	c.ll.MoveToFront(el)
	return el.Value.(*cacheEntry).st, true
}

// put stores st (which the caller no longer modifies) and evicts the least recently used browsers
// beyond the bounds.
func (c *stateCache) put(k browserKey, partition int32, st *browserState) {
	if el, ok := c.m[k]; ok {
		c.remove(el)
	}
	c.m[k] = c.ll.PushFront(&cacheEntry{key: k, partition: partition, st: st})
	c.hashes += len(st.Seen)
	for c.ll.Len() > c.maxBrowsers || (c.hashes > c.maxHashes && c.ll.Len() > 1) {
		c.remove(c.ll.Back())
	}
}

// dropPartitions forgets every browser of the given partitions and returns how many.
func (c *stateCache) dropPartitions(partitions map[int32]bool) int {
	n := 0
	for el := c.ll.Front(); el != nil; {
		next := el.Next()
		if partitions[el.Value.(*cacheEntry).partition] {
			c.remove(el)
			n++
		}
		el = next
	}
	return n
}

func (c *stateCache) len() int { return c.ll.Len() }

func (c *stateCache) remove(el *list.Element) {
	e := c.ll.Remove(el).(*cacheEntry)
	delete(c.m, e.key)
	c.hashes -= len(e.st.Seen)
}
