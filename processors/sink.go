package processors

import (
	"context"
	"errors"
	"fmt"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// BatchConn is the part of a ClickHouse connection a table sink needs.
type BatchConn interface {
	PrepareBatch(ctx context.Context, query string, opts ...driver.PrepareBatchOption) (driver.Batch, error)
}

var _ BatchConn = (driver.Conn)(nil)

// TableSink inserts one row per item with a single batch per Write. Insert must name its columns:
// the driver cannot append to an INSERT without an explicit column list.
type TableSink[T any] struct {
	Conn   BatchConn
	Insert string
	Row    func(T) []any
}

// Write inserts the batch. Conversion failures and data errors reported by the server are permanent
// (*RejectedError); everything else (connection, timeouts, too many parts) is transient.
func (s *TableSink[T]) Write(ctx context.Context, batch []T) error {
	b, err := s.Conn.PrepareBatch(ctx, s.Insert)
	if err != nil {
		return fmt.Errorf("prepare %q: %w", s.Insert, err)
	}
	for _, item := range batch {
		if err := b.Append(s.Row(item)...); err != nil {
			_ = b.Abort()
			return &RejectedError{Err: fmt.Errorf("append: %w", err)}
		}
	}
	if err := b.Send(); err != nil {
		if isDataError(err) {
			return &RejectedError{Err: fmt.Errorf("send: %w", err)}
		}
		return fmt.Errorf("send: %w", err)
	}
	return nil
}

// ClickHouse error codes that mean "this data is bad", as opposed to "the server is unwell".
var dataErrorCodes = map[int32]bool{
	6:   true, // CANNOT_PARSE_TEXT
	27:  true, // CANNOT_PARSE_INPUT_ASSERTION_FAILED
	36:  true, // BAD_ARGUMENTS
	41:  true, // CANNOT_PARSE_DATETIME
	53:  true, // TYPE_MISMATCH
	70:  true, // CANNOT_CONVERT_TYPE
	691: true, // UNKNOWN_ELEMENT_OF_ENUM
}

func isDataError(err error) bool {
	var ex *clickhouse.Exception
	return errors.As(err, &ex) && dataErrorCodes[ex.Code]
}
