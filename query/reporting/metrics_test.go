package reporting

import (
	"errors"
	"maps"
	"regexp"
	"slices"
	"testing"

	"github.com/revtrack/revtrack/query/reporting/reportingtest"
)

// Each metric reads only what it shows (summaryNeeds), and must still be exactly the summary's
// figures and currencies, on every dataset, range, scope and currency filter.
func TestMetricsAreProjectionsOfTheSummary(t *testing.T) {
	e := setup(t)
	sc := allDatasets(e.fx)
	e.fx.Exclude("victor.myshopify.com", "", true) // an excluded customer with usage-free billing on app-e
	e.fx.Flush(t)
	s := New(e.rec, WithClock(reportingtest.Clock), WithResultCache(0))
	ranges := []Range{defaultRange, {From: MustDate("2026-03-09"), To: MustDate("2026-03-09")}, {From: MustDate("2025-12-01"), To: MustDate("2026-03-31")},
		{From: MustDate("2026-02-20"), To: MustDate("2026-03-14")}}
	defer func(n int) { maxBoundCustomers = n }(maxBoundCustomers)
	for _, bound := range []int{maxBoundCustomers, 0} {
		maxBoundCustomers = bound
		for _, r := range ranges {
			for _, cs := range []CustomerScope{ScopeIncluded, ScopeExcluded, ScopeAll} {
				for _, cur := range []string{"", "USD", "EUR"} {
					req := Request{Scope: sc, Range: r, CustomerScope: cs, Currency: cur}
					sum, err := s.Summary(ctx(t), req)
					if err != nil {
						t.Fatal(err)
					}
					for _, m := range Metrics {
						got, err := s.Metric(ctx(t), m, req)
						if err != nil {
							t.Fatal(err)
						}
						jsonEq(t, m+" "+r.From.String()+"…"+r.To.String()+" "+string(cs)+" "+cur, got, focus(m, sum))
					}
				}
			}
		}
	}
}

// A kept response is served only while no table it read changed: a row that lands is in the next
// answer, summary, metric and page alike.
func TestKeptResponsesFollowNewData(t *testing.T) {
	e := setup(t)
	reportingtest.Example37(e.fx, "app-1")
	e.fx.Flush(t)
	fresh := New(e.rec, WithClock(reportingtest.Clock), WithResultCache(0))
	req := Request{Scope: scopeOf("app-1"), Range: defaultRange, CustomerScope: ScopeIncluded}
	list := ListRequest{Scope: scopeOf("app-1"), Range: defaultRange, CustomerScope: ScopeIncluded, Limit: 3}
	check := func(what string) {
		t.Helper()
		for _, m := range []string{MetricMRR, MetricUsage} {
			got, err := e.store.Metric(ctx(t), m, req)
			if err != nil {
				t.Fatal(err)
			}
			want, err := fresh.Metric(ctx(t), m, req)
			if err != nil {
				t.Fatal(err)
			}
			jsonEq(t, what+": "+m, got, want)
		}
		got, err := e.store.Summary(ctx(t), req)
		if err != nil {
			t.Fatal(err)
		}
		want, err := fresh.Summary(ctx(t), req)
		if err != nil {
			t.Fatal(err)
		}
		jsonEq(t, what+": summary", got, want)
		gotList, err := e.store.Customers(ctx(t), list)
		if err != nil {
			t.Fatal(err)
		}
		wantList, err := fresh.Customers(ctx(t), list)
		if err != nil {
			t.Fatal(err)
		}
		jsonEq(t, what+": customers", gotList, wantList)
	}
	check("before")
	before, _ := e.store.Summary(ctx(t), req)
	e.fx.AddTx(reportingtest.Tx{App: "app-1", ID: "tx-late-usage", Type: "usage", Shop: reportingtest.Shop("1001"), At: "2026-03-30T10:00:00Z",
		Currency: "USD", Gross: 700, Fee: 105, Net: 595})
	e.fx.AddUsageCharge(reportingtest.UsageCharge{App: "app-1", ID: "ur-late", Shop: reportingtest.Shop("1001"), Charge: "sub-alpha", Amount: 300,
		Currency: "USD", At: "2026-03-29T09:00:00Z"})
	e.fx.Flush(t)
	check("after new rows")
	after, _ := e.store.Summary(ctx(t), req)
	if b, a := before.ByCurrency["USD"], after.ByCurrency["USD"]; a.UsageMRRCents != b.UsageMRRCents+700 ||
		a.Usage.ObservedUsageCharges.GrossCents != b.Usage.ObservedUsageCharges.GrossCents+300 {
		t.Fatalf("the new rows are not in the answer: before %+v, after %+v", b, a)
	}
	e.fx.Exclude("alpha.myshopify.com", "", true)
	e.fx.Flush(t)
	check("after an exclusion")
}

