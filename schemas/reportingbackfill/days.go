package reportingbackfill

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/revtrack/revtrack/schemas"
)

// The day tables (the customer days, migration 0024; the observed usage days, migration 0026; the
// charge facts, migration 0027, kept the same way though not per day) are
// not copies: the landing consumer writes them, recomputed from a customer-ordered copy after each
// batch. A database with history is filled by recomputing every customer's days from the same
// copy, workspace by workspace, with a version taken before the read: a row the consumer writes
// meanwhile has a greater version and has seen at least as much, so whichever of the two lands
// last, the greater version stands. A table is recorded complete once filled from a copy that is
// itself recorded complete.
type dayTable struct {
	Table  string
	Source string // the copy the days are recomputed from
	Landed string // the landed table behind it (Auto looks at it: Run fills the copy first)
	all    func(ctx context.Context, conn schemas.Execer, version uint64, workspaceID string) error
}

var dayTables = []dayTable{
	{schemas.CustomerDaysTable, "reporting_transactions", "platform_transactions", schemas.AllCustomerDaysOnly},
	{schemas.ObservedDaysTable, "reporting_usage_charges", "platform_usage_charges", schemas.AllObservedDays},
	// The charge facts (migration 0027) are recomputed from the charges and their payments; the
	// charges' copy records them complete.
	{schemas.ChargeFactsTable, "reporting_charges", "platform_charges", schemas.AllChargeFacts},
}

// DaysResult is a day table's part of a Result.
type DaysResult struct {
	Table string
	// Workspaces recomputed (or that would be, in a dry run).
	Workspaces int
	// Recorded says the table was recorded complete.
	Recorded bool
}

// backfillDays recomputes every day table opts selects, for every workspace (or opts.WorkspaceID's).
func backfillDays(ctx context.Context, conn Conn, opts Options, out io.Writer) ([]DaysResult, error) {
	var res []DaysResult
	for _, d := range dayTables {
		if len(opts.Tables) > 0 && !slices.Contains(opts.Tables, d.Table) {
			continue
		}
		r, err := backfillDayTable(ctx, conn, d, opts, out)
		res = append(res, r)
		if err != nil {
			return res, fmt.Errorf("backfill %s: %w", d.Table, err)
		}
	}
	return res, nil
}

func backfillDayTable(ctx context.Context, conn Conn, d dayTable, opts Options, out io.Writer) (DaysResult, error) {
	res := DaysResult{Table: d.Table}
	wss := []string{opts.WorkspaceID}
	if opts.WorkspaceID == "" {
		rows, err := conn.Query(ctx, "SELECT DISTINCT workspace_id FROM "+d.Source)
		if err != nil {
			return res, fmt.Errorf("list workspaces: %w", err)
		}
		wss = wss[:0]
		for rows.Next() {
			var ws string
			if err := rows.Scan(&ws); err != nil {
				rows.Close()
				return res, err
			}
			wss = append(wss, ws)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return res, err
		}
	}
	for _, ws := range wss {
		res.Workspaces++
		if opts.DryRun {
			continue
		}
		if err := d.all(ctx, conn, uint64(time.Now().UnixMicro()), ws); err != nil {
			return res, fmt.Errorf("workspace %s: %w", ws, err)
		}
	}
	fmt.Fprintf(out, "%s: recomputed for %d workspaces from %s\n", d.Table, res.Workspaces, d.Source)
	if opts.DryRun || opts.WorkspaceID != "" {
		return res, nil
	}
	recorded, err := Recorded(ctx, conn)
	if err != nil {
		return res, err
	}
	if recorded[d.Source] {
		if err := record(ctx, conn, d.Table); err != nil {
			return res, err
		}
		res.Recorded = true
	}
	return res, nil
}
