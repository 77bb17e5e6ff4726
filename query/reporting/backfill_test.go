package reporting

import (
	"regexp"
	"strings"
	"testing"

	"github.com/revtrack/revtrack/query/reporting/reportingtest"
	"github.com/revtrack/revtrack/schemas"
)

// viewRe reads a materialized view of migration 0011: its target table and its SELECT.
var viewRe = regexp.MustCompile(`(?s)^CREATE MATERIALIZED VIEW IF NOT EXISTS \S+ TO (reporting_\w+) AS\s+(SELECT .*)$`)

// backfill are the statements docs/REPORTING_PERFORMANCE.md gives a database that held platform
// rows before migration 0011: each view's SELECT inserted into its table.
func backfill(t *testing.T) []string {
	t.Helper()
	ms, err := schemas.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range ms {
		for _, st := range m.Statements {
			if v := viewRe.FindStringSubmatch(st); v != nil {
				out = append(out, "INSERT INTO "+v[1]+" "+v[2])
			}
		}
	}
	if len(out) != 8 {
		t.Fatalf("%d views in the migrations, want the 8 copies", len(out))
	}
	return out
}

// Rows landed before the copies existed: the backfill gives the same answers as rows landed after,
// and running it twice counts nothing twice.
func TestBackfillOfExistingRows(t *testing.T) {
	e := setup(t)
	cs := reportingtest.Example37(e.fx, "app-1")
	e.fx.Flush(t)
	for _, table := range []string{"reporting_customers", "reporting_charges", "reporting_events", "reporting_transactions",
		"reporting_payments", "reporting_usage_transactions", "reporting_usage_charges", "reporting_usage_events"} {
		if err := e.conn.Exec(ctx(t), "TRUNCATE TABLE "+table); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		for _, st := range backfill(t) {
			if err := e.conn.Exec(ctx(t), st); err != nil {
				t.Fatalf("%v\n%s", err, st)
			}
		}
	}
	sum, err := e.store.Summary(ctx(t), Request{Scope: scopeOf("app-1"), Range: defaultRange, CustomerScope: ScopeIncluded})
	if err != nil {
		t.Fatal(err)
	}
	if b := sum.ByCurrency["USD"]; b.MRRCents != 17350 || b.PayingCustomers != 2 || b.Usage.BilledUsage.GrossCents != 4200 {
		t.Fatalf("USD after the backfill: %+v", b)
	}
	d, err := e.store.Customer(ctx(t), DetailRequest{Scope: scopeOf("app-1"), Ref: cs["alpha"].ID(), Range: defaultRange})
	if err != nil {
		t.Fatal(err)
	}
	if !d.Customer.Paying || d.Customer.LTVByCurrencyCents["USD"] != 12204 || !strings.HasPrefix(d.Analytics.Paying.Reason, "paying:") {
		t.Fatalf("alpha after the backfill: %+v", d.Customer)
	}
}