// A kept response depends on the versions of the tables listed for it: every table its queries read
// must be listed, or a row landing there would not discard it.
func TestKeptResponsesListTheTablesTheyRead(t *testing.T) {
	e := setup(t)
	reportingtest.Example37(e.fx, "app-1")
	e.fx.RawCharges = true // the summary then reads the events too
	e.fx.Flush(t)
	from := regexp.MustCompile(`(?:FROM|JOIN)\s+(\w+)`)
	for _, c := range []struct {
		name   string
		tables []string
		run    func(s *Store) error
	}{
		{"summary", summaryTables, func(s *Store) error {
			for _, cs := range []CustomerScope{ScopeIncluded, ScopeExcluded} {
				if _, err := s.Summary(ctx(t), Request{Scope: scopeOf("app-1"), Range: defaultRange, CustomerScope: cs}); err != nil {
					return err
				}
				for _, m := range Metrics {
					if _, err := s.Metric(ctx(t), m, Request{Scope: scopeOf("app-1"), Range: defaultRange, CustomerScope: cs}); err != nil {
						return err
					}
				}
			}
			return nil
		}},
		{"customers", listTables, func(s *Store) error {
			for _, cs := range []CustomerScope{ScopeIncluded, ScopeExcluded, ScopeAll} {
				if _, err := s.Customers(ctx(t), ListRequest{Scope: scopeOf("app-1"), Range: defaultRange, CustomerScope: cs, Limit: 2}); err != nil {
					return err
				}
			}
			return nil
		}},
	} {
		rec := &recorder{Conn: e.conn}
		if err := c.run(New(rec, WithClock(reportingtest.Clock), WithResultCache(0))); err != nil {
			t.Fatal(err)
		}
		for q := range rec.queries {
			for _, m := range from.FindAllStringSubmatch(q, -1) {
				if !slices.Contains(c.tables, m[1]) {
					t.Errorf("%s reads %s, which is not in its tables", c.name, m[1])
				}
			}
		}
	}
}

// Each part of a summary result is kept with the version of its own tables only, so each part must
// read nothing outside them: a row landing in another table would not discard it.
func TestSummaryPartsListTheTablesTheyRead(t *testing.T) {
	e := setup(t)
	reportingtest.Example37(e.fx, "app-1")
	e.fx.RawCharges = true // the billing part then reads the events too
	e.fx.Exclude("alpha.myshopify.com", "", true)
	e.fx.Flush(t)
	from := regexp.MustCompile(`(?:FROM|JOIN)\s+(\w+)`)
	for _, c := range []struct {
		name   string
		tables []string
		run    func(s *Store, req Request) error
	}{
		{"billing", billingTables, func(s *Store, req Request) error {
			for _, needs := range append(slices.Collect(maps.Values(metricNeeds)), allNeeds) {
				if _, err := s.computeBilling(ctx(t), req, needs, func() (*exclusions, error) { return s.readExclusions(ctx(t), req.Scope) }); err != nil {
					return err
				}
			}
			return nil
		}},
		{"activity", activityTables, func(s *Store, req Request) error {
			ex, err := s.readExclusions(ctx(t), req.Scope)
			if err != nil {
				return err
			}
			if a := s.usageActivity(ctx(t), req.Scope, req.CustomerScope, ex, req.Range.From.Start(), req.Range.To.End()); !a.Loaded {
				return errors.New("usage activity not loaded")
			}
			return nil
		}},
		{"sync", syncTables, func(s *Store, req Request) error { _, err := s.readSyncView(ctx(t), req.Scope); return err }},
	} {
		rec := &recorder{Conn: e.conn}
		s := New(rec, WithClock(reportingtest.Clock), WithResultCache(0))
		for _, cs := range []CustomerScope{ScopeIncluded, ScopeExcluded, ScopeAll} {
			if err := c.run(s, Request{Scope: scopeOf("app-1"), Range: defaultRange, CustomerScope: cs}); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
		}
		if len(rec.queries) == 0 {
			t.Fatalf("%s read nothing", c.name)
		}
		for q := range rec.queries {
			for _, m := range from.FindAllStringSubmatch(q, -1) {
				if !slices.Contains(c.tables, m[1]) {
					t.Errorf("the %s part reads %s, which is not in its tables", c.name, m[1])
				}
			}
		}
	}
}
