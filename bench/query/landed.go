package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/revtrack/revtrack/bench/internal/benchkit"
	"github.com/revtrack/revtrack/schemas"
	"github.com/revtrack/revtrack/schemas/reportingbackfill"
)

// What the load waits for, per table: rows as inserted (cheap to count, duplicates and all, for
// progress) and distinct keys (what the table holds once ReplacingMergeTree has merged).
const (
	countTransactions = `SELECT count(), uniqExact(transaction_id) FROM platform_transactions WHERE workspace_id = ?`
	countEvents       = `SELECT count(), uniqExact(app_id, event_key) FROM platform_lifecycle_events WHERE workspace_id = ?`
	countCustomers    = `SELECT count(), uniqExact(app_id, customer_id) FROM platform_customers WHERE workspace_id = ?`
	rowsTransactions  = `SELECT count() FROM platform_transactions WHERE workspace_id = ?`
	rowsEvents        = `SELECT count() FROM platform_lifecycle_events WHERE workspace_id = ?`
	activeMerges      = `SELECT count() FROM system.merges WHERE database = ?`
	activeParts       = `SELECT table, count(), sum(rows) FROM system.parts WHERE database = ? AND active AND table LIKE 'platform_%' GROUP BY table ORDER BY table`
)

// landed is what one table holds for the bench workspace.
type landed struct {
	Rows     uint64 `json:"rows"`     // rows inserted (a redelivered record counts twice until merged)
	Distinct uint64 `json:"distinct"` // distinct platform keys
}

// counts reads rows and distinct keys of a table (one of the count* queries).
func (s *stack) counts(ctx context.Context, query, workspaceID string) (landed, error) {
	var l landed
	err := s.conn.QueryRow(ctx, query, workspaceID).Scan(&l.Rows, &l.Distinct)
	return l, err
}

// rows reads the inserted rows of a table (one of the rows* queries).
func (s *stack) rows(ctx context.Context, query, workspaceID string) (uint64, error) {
	var n uint64
	err := s.conn.QueryRow(ctx, query, workspaceID).Scan(&n)
	return n, err
}

// settle waits (up to timeout) until ClickHouse runs no merge in the database, so that the query
// runs do not measure a table in the middle of a merge, and returns the active parts per table.
func (s *stack) settle(ctx context.Context, timeout time.Duration) (waited time.Duration, parts []tableParts, err error) {
	start := time.Now()
	for {
		var n uint64
		if err := s.conn.QueryRow(ctx, activeMerges, s.ch.Database).Scan(&n); err != nil {
			return time.Since(start), nil, err
		}
		if n == 0 || time.Since(start) > timeout {
			break
		}
		select {
		case <-ctx.Done():
			return time.Since(start), nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
	waited = time.Since(start)
	rows, err := s.conn.Query(ctx, activeParts, s.ch.Database)
	if err != nil {
		return waited, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var p tableParts
		if err := rows.Scan(&p.Table, &p.Parts, &p.Rows); err != nil {
			return waited, nil, err
		}
		parts = append(parts, p)
	}
	return waited, parts, rows.Err()
}

type tableParts struct {
	Table       string
	Parts, Rows uint64
}

// marker records the data set loaded on the bench stack, so that -reuse can skip the load: it is
// reused only if it describes the same generated data and ClickHouse still holds all of it.
type marker struct {
	Scale float64 `json:"scale"`
	Facts facts   `json:"facts"`
	// Migrations are the schema migrations (version_name:checksum) of the code that loaded the data
	// set. A migration added since may create tables that materialized views fill from new inserts
	// only, so a data set loaded before it is reloaded rather than reused.
	Migrations  []string   `json:"migrations"`
	Slug        string     `json:"slug"`
	WorkspaceID string     `json:"workspaceId"`
	LoadedAt    time.Time  `json:"loadedAt"`
	Load        loadResult `json:"load"`
	// Tracking is the tracking part (tracking.go); nil for a data set loaded before it existed.
	Tracking *trackingResult `json:"tracking,omitempty"`
}

const markerFile = "bench-query.json"

// migrations lists the schema migrations this code applies, as the marker records them.
func migrations() ([]string, error) {
	ms, err := schemas.Migrations()
	if err != nil {
		return nil, err
	}
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = fmt.Sprintf("%04d_%s:%s", m.Version, m.Name, m.Checksum)
	}
	return out, nil
}

func readMarker(dir string) (marker, error) {
	var m marker
	b, err := os.ReadFile(filepath.Join(dir, markerFile))
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%s: %w", markerFile, err)
	}
	return m, nil
}

