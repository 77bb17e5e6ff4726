package processors

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/revtrack/revtrack/schemas"
)

// Retention (docs/ARCHITECTURE.md, "Data flow"; docs/TRACKING.md, "Event times"): raw tracking
// events are deleted after 180 days; upload click, acquisition and merchant identifiers are scrubbed
// after 180 days. The period is defined beside the event-time rule, which refuses at the edge what
// this job would delete at its next pass.
const (
	RetentionPeriod   = schemas.RetentionPeriod
	retentionInterval = 24 * time.Hour
)

// retainedTables are the tables of raw tracking data and what is derived from it, each
// partitioned by month (toYYYYMM of its time column). acquisitions, acquisition_clicks and
// acquisition_touches go too: they hold the click IDs and landing URLs of the browser events they
// summarise.
var retainedTables = []string{"acquisition_clicks", "acquisition_touches", "acquisitions", "browser_events", "funnel_events", "server_events", "session_state", "sessions"}

// RetentionConn is the part of a ClickHouse connection the retention job needs.
type RetentionConn interface {
	Query(ctx context.Context, query string, args ...any) (driver.Rows, error)
	QueryRow(ctx context.Context, query string, args ...any) driver.Row
	Exec(ctx context.Context, query string, args ...any) error
}

var _ RetentionConn = (driver.Conn)(nil)

// RetentionReport says what one run did.
type RetentionReport struct {
	Cutoff time.Time
	// Dropped lists "table/YYYYMM" of every partition dropped, in table and month order.
	Dropped []string
	// Scrubbed is the number of upload-queue rows the queued mutation clears (0: none queued).
	Scrubbed uint64
}

var monthPartitionRe = regexp.MustCompile(`^\d{6}$`)

// RunRetention applies retention as of now. A monthly partition is dropped only when all its rows
// are older than the cutoff (the month ends at or before it), so nothing younger than 180 days is
// ever deleted and each row is deleted at most a month late. DROP PARTITION is used rather than a
// TTL or a DELETE mutation: it works on every ClickHouse version and costs no rewrite. Upload-queue
// rows are kept (their status is the upload's history) but their identifiers are cleared by an
// asynchronous mutation, queued only when some row still needs it. Running it again, or on several
// instances at once, is harmless.
func RunRetention(ctx context.Context, conn RetentionConn, now time.Time) (RetentionReport, error) {
	rep := RetentionReport{Cutoff: now.UTC().Add(-RetentionPeriod)}
	parts, err := expiredPartitions(ctx, conn, rep.Cutoff)
	if err != nil {
		return rep, err
	}
	var errs []error
	for _, p := range parts {
		// Both values are validated, never input: see retention_sql.go.
		if err := conn.Exec(ctx, "ALTER TABLE "+p.table+" DROP PARTITION "+p.id); err != nil {
			errs = append(errs, fmt.Errorf("drop %s partition %s: %w", p.table, p.id, err))
			continue
		}
		rep.Dropped = append(rep.Dropped, p.table+"/"+p.id)
	}
	cutoff := rep.Cutoff.Unix()
	var n uint64
	if err := conn.QueryRow(ctx, countUploadIdentifiers, cutoff).Scan(&n); err != nil {
		return rep, errors.Join(append(errs, fmt.Errorf("count upload identifiers: %w", err))...)
	}
	if n > 0 {
		if err := conn.Exec(ctx, scrubUploadIdentifiers, cutoff); err != nil {
			return rep, errors.Join(append(errs, fmt.Errorf("scrub upload identifiers: %w", err))...)
		}
		rep.Scrubbed = n
	}
	return rep, errors.Join(errs...)
}

type partition struct{ table, id string }

func expiredPartitions(ctx context.Context, conn RetentionConn, cutoff time.Time) ([]partition, error) {
	rows, err := conn.Query(ctx, selectRetainedPartitions, retainedTables)
	if err != nil {
		return nil, fmt.Errorf("list partitions: %w", err)
	}
	defer rows.Close()
	allowed := map[string]bool{}
	for _, t := range retainedTables {
		allowed[t] = true
	}
	var out []partition
	for rows.Next() {
		var p partition
		if err := rows.Scan(&p.table, &p.id); err != nil {
			return nil, err
		}
		if !allowed[p.table] || !monthPartitionRe.MatchString(p.id) {
			continue // not a monthly partition of ours: never touch it
		}
		ym, _ := strconv.Atoi(p.id)
		end := time.Date(ym/100, time.Month(ym%100)+1, 1, 0, 0, 0, 0, time.UTC) // first instant after the month
		if !end.After(cutoff) {
			out = append(out, p)
		}
	}
	return out, rows.Err()
}

// runRetentionDaily runs retention now and then every day until ctx ends. A failed run is logged
// and tried again the next day: retention is never worth stopping the consumers for.
func runRetentionDaily(ctx context.Context, conn RetentionConn, cl RetentionCluster, log *slog.Logger) {
	t := time.NewTicker(retentionInterval)
	defer t.Stop()
	for {
		rep, err := RunClusterRetention(ctx, conn, time.Now(), cl)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Error("retention run failed; retrying tomorrow", "err", err, "dropped", rep.Dropped)
		case err == nil && (len(rep.Dropped) > 0 || rep.Scrubbed > 0):
			log.Info("retention applied", "cutoff", rep.Cutoff, "dropped", rep.Dropped, "scrubbed_upload_rows", rep.Scrubbed)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
