package reporting

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/internal/testenv/pipeline"
	"github.com/revtrack/revtrack/query/reporting/reportingtest"
)

// recorder is a Conn that remembers every query with its arguments, so that the compatibility test
// can replay exactly what the store sends.
type recorder struct {
	Conn
	mu      sync.Mutex
	queries map[string][]any
}

func (r *recorder) Query(ctx context.Context, q string, args ...any) (driver.Rows, error) {
	r.record(q, args)
	return r.Conn.Query(ctx, q, args...)
}

func (r *recorder) QueryRow(ctx context.Context, q string, args ...any) driver.Row {
	r.record(q, args)
	return r.Conn.QueryRow(ctx, q, args...)
}

func (r *recorder) record(q string, args []any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.queries == nil {
		r.queries = map[string][]any{}
	}
	r.queries[q] = args
}

// env is a migrated database with a store over it and a fixture for workspace "ws".
type env struct {
	conn  driver.Conn
	rec   *recorder
	store *Store
	fx    *reportingtest.Fixture
}

func setup(t *testing.T) env {
	t.Helper()
	db := pipeline.Migrated(t)
	rec := &recorder{Conn: db.Conn}
	return env{conn: db.Conn, rec: rec, store: New(rec, WithClock(reportingtest.Clock)), fx: reportingtest.New(db.Conn, "ws")}
}

func scopeOf(apps ...string) Scope { return Scope{WorkspaceID: "ws", AppIDs: apps} }

// defaultRange is the default range of a request on reportingtest.Today.
var defaultRange = Range{From: MustDate("2026-03-02"), To: MustDate("2026-03-31")}

func ctx(t *testing.T) context.Context { return testenv.Ctx(t) }

// jsonEq compares values by their JSON form.
func jsonEq(t *testing.T, what string, got, want any) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Fatalf("%s:\n got %s\nwant %s", what, g, w)
	}
}

func r4(v int64) *Ratio { r := Ratio(v); return &r }

func timeOf(t Timestamp) time.Time { return time.Time(t) }
