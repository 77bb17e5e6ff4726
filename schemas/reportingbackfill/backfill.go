// Package reportingbackfill fills the tables that materialized views fill with what their sources
// held before the views existed: the copies (schemas.Copies: the reporting copies and the
// derivation's copies) and the summaries (schemas.SummaryOf: acquisition_clicks).
//
// For a copy it runs the view's own SELECT, one part of the source at a time (a workspace's app and
// month, split further by row-ID hash when large), only for the parts where the copy lacks rows or
// holds older versions, and inserts only those rows. Hence it can be
// interrupted and run again, run while landing goes on (the views copy new rows themselves; the
// copies are replacing tables, so a row copied twice is one row), and costs reads only once a copy
// is complete. A copy found complete in every part is recorded in schemas.CopyBackfillsTable.
//
// For a summary it runs the view's own SELECT over each month of the source not yet recorded
// summarised, and records the month, then the summary once every month is (summary.go). The view's
// states merge a row summarised twice into what one gives, so an interrupted month is redone.
package reportingbackfill

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/revtrack/revtrack/schemas"
)

// Conn is the part of a ClickHouse connection the backfill uses.
type Conn interface {
	Exec(ctx context.Context, query string, args ...any) error
	Query(ctx context.Context, query string, args ...any) (driver.Rows, error)
	QueryRow(ctx context.Context, query string, args ...any) driver.Row
	PrepareBatch(ctx context.Context, query string, opts ...driver.PrepareBatchOption) (driver.Batch, error)
}

// DefaultChunkRows bounds the source rows one INSERT … SELECT reads: a few seconds of work on the
// smallest machine, well inside the driver's read timeout.
const DefaultChunkRows = 500_000

// Options select what a run does.
type Options struct {
	// WorkspaceID restricts the run to one workspace; such a run records no copy as complete.
	WorkspaceID string
	// DryRun reads and reports, and writes nothing.
	DryRun bool
	// Tables restricts the run to these copies and summaries (by table name); empty means all.
	Tables []string
	// ChunkRows is the most source rows one statement reads; 0 means DefaultChunkRows.
	ChunkRows uint64
	// Out receives a line per part that lacked rows and per copy; nil discards them.
	Out io.Writer
}

// Result is what a run found and did, per copy and per summary.
type Result struct {
	Copies    []CopyResult
	Summaries []SummaryResult
	// Days are the day tables' parts (days.go), those the run did not leave out.
	Days []DaysResult
}

// CopyResult is one copy's part of a Result.
type CopyResult struct {
	Table string
	// Parts of the source examined; of those, Complete already held every row, Copied were
	// copied into (or would have been, in a dry run), Incomplete still lacked rows afterwards.
	Parts, Complete, Copied, Incomplete int
	// Missing is how many rows (distinct sorting keys) the copy lacked, or held only in an older
	// version, in the parts copied into.
	Missing uint64
	// Recorded says the copy was recorded complete in schemas.CopyBackfillsTable.
	Recorded bool
}

// Run backfills the copies, then the summaries, then recomputes the customer days, as opts says.
func Run(ctx context.Context, conn Conn, opts Options) (Result, error) {
	copies, err := schemas.Copies()
	if err != nil {
		return Result{}, err
	}
	summaries, err := wantedSummaries(opts)
	if err != nil {
		return Result{}, err
	}
	if opts.ChunkRows == 0 {
		opts.ChunkRows = DefaultChunkRows
	}
	out := opts.Out
	if out == nil {
		out = io.Discard
	}
	var res Result
	copyAll := func(ofDays bool) error {
		for _, c := range copies {
			if CopiesDayTable(c) != ofDays || (len(opts.Tables) > 0 && !slices.Contains(opts.Tables, c.Table)) {
				continue
			}
			cr, err := backfillCopy(ctx, conn, c, opts, out)
			res.Copies = append(res.Copies, cr)
			if err != nil {
				return fmt.Errorf("backfill %s: %w", c.Table, err)
			}
		}
		return nil
	}
	if err := copyAll(false); err != nil {
		return res, err
	}
	for _, s := range summaries {
		sr, err := backfillSummary(ctx, conn, s, opts, out)
		res.Summaries = append(res.Summaries, sr)
		if err != nil {
			return res, fmt.Errorf("backfill %s: %w", s.Table, err)
		}
	}
	// After the copies: the days are recomputed from them. The copies of a day table come last: the
	// recomputation writes its rows through their views, and what it did not rewrite (a workspace
	// left out) is copied then.
	if res.Days, err = backfillDays(ctx, conn, opts, out); err != nil {
		return res, err
	}
	return res, copyAll(true)
}

