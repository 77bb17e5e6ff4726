package reportingbackfill

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/revtrack/revtrack/schemas"
)

// The customer days (schemas.CustomerDaysTable, migration 0024) are not a copy: the landing
// consumer writes them, recomputed from reporting_transactions after each batch. A database with
// history is filled by recomputing every customer's days from the same copy, workspace by
// workspace, with a version taken before the read: a row the consumer writes meanwhile has a greater
// version and has seen at least as much, so whichever of the two lands last, the greater version
// stands. The table is recorded complete once filled from a reporting_transactions that is itself
// recorded complete.
const daysSource = "reporting_transactions"

// selectDaysWorkspaces lists the workspaces whose transactions the days are recomputed for.
const selectDaysWorkspaces = `SELECT DISTINCT workspace_id FROM ` + daysSource

// DaysResult is the customer days' part of a Result.
type DaysResult struct {
	// Workspaces recomputed (or that would be, in a dry run).
	Workspaces int
	// Recorded says the table was recorded complete.
	Recorded bool
}

// backfillDays recomputes the customer days of every workspace (or opts.WorkspaceID's).
func backfillDays(ctx context.Context, conn Conn, opts Options, out io.Writer) (DaysResult, error) {
	var res DaysResult
	wss := []string{opts.WorkspaceID}
	if opts.WorkspaceID == "" {
		rows, err := conn.Query(ctx, selectDaysWorkspaces)
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
		if err := schemas.AllCustomerDays(ctx, conn, uint64(time.Now().UnixMicro()), ws); err != nil {
			return res, fmt.Errorf("workspace %s: %w", ws, err)
		}
	}
	fmt.Fprintf(out, "%s: recomputed the days of %d workspaces from %s\n", schemas.CustomerDaysTable, res.Workspaces, daysSource)
	if opts.DryRun || opts.WorkspaceID != "" {
		return res, nil
	}
	recorded, err := Recorded(ctx, conn)
	if err != nil {
		return res, err
	}
	if recorded[daysSource] {
		if err := record(ctx, conn, schemas.CustomerDaysTable); err != nil {
			return res, err
		}
		res.Recorded = true
	}
	return res, nil
}
