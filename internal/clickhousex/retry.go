package clickhousex

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// rereadConn sends a read again, once, on a fresh connection when the pooled one it was given turns
// out to be dead before any row came back. The driver can hand out a connection whose socket is
// already closed (clickhouse-go issues #1263 and #1868 describe the class): the read fails with
// "use of closed network connection" although the server is fine, and the driver drops that
// connection, so the second attempt dials a new one. Reads only: a write is never repeated here,
// since its caller (a consume loop, a sync's batch) decides what a retry means.
type rereadConn struct{ driver.Conn }

func (c rereadConn) Query(ctx context.Context, query string, args ...any) (driver.Rows, error) {
	rows, err := c.Conn.Query(ctx, query, args...)
	if brokenConn(ctx, err) {
		rows, err = c.Conn.Query(ctx, query, args...)
	}
	return rows, err
}

func (c rereadConn) QueryRow(ctx context.Context, query string, args ...any) driver.Row {
	row := c.Conn.QueryRow(ctx, query, args...)
	if brokenConn(ctx, row.Err()) {
		row = c.Conn.QueryRow(ctx, query, args...)
	}
	return rereadRow{Row: row, again: func() driver.Row { return c.Conn.QueryRow(ctx, query, args...) }, ctx: ctx}
}

// rereadRow: the driver streams a result after its first block, so a connection that dies under a
// one-row read fails at Scan, not at QueryRow; the row is read once more then, as a whole.
type rereadRow struct {
	driver.Row
	again func() driver.Row
	ctx   context.Context
}

func (r rereadRow) Scan(dest ...any) error {
	err := r.Row.Scan(dest...)
	if brokenConn(r.ctx, err) {
		err = r.again().Scan(dest...)
	}
	return err
}

func (r rereadRow) ScanStruct(dest any) error {
	err := r.Row.ScanStruct(dest)
	if brokenConn(r.ctx, err) {
		err = r.again().ScanStruct(dest)
	}
	return err
}

func (c rereadConn) Select(ctx context.Context, dest any, query string, args ...any) error {
	err := c.Conn.Select(ctx, dest, query, args...)
	if brokenConn(ctx, err) {
		err = c.Conn.Select(ctx, dest, query, args...)
	}
	return err
}

// BrokenConn says err is a connection that died under a request, which a caller whose work is
// safe to repeat may retry once (the next request gets a fresh connection).
func BrokenConn(ctx context.Context, err error) bool { return brokenConn(ctx, err) }

// brokenConn: the error says the connection died under the read, and the caller has not given up.
func brokenConn(ctx context.Context, err error) bool {
	if err == nil || ctx.Err() != nil {
		return false
	}
	return errors.Is(err, net.ErrClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
