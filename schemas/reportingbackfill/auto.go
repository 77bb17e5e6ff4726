package reportingbackfill

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"

	"github.com/revtrack/revtrack/schemas"
)

// Auto runs after the migrations (revtrack migrate, and every start with auto-migrate on) and
// settles what a cheap look can settle, for every copy not yet recorded complete:
//
//   - its source holds no row: it is recorded complete (its view copies every row from now on);
//   - it is empty while its source holds rows (the migration that created it has just run on a
//     database with history): it is backfilled;
//   - both hold rows: it may lack rows landed before its view existed, and only a backfill that
//     reads every part can tell, which is left to `revtrack admin reporting backfill`; Auto warns.
//
// and for every summary not yet recorded complete:
//
//   - its source holds no row the view keeps (a browser event with a click ID, for
//     acquisition_clicks): it is recorded complete;
//   - otherwise its months not recorded summarised are summarised. Unlike a copy's, a summary's
//     run reads and writes only those months, each once; and a summary that already holds rows
//     says nothing of its history, since tracking lands without pause: a process of the previous
//     release lands browser events through the new view while this one migrates.
//
// Readers cope with a copy that lacks rows (the derivation reads the source until its copies are
// recorded complete), so the caller logs a failure here rather than refusing to start.
func Auto(ctx context.Context, conn Conn, log *slog.Logger) error {
	copies, err := schemas.Copies()
	if err != nil {
		return err
	}
	recorded, err := Recorded(ctx, conn)
	if err != nil {
		return err
	}
	var empty, fill []string
	for _, c := range copies {
		if recorded[c.Table] {
			continue
		}
		srcRows, err := exists(ctx, conn, c.Select)
		if err != nil {
			return err
		}
		copyRows, err := exists(ctx, conn, "SELECT 1 FROM "+c.Table)
		if err != nil {
			return err
		}
		switch {
		case !srcRows:
			empty = append(empty, c.Table)
		case !copyRows:
			fill = append(fill, c.Table)
		default:
			log.Warn("a copy may lack rows landed before its materialized view existed: run `revtrack admin reporting backfill`",
				"copy", c.Table, "source", c.Source)
		}
	}
	var summarise []string
	for _, t := range summaryTables {
		if recorded[t] {
			continue
		}
		s, err := schemas.SummaryOf(t)
		if err != nil {
			return err
		}
		q := "SELECT 1 FROM " + s.Source
		// Without a HAVING every row is kept (Keep is "1"), and the constant condition is left out:
		// ClickHouse 18.16 fails `SELECT 1 FROM <Distributed> WHERE 1` over empty shards ("Cannot
		// find column returning in source stream", the column it picked to read), which on a
		// cluster stopped the settling after every fresh migration.
		if s.Keep != "1" {
			q += " WHERE " + s.Keep
		}
		kept, err := exists(ctx, conn, q)
		if err != nil {
			return err
		}
		if kept {
			summarise = append(summarise, t)
		} else {
			empty = append(empty, t)
		}
	}
	var fillDays []string
	for _, d := range dayTables {
		switch act, err := settleDays(ctx, conn, d, recorded, log); {
		case err != nil:
			return err
		case act == daysEmpty:
			empty = append(empty, d.Table)
		case act == daysFill:
			fillDays = append(fillDays, d.Table)
		}
	}
	if err := record(ctx, conn, empty...); err != nil {
		return err
	}
	tables := append(append(fill, summarise...), fillDays...)
	if len(tables) == 0 {
		return nil
	}
	log.Info("backfilling empty copies of tables that hold rows, summaries, and day tables", "tables", tables)
	_, err = Run(ctx, conn, Options{Tables: tables, Out: logWriter{log}})
	return err
}

type daysAction int

const (
	daysNothing daysAction = iota
	daysEmpty              // no landed record yet: the consumer writes every day from now on
	daysFill               // transactions, no day: the migration that created the table has just run
)

// settleDays says what Auto does with a day table (days.go): like a copy, it is recorded complete
// when there is no landed row behind it, and filled when it is empty while such rows exist; when
// both hold rows, only a backfill can tell, and Auto warns.
func settleDays(ctx context.Context, conn Conn, d dayTable, recorded map[string]bool, log *slog.Logger) (daysAction, error) {
	if recorded[d.Table] {
		return daysNothing, nil
	}
	// The landed table, not the copy the days are recomputed from: Run fills that copy first.
	src, err := exists(ctx, conn, "SELECT 1 FROM "+d.Landed)
	if err != nil {
		return daysNothing, err
	}
	if !src {
		return daysEmpty, nil
	}
	days, err := exists(ctx, conn, "SELECT 1 FROM "+d.Table)
	if err != nil {
		return daysNothing, err
	}
	if !days {
		return daysFill, nil
	}
	log.Warn("the day table may lack records landed before its migration: run `revtrack admin reporting backfill`",
		"table", d.Table)
	return daysNothing, nil
}

// Recorded returns the copies recorded complete.
func Recorded(ctx context.Context, conn Conn) (map[string]bool, error) {
	rows, err := conn.Query(ctx, "SELECT DISTINCT copy FROM "+schemas.CopyBackfillsTable)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", schemas.CopyBackfillsTable, err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, err
		}
		out[t] = true
	}
	return out, rows.Err()
}

func exists(ctx context.Context, conn Conn, q string) (bool, error) {
	var n uint64
	if err := conn.QueryRow(ctx, "SELECT count() FROM ("+q+" LIMIT 1)").Scan(&n); err != nil {
		return false, fmt.Errorf("look for rows: %w", err)
	}
	return n > 0, nil
}

// logWriter logs each line of a run's progress.
type logWriter struct{ log *slog.Logger }

func (w logWriter) Write(p []byte) (int, error) {
	for _, line := range bytes.Split(bytes.TrimRight(p, "\n"), []byte("\n")) {
		w.log.Info("backfill", "progress", string(line))
	}
	return len(p), nil
}
