package ingest

import (
	"context"
	"net"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/internal/kafkax"
)

// brokerProxy stands between one test's Kafka client and the real broker, so that the test can make
// "the broker" hang or go away without touching the broker that other tests (and engineers) share.
type brokerProxy struct {
	target, addr string

	mu    sync.Mutex
	ln    net.Listener
	conns []net.Conn
	// gate is closed while traffic flows; while stalled it is an open channel that holds every chunk.
	gate chan struct{}
}

func newBrokerProxy(t *testing.T, target string) *brokerProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &brokerProxy{target: target, addr: ln.Addr().String(), gate: make(chan struct{})}
	close(p.gate)
	p.serve(ln)
	t.Cleanup(p.down)
	return p
}

func (p *brokerProxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go p.pipe(up, c)
			go p.pipe(c, up)
		}
	}()
}

// pipe copies src to dst. While the proxy is stalled it holds what it read, and the sender's
// writes still succeed (into this buffer and the kernel's), as with a broker that hangs: a produce
// request sent then is in flight and gets no answer.
func (p *brokerProxy) pipe(dst, src net.Conn) {
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			gate := p.gate
			p.mu.Unlock()
			<-gate
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// stall makes the broker hang: connections stay open, nothing is forwarded.
func (p *brokerProxy) stall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.gate:
		p.gate = make(chan struct{})
	default:
	}
}

// resume forwards what was held and everything after it.
func (p *brokerProxy) resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.gate:
	default:
		close(p.gate)
	}
}

// down makes the broker go away: open connections are cut and new ones refused.
func (p *brokerProxy) down() {
	p.mu.Lock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
	p.mu.Unlock()
	p.resume()
}

// up brings the broker back at the same address.
func (p *brokerProxy) up(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	p.serve(ln)
}

// restore ends any outage: held traffic flows and a proxy that is down comes back up.
func (p *brokerProxy) restore() {
	p.resume()
	p.mu.Lock()
	isDown := p.ln == nil
	p.mu.Unlock()
	if isDown {
		if ln, err := net.Listen("tcp", p.addr); err == nil {
			p.serve(ln)
		}
	}
}

// producerVia is the edge's producer, with the options served in production, connected through p.
// Every connection goes to p, whatever address the broker advertises: the test stack has one
// broker.
func producerVia(t *testing.T, kc kafkax.Config, p *brokerProxy) *kgo.Client {
	t.Helper()
	cl, err := kafkax.NewProducer(kc, "proxied", nil, kgo.SeedBrokers(p.addr),
		kgo.Dialer(func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, p.addr)
		}))
	if err != nil {
		t.Fatal(err)
	}
	// A test that failed while the broker hung must not leave Close waiting on it.
	t.Cleanup(func() { p.restore(); cl.Close() })
	return cl
}
