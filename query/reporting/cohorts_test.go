package reporting

import (
	"testing"

	"github.com/revtrack/revtrack/query/reporting/reportingtest"
)

// TestCohortsAddUpToTheSeries: when every customer's cohort date lies in the range, the cohorts
// together are every paying customer, so on each month's last date their paying customers and MRR
// per currency add up to the series' (and so the summary's) paying customers and subscription MRR;
// for every basis and customer scope, on the golden datasets (those whose customers all have an
// install date).
func TestCohortsAddUpToTheSeries(t *testing.T) {
	e := setup(t)
	allDatasets(e.fx)
	e.fx.Flush(t)
	store := New(e.conn, WithClock(reportingtest.Clock))
	sc := scopeOf("app-1", "app-n", "app-c", "app-a", "app-b", "app-x")
	rng := Range{From: MustDate("2025-05-01"), To: MustDate("2026-03-31")}
	checked := 0
	for _, cs := range []CustomerScope{ScopeIncluded, ScopeExcluded, ScopeAll} {
		r, err := store.seriesResult(ctx(t), Request{Scope: sc, Range: rng, CustomerScope: cs}, IntervalMonth)
		if err != nil {
			t.Fatal(err)
		}
		for _, by := range []string{CohortByInstall, CohortByFirstPaid} {
			got, err := store.Cohorts(ctx(t), CohortsRequest{Request: Request{Scope: sc, Range: rng, CustomerScope: cs}, By: by})
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Cohorts) != len(r.periods) {
				t.Fatalf("%d cohorts for %d months", len(got.Cohorts), len(r.periods))
			}
			for i, p := range r.periods {
				sums := map[string]CohortCell{}
				for ci := 0; ci <= i; ci++ {
					m := got.Cohorts[ci].Months[i-ci]
					if m.Date != p.To {
						t.Fatalf("cohort %s month %d is %s, want %s", got.Cohorts[ci].Cohort, i-ci, m.Date, p.To)
					}
					for cur, c := range m.ByCurrency {
						s := sums[cur]
						s.PayingCustomers += c.PayingCustomers
						s.MRRCents += c.MRRCents
						sums[cur] = s
					}
				}
				for _, cur := range unionKeys(sums, r.blocks[i]) {
					b := r.blocks[i][cur]
					if sums[cur].PayingCustomers != b.PayingCustomers || sums[cur].MRRCents != b.SubscriptionMRRCents {
						t.Errorf("%s %s %s %s: cohorts %+v, series paying %d MRR %d", cs, by, p.To, cur, sums[cur], b.PayingCustomers,
							b.SubscriptionMRRCents)
					}
					checked += int(b.PayingCustomers)
				}
			}
		}
	}
	if checked < 100 {
		t.Fatalf("only %d paying customer-months compared", checked)
	}
}

// TestCohortsExample is the worked example of METRICS 3.15 (3.7's app, by first payment, the first
// quarter of 2026).
func TestCohortsExample(t *testing.T) {
	e := setup(t)
	reportingtest.Example37(e.fx, "app-1")
	e.fx.Flush(t)
	got, err := e.store.Cohorts(ctx(t), CohortsRequest{By: CohortByFirstPaid,
		Request: Request{Scope: scopeOf("app-1"), Range: Range{From: MustDate("2026-01-01"), To: MustDate("2026-03-31")}, CustomerScope: ScopeIncluded}})
	if err != nil {
		t.Fatal(err)
	}
	cell := func(n, mrr int64) CohortCell { return CohortCell{PayingCustomers: n, MRRCents: mrr} }
	none := CohortCell{}
	jsonEq(t, "cohorts", got.Cohorts, []Cohort{
		{Cohort: "2026-01", Customers: 2, Months: []CohortMonth{ // alpha (first paid 01-09), delta (01-30)
			{Month: "2026-01", Date: MustDate("2026-01-31"), ByCurrency: map[string]CohortCell{"EUR": none, "USD": cell(2, 7800)}},
			{Month: "2026-02", Date: MustDate("2026-02-28"), ByCurrency: map[string]CohortCell{"EUR": none, "USD": cell(2, 7800)}},
			{Month: "2026-03", Date: MustDate("2026-03-31"), ByCurrency: map[string]CohortCell{"EUR": none, "USD": cell(1, 4900)}}, // delta frozen
		}},
		{Cohort: "2026-02", Customers: 1, Months: []CohortMonth{ // foxtrot (EUR, 02-03); golf is excluded
			{Month: "2026-02", Date: MustDate("2026-02-28"), ByCurrency: map[string]CohortCell{"EUR": cell(1, 3900), "USD": none}},
			{Month: "2026-03", Date: MustDate("2026-03-31"), ByCurrency: map[string]CohortCell{"EUR": cell(1, 3900), "USD": none}},
		}},
		{Cohort: "2026-03", Customers: 0, Months: []CohortMonth{
			{Month: "2026-03", Date: MustDate("2026-03-31"), ByCurrency: map[string]CohortCell{"EUR": none, "USD": none}},
		}},
	})
}
