package reporting

import (
	"strings"
	"testing"

	"github.com/revtrack/revtrack/query/reporting/reportingtest"
	"github.com/revtrack/revtrack/schemas"
	"github.com/revtrack/revtrack/schemas/reportingbackfill"
)

// Rows landed before the copies existed: the backfill (`revtrack admin reporting backfill`, which
// runs each copy's view SELECT) gives the same answers as rows landed after, and running it twice
// counts nothing twice.
func TestBackfillOfExistingRows(t *testing.T) {
	e := setup(t)
	cs := reportingtest.Example37(e.fx, "app-1")
	e.fx.Flush(t)
	req := Request{Scope: scopeOf("app-1"), Range: defaultRange, CustomerScope: ScopeIncluded}
	landed, err := e.store.Summary(ctx(t), req)
	if err != nil {
		t.Fatal(err)
	}
	copies, err := schemas.Copies()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range copies {
		if err := e.conn.Exec(ctx(t), "TRUNCATE TABLE "+c.Table); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if _, err := reportingbackfill.Run(ctx(t), e.conn, reportingbackfill.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	sum, err := e.store.Summary(ctx(t), req)
	if err != nil {
		t.Fatal(err)
	}
	if b := sum.ByCurrency["USD"]; b.MRRCents != 17350 || b.PayingCustomers != 2 || b.Usage.BilledUsage.GrossCents != 4200 {
		t.Fatalf("USD after the backfill: %+v", b)
	}
	jsonEq(t, "summary after the backfill", sum.ByCurrency, landed.ByCurrency)
	d, err := e.store.Customer(ctx(t), DetailRequest{Scope: scopeOf("app-1"), Ref: cs["alpha"].ID(), Range: defaultRange})
	if err != nil {
		t.Fatal(err)
	}
	if !d.Customer.Paying || d.Customer.LTVByCurrencyCents["USD"] != 12204 || !strings.HasPrefix(d.Analytics.Paying.Reason, "paying:") {
		t.Fatalf("alpha after the backfill: %+v", d.Customer)
	}
}
