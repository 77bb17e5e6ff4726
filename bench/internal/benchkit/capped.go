package benchkit

import (
	"bytes"
	"sync"
)

// Capped keeps the first max bytes written to it: revtrack runs with --log-level warn inside the
// benchmark, and a run that goes wrong must not fill memory with repeats of the same warning.
type Capped struct {
	mu  sync.Mutex
	max int
	buf bytes.Buffer
}

// NewCapped keeps up to max bytes.
func NewCapped(max int) *Capped { return &Capped{max: max} }

func (c *Capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (c *Capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}