// CopiesDayTable says whether a copy's source is one of the day tables (days.go), such as the usage
// days (migration 0028), a copy of the customer days.
func CopiesDayTable(c schemas.Copy) bool {
	return slices.ContainsFunc(dayTables, func(d dayTable) bool { return d.Table == c.Source })
}

// part is one workspace's app, and one month of it when the source is partitioned by month.
type part struct {
	workspaceID, appID string
	month              uint32 // YYYYMM; 0 when the source has no months
	rows               uint64 // source rows, for the number of statements to copy it in
}

func (p part) String() string {
	if p.month == 0 {
		return p.workspaceID + " " + p.appID
	}
	return fmt.Sprintf("%s %s %d-%02d", p.workspaceID, p.appID, p.month/100, p.month%100)
}

func backfillCopy(ctx context.Context, conn Conn, c schemas.Copy, opts Options, out io.Writer) (CopyResult, error) {
	res := CopyResult{Table: c.Table}
	start := time.Now()
	cols, err := columns(ctx, conn, c.Select)
	if err != nil {
		return res, err
	}
	parts, err := sourceParts(ctx, conn, c, opts.WorkspaceID)
	if err != nil {
		return res, err
	}
	res.Parts = len(parts)
	fmt.Fprintf(out, "%s: checking %d parts of %s\n", c.Table, len(parts), c.Source)
	for _, p := range parts {
		rows, lacking, err := check(ctx, conn, c, p)
		if err != nil {
			return res, err
		}
		if lacking == 0 {
			res.Complete++
			continue
		}
		res.Copied++
		res.Missing += lacking
		if opts.DryRun {
			fmt.Fprintf(out, "%s %s: lacks %d of %d rows\n", c.Table, p, lacking, rows)
			continue
		}
		t0 := time.Now()
		statements := max(1, (p.rows+opts.ChunkRows-1)/opts.ChunkRows)
		for b := range statements {
			if err := conn.Exec(ctx, insertLacking(c, cols, statements > 1), insertArgs(c, p, statements, b)...); err != nil {
				return res, fmt.Errorf("copy %s: %w", p, err)
			}
		}
		// Rows that land between the two reads of a check look lacking; they are in the copy by
		// then, so a second look settles it.
		var still uint64
		for range 2 {
			if _, still, err = check(ctx, conn, c, p); err != nil || still == 0 {
				break
			}
		}
		if err != nil {
			return res, err
		}
		if still > 0 {
			res.Incomplete++
		}
		fmt.Fprintf(out, "%s %s: lacked %d of %d rows, copied in %s\n", c.Table, p, lacking, rows, time.Since(t0).Round(time.Millisecond))
	}
	if !opts.DryRun && opts.WorkspaceID == "" && res.Incomplete == 0 {
		if err := record(ctx, conn, c.Table); err != nil {
			return res, err
		}
		res.Recorded = true
	}
	verb := "copied"
	if opts.DryRun {
		verb = "to copy"
	}
	fmt.Fprintf(out, "%s: %d parts, %d complete, %d %s (%d rows), %d still incomplete; %s\n", c.Table, res.Parts, res.Complete,
		res.Copied, verb, res.Missing, res.Incomplete, time.Since(start).Round(time.Millisecond))
	return res, nil
}

// columns names the output columns of a view's SELECT, which the inserts list explicitly: the
// view inserts by name, and so does the backfill.
func columns(ctx context.Context, conn Conn, viewSelect string) ([]string, error) {
	rows, err := conn.Query(ctx, "SELECT * FROM ("+viewSelect+") LIMIT 0")
	if err != nil {
		return nil, fmt.Errorf("read the view's columns: %w", err)
	}
	cols := rows.Columns()
	rows.Close()
	return cols, rows.Err()
}