func writeMarker(dir string, m marker) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp := filepath.Join(dir, markerFile+".tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, markerFile))
}

func removeMarker(dir string) error {
	err := os.Remove(filepath.Join(dir, markerFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// viewTargetRe names the table a materialized view writes.
var viewTargetRe = regexp.MustCompile(`(?i)CREATE MATERIALIZED VIEW (?:IF NOT EXISTS )?\w+ TO (\w+)`)

// additiveOnly reports whether now only appends migrations to then, none of which creates a
// materialized view other than one writing a summary or a copy that the start-up backfill fills
// (reportingbackfill.SummaryTables, schemas.Copies: reportingbackfill.Auto fills a copy that is empty
// while its source holds rows): such a migration (a table a job fills, a plain view, a summarised
// view, a new copy) holds for loaded rows as well as new ones, and the query phase's `revtrack query`
// applies it, and fills what the view missed, when it starts.
func additiveOnly(then, now []string) bool {
	if len(now) <= len(then) || !slices.Equal(now[:len(then)], then) {
		return false
	}
	ms, err := schemas.Migrations()
	if err != nil || len(ms) != len(now) {
		return false
	}
	return viewsFilledAtStart(ms[len(then):])
}

// viewsFilledAtStart reports whether every materialized view the migrations create writes a
// summary or a copy (additiveOnly).
func viewsFilledAtStart(ms []schemas.Migration) bool {
	copies, err := schemas.Copies()
	if err != nil {
		return false
	}
	filled := reportingbackfill.SummaryTables()
	for _, c := range copies {
		filled = append(filled, c.Table)
	}
	for _, m := range ms {
		for _, st := range m.Statements {
			if !strings.Contains(strings.ToUpper(st), "MATERIALIZED VIEW") {
				continue
			}
			if v := viewTargetRe.FindStringSubmatch(st); v == nil || !slices.Contains(filled, v[1]) {
				return false
			}
		}
	}
	return true
}

// reusable checks that the bench stack holds the data set the marker describes: the same generated
// data, and every transaction and event in ClickHouse. It returns why not when it does not.
func (s *stack) reusable(ctx context.Context, m marker, want facts) (string, error) {
	mig, err := migrations()
	if err != nil {
		return "", err
	}
	if !slices.Equal(m.Migrations, mig) && !additiveOnly(m.Migrations, mig) {
		return fmt.Sprintf("the schema changed since the load (%d migrations then, %d now, or a changed one): tables that "+
			"materialized views fill from new inserts would miss the loaded rows", len(m.Migrations), len(mig)), nil
	}
	if !m.Facts.sameData(want) {
		return fmt.Sprintf("the stack holds another data set (scale %v, %s customers, ending %s)", m.Scale,
			benchkit.Num(float64(m.Facts.Customers)), m.Facts.End), nil
	}
	if ok, err := s.databaseExists(ctx); err != nil || !ok {
		return "the stack has no revtrack database", err
	}
	if err := s.open(ctx); err != nil {
		return "", err
	}
	tx, err := s.counts(ctx, countTransactions, m.WorkspaceID)
	if err != nil {
		return "", err
	}
	ev, err := s.counts(ctx, countEvents, m.WorkspaceID)
	if err != nil {
		return "", err
	}
	if tx.Distinct != uint64(want.Transactions) || ev.Distinct != uint64(want.EventKeys) {
		return fmt.Sprintf("ClickHouse holds %d of %d transactions and %d of %d events", tx.Distinct, want.Transactions,
			ev.Distinct, want.EventKeys), nil
	}
	return "", nil
}
