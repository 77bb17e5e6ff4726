package reportingbackfill_test

import (
	"strings"
	"testing"

	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/internal/testenv/pipeline"
	"github.com/revtrack/revtrack/schemas"
	"github.com/revtrack/revtrack/schemas/reportingbackfill"
)

// TestStatementsRunOnCurrentClickHouse runs every copy's and summary's statements, as a run sends
// them, on the current engine (the other tests run them on 18.16), checks there what a summary's
// backfill gives, and keeps the statements of the summary and of two copies, one with a version
// and a filter-less view, one without a version and with a filter, as a golden file.
func TestStatementsRunOnCurrentClickHouse(t *testing.T) {
	conn := pipeline.Migrated(t).Conn
	statements, err := schemas.MigrationStatements()
	if err != nil {
		t.Fatal(err)
	}
	statements = append(statements, "SELECT DISTINCT copy FROM "+schemas.CopyBackfillsTable)
	// The customer days' statements, with their arguments inlined.
	args := map[string][]string{
		"customerDaysOf":  {"1", "'ws'", "'app'", "('cus_00'), ('cus_01')", "0", "86400"},
		"allCustomerDays": {"1", "'ws'"},
		"mismatches":      {"'ws'", "'ws'"},
		"usageMismatches": {"'ws'", "'ws'"},
	}
	for name, st := range schemas.CustomerDaysStatements {
		for _, a := range args[name] {
			st = strings.Replace(st, "?", a, 1)
		}
		statements = append(statements, st)
	}
	args["observedDaysOf"], args["allObservedDays"] = args["customerDaysOf"], args["allCustomerDays"]
	for name, st := range schemas.ObservedDaysStatements {
		for _, a := range args[name] {
			st = strings.Replace(st, "?", a, 1)
		}
		statements = append(statements, st)
	}
	factsArgs := map[string][]string{
		"chargeFactsOf":  {"1", "'ws'", "'app'", "('cus_00'), ('cus_01')", "'ws'", "'app'", "('cus_00'), ('cus_01')"},
		"allChargeFacts": {"1", "'ws'", "'ws'"},
		"retireOf":       {"1", "'ws'", "'app'", "('cus_00'), ('cus_01')", "1"},
		"retireAll":      {"1", "'ws'", "1"},
		"mismatches":     {"'ws'", "0", "'ws'", "'ws'"},
	}
	for name, st := range schemas.ChargeFactsStatements {
		for _, a := range factsArgs[name] {
			st = strings.Replace(st, "?", a, 1)
		}
		statements = append(statements, st)
	}
	var golden []string
	for _, c := range copiesOf(t) {
		rows, err := conn.Query(testenv.Ctx(t), "SELECT * FROM ("+c.Select+") LIMIT 0")
		if err != nil {
			t.Fatal(err)
		}
		cols := rows.Columns()
		rows.Close()
		st := reportingbackfill.Statements(c, cols)
		statements = append(statements, st...)
		if c.Table == "reporting_events" || c.Table == "reporting_payments" {
			golden = append(golden, "-- "+c.Table+"\n"+strings.Join(st, ";\n\n")+";\n")
		}
	}
	// acquisition_clicks, on browser events of workspace ws landed before its view existed: acq-1
	// came organically, then through an ad; summarised twice, it keeps its first click.
	s := clicksSummary(t)
	cols, err := reportingbackfill.DescribedColumns(testenv.Ctx(t), conn, s.Select)
	if err != nil {
		t.Fatal(err)
	}
	st := reportingbackfill.SummaryStatements(s, cols)
	golden = append(golden, "-- "+s.Table+"\n"+strings.Join(st, ";\n\n")+";\n")
	statements = append(statements, "DROP TABLE "+s.View,
		`INSERT INTO browser_events (event_id, source_id, workspace_id, app_id, acquisition_id, name, occurred_at, first_gclid)
SELECT concat('e-', toString(number)), 'src', 'ws', 'app', 'acq-1', 'page_view', toDateTime('2025-01-05 09:00:00', 'UTC') + number * 3600,
if(number = 0, '', concat('gclid-', toString(number))) FROM numbers(3)`,
		viewStatement(t))
	statements = append(statements, st...)
	statements = append(statements, st...)
	statements = append(statements,
		`SELECT throwIf(ok != 1) FROM (SELECT count() = 1 AND any(g) = 'gclid-1' AND any(b) = '' AS ok FROM (
SELECT source_id, acquisition_id, argMinMerge(click_gclid) AS g, argMinMerge(click_gbraid) AS b FROM acquisition_clicks GROUP BY source_id, acquisition_id))`,
		// A check that does not hold proves that a failing check is reported.
		"SELECT throwIf(ok != 1) FROM (SELECT toUInt8(0) AS ok, 'summary_control' AS marker)")
	testenv.Golden(t, "testdata/statements.golden.sql", []byte(strings.Join(golden, "\n")))
	if _, failures := testenv.OnCurrentClickHouse(t, statements); len(failures) != 1 || !strings.Contains(failures[0].Statement, "summary_control") {
		t.Fatalf("want only the control statement rejected by current ClickHouse, got %+v", failures)
	}
}