// sourceParts lists the source's parts with their row counts.
func sourceParts(ctx context.Context, conn Conn, c schemas.Copy, workspaceID string) ([]part, error) {
	var args []any
	if workspaceID != "" {
		args = append(args, workspaceID)
	}
	rows, err := conn.Query(ctx, partsQuery(c, workspaceID != ""), args...)
	if err != nil {
		return nil, fmt.Errorf("list the source's parts: %w", err)
	}
	defer rows.Close()
	var out []part
	for rows.Next() {
		var p part
		if err := rows.Scan(&p.workspaceID, &p.appID, &p.month, &p.rows); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// partsQuery lists the source's parts, of one workspace (bound) when oneWorkspace.
func partsQuery(c schemas.Copy, oneWorkspace bool) string {
	month := "toUInt32(0)"
	if c.Month != "" {
		month = "toYYYYMM(" + c.Month + ")"
	}
	q := "SELECT workspace_id, app_id, " + month + " AS month, count() FROM " + c.Source
	if oneWorkspace {
		q += " WHERE workspace_id = ?"
	}
	return q + " GROUP BY workspace_id, app_id, month ORDER BY workspace_id, app_id, month"
}

// partCondition selects a part, in terms of columns the source and the copy both have.
func partCondition(c schemas.Copy) string {
	cond := "workspace_id = ? AND app_id = ?"
	if c.Month != "" {
		cond += " AND toYYYYMM(" + c.Month + ") = ?"
	}
	return cond
}

func partArgs(c schemas.Copy, p part) []any {
	args := []any{p.workspaceID, p.appID}
	if c.Month != "" {
		args = append(args, p.month)
	}
	return args
}

// latest is the query of a part's rows, one per sorting key, with their latest version
// (`latest`), from the source (the view's SELECT restricted by cond) or from the copy.
func latest(c schemas.Copy, from string) string {
	key := strings.Join(c.Key, ", ")
	if c.Version == "" {
		return "SELECT DISTINCT " + key + " FROM " + from
	}
	return "SELECT " + key + ", max(" + c.Version + ") AS latest FROM " + from + " GROUP BY " + key
}

// keyTuple is the sorting key with the version, as compared between latest rows.
func keyTuple(c schemas.Copy, version string) string {
	key := strings.Join(c.Key, ", ")
	if c.Version == "" {
		return "(" + key + ")"
	}
	return "(" + key + ", " + version + ")"
}

// check returns how many rows (distinct sorting keys) the view makes of the part, and how many of
// them the copy lacks or holds only in an older version. Versions are compared as the latest per
// key, since merges drop a row's older versions in the copy and in the source at different times.
// The copy is read first (ClickHouse builds an IN set before it reads the outer table), and every
// row it holds came through the view, so a part found complete is; a row landing between the two
// reads looks lacking, although the view has copied it.
func check(ctx context.Context, conn Conn, c schemas.Copy, p part) (rows, lacking uint64, err error) {
	if err := conn.QueryRow(ctx, checkQuery(c), checkArgs(c, p)...).Scan(&rows, &lacking); err != nil {
		return 0, 0, fmt.Errorf("compare %s with the source: %w", p, err)
	}
	return rows, lacking, nil
}

func checkQuery(c schemas.Copy) string {
	cond := partCondition(c)
	return "SELECT count(), countIf(" + keyTuple(c, "latest") + " NOT IN (" + latest(c, c.Table+" WHERE "+cond) + "))\nFROM (" +
		latest(c, "("+c.SelectWhere(cond)+")") + ")"
}

func checkArgs(c schemas.Copy, p part) []any {
	return append(partArgs(c, p), partArgs(c, p)...)
}

// insertLacking copies the part's rows (one hash bucket of them when split) that the copy lacks:
// the latest version of each.
func insertLacking(c schemas.Copy, cols []string, split bool) string {
	cond := partCondition(c)
	src := cond
	if split {
		src += " AND cityHash64(" + c.Bucket + ") % ? = ?"
	}
	list := strings.Join(cols, ", ")
	q := "INSERT INTO " + c.Table + " (" + list + ") SELECT " + list + " FROM (" + c.SelectWhere(src) + ")\nWHERE "
	if c.Version != "" {
		q += keyTuple(c, c.Version) + " IN (" + latest(c, "("+c.SelectWhere(src)+")") + ") AND "
	}
	return q + keyTuple(c, c.Version) + " NOT IN (" + latest(c, c.Table+" WHERE "+cond) + ")"
}

func insertArgs(c schemas.Copy, p part, statements, bucket uint64) []any {
	src := partArgs(c, p)
	if statements > 1 {
		src = append(src, statements, bucket)
	}
	args := slices.Clone(src)
	if c.Version != "" {
		args = append(args, src...)
	}
	return append(args, partArgs(c, p)...)
}

// record records the tables complete.
func record(ctx context.Context, conn Conn, tables ...string) error {
	if len(tables) == 0 {
		return nil
	}
	b, err := conn.PrepareBatch(ctx, "INSERT INTO "+schemas.CopyBackfillsTable+" (copy, completed_at)")
	if err != nil {
		return fmt.Errorf("record %v complete: %w", tables, err)
	}
	now := time.Now().UTC()
	for _, t := range tables {
		if err := b.Append(t, now); err != nil {
			return fmt.Errorf("record %v complete: %w", tables, err)
		}
	}
	if err := b.Send(); err != nil {
		return fmt.Errorf("record %v complete: %w", tables, err)
	}
	return nil
}
