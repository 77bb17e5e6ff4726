package clickhousex

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// deadOnce answers its first read of each kind with the error CI saw once from the driver ("failed
// to read packet: … use of closed network connection"), then succeeds.
type deadOnce struct {
	driver.Conn
	calls map[string]int
	err   error
	// scanFails: the error comes at Scan (the driver streams after the first block), not at QueryRow.
	scanFails bool
}

func (d *deadOnce) fail(kind string) error {
	d.calls[kind]++
	if d.calls[kind] == 1 {
		return d.err
	}
	return nil
}

func (d *deadOnce) Query(context.Context, string, ...any) (driver.Rows, error) {
	return nil, d.fail("query")
}

func (d *deadOnce) QueryRow(context.Context, string, ...any) driver.Row {
	if d.scanFails {
		return row{scanErr: d.fail("row")}
	}
	return row{err: d.fail("row")}
}

func (d *deadOnce) Select(context.Context, any, string, ...any) error { return d.fail("select") }

type row struct{ err, scanErr error }

func (r row) Err() error { return r.err }
func (r row) Scan(...any) error {
	if r.err != nil {
		return r.err
	}
	return r.scanErr
}
func (r row) ScanStruct(dest any) error { return r.Scan(dest) }

// TestReadsRetryABrokenConnectionOnce: a read that fails because its connection died is sent once
// more; any other error, a second failure, or a caller that gave up is returned as it is.
func TestReadsRetryABrokenConnectionOnce(t *testing.T) {
	closed := fmt.Errorf("failed to read packet: read tcp 127.0.0.1:1->127.0.0.1:2: %w", net.ErrClosed)
	reads := func(c driver.Conn, ctx context.Context) []error {
		_, qerr := c.Query(ctx, "SELECT 1")
		return []error{qerr, c.QueryRow(ctx, "SELECT 1").Err(), c.Select(ctx, nil, "SELECT 1")}
	}
	d := &deadOnce{calls: map[string]int{}, err: closed}
	for i, err := range reads(rereadConn{d}, context.Background()) {
		if err != nil {
			t.Errorf("read %d: %v", i, err)
		}
	}
	if d.calls["query"] != 2 || d.calls["row"] != 2 || d.calls["select"] != 2 {
		t.Errorf("calls %v, want two of each", d.calls)
	}

	d = &deadOnce{calls: map[string]int{}, err: closed, scanFails: true}
	if err := (rereadConn{d}).QueryRow(context.Background(), "SELECT 1").Scan(); err != nil || d.calls["row"] != 2 {
		t.Errorf("a row whose connection died at Scan: %v after %d reads", err, d.calls["row"])
	}

	other := errors.New("code: 60, message: Table revtrack.x doesn't exist")
	d = &deadOnce{calls: map[string]int{}, err: other}
	for i, err := range reads(rereadConn{d}, context.Background()) {
		if !errors.Is(err, other) {
			t.Errorf("read %d with a server error: %v", i, err)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d = &deadOnce{calls: map[string]int{}, err: closed}
	for i, err := range reads(rereadConn{d}, ctx) {
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("read %d after the caller gave up: %v", i, err)
		}
	}
}
