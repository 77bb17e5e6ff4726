package reporting

import (
	"errors"
	"testing"

	"github.com/revtrack/revtrack/query/reporting/reportingtest"
)

// Attribution over reportingtest.ExampleAttribution, through ClickHouse 18.16. Every figure is the
// hand computation of docs/METRICS.md 10.5 (and the dataset's comment).

func attributionOf(t *testing.T, e env, groupBy, currency string) Attribution {
	t.Helper()
	out, err := e.store.Attribution(ctx(t), AttributionRequest{Scope: scopeOf("app-1", "app-2"), Range: defaultRange, GroupBy: groupBy,
		Currency: currency})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func str(s string) *string { return &s }

// rowsByName indexes rows by key (channels) or kind.
func rowsByName(rows []AttributionRow) map[string]AttributionRow {
	out := map[string]AttributionRow{}
	for _, r := range rows {
		if r.Key != nil {
			out[*r.Key] = r
		} else {
			out[r.Kind] = r
		}
	}
	return out
}

func usd(paying, sub, usage, net int64) map[string]AttributionMoney {
	return map[string]AttributionMoney{"USD": {PayingCustomers: paying, MRRCents: sub + usage, SubscriptionMRRCents: sub, UsageMRRCents: usage,
		NetRevenueCents: net}}
}

func TestAttributionByCampaign(t *testing.T) {
	e := setup(t)
	reportingtest.ExampleAttribution(e.fx)
	e.fx.Flush(t)
	got := attributionOf(t, e, GroupUTMCampaign, "")

	spring := usd(4, 13600, 0, 11166)
	spring["EUR"] = AttributionMoney{PayingCustomers: 1, MRRCents: 3900, SubscriptionMRRCents: 3900, NetRevenueCents: 3202}
	want := []AttributionRow{
		{Kind: RowChannel, Key: str("brand"), Acquisitions: 2, Installs: 1, Customers: 1, InstallRate: r4(5000), TrialStartRate: r4(0),
			PayingRate: r4(0), ByCurrency: usd(0, 0, 500, 410)},
		{Kind: RowChannel, Key: str("spring"), Acquisitions: 5, Installs: 4, TrialsStarted: 1, TrialsConverted: 1, Customers: 5,
			PayingCustomers: 5, InstallRate: r4(8000), TrialStartRate: r4(2500), TrialConversionRate: r4(10000), PayingRate: r4(10000),
			ByCurrency: spring},
		{Kind: RowChannel, Key: str("summer"), Acquisitions: 3, Installs: 2, TrialsStarted: 1, Customers: 2, PayingCustomers: 2,
			InstallRate: r4(6667), TrialStartRate: r4(5000), TrialConversionRate: r4(0), PayingRate: r4(10000), ByCurrency: usd(2, 5800, 0, 4762)},
		{Kind: RowUnattributed, TrialsStarted: 1, Customers: 2, PayingCustomers: 2, TrialConversionRate: r4(0), PayingRate: r4(10000),
			ByCurrency: usd(2, 3800, 0, 3120)},
		{Kind: RowBeforeTracking, Customers: 2, PayingCustomers: 1, PayingRate: r4(5000), ByCurrency: usd(1, 1900, 0, 0)},
		{Kind: RowNoBrowserHistory, Installs: 1, Customers: 1, PayingCustomers: 1, TrialStartRate: r4(0), PayingRate: r4(10000),
			ByCurrency: usd(1, 1900, 0, 1560)},
	}
	jsonEq(t, "rows", got.Rows, want)
	jsonEq(t, "currencies", got.Currencies, []string{"EUR", "USD"})
	if got.GroupBy != GroupUTMCampaign || got.Source != SourceAttribution || got.AsOf != defaultRange.To || !got.MixedCurrencies ||
		got.AppID != nil || got.StaleDataWarning != nil || !got.Coverage.Transactions.Complete || len(got.Coverage.Apps) != 2 {
		t.Fatalf("envelope: %+v", got)
	}
	jsonEq(t, "tracking coverage", got.Coverage.Tracking, []TrackingAppCoverage{
		{AppID: "app-1", FirstBrowserEventAt: Timestamp(reportingtest.At("2026-01-10T08:00:00Z")), CoversRange: true},
		{AppID: "app-2", FirstBrowserEventAt: Timestamp(reportingtest.At("2026-03-04T08:00:00Z")), CoversRange: false},
	})

	// Summed over every row, MRR and paying customers are the summary's, per currency.
	sum, err := e.store.Summary(ctx(t), Request{Scope: scopeOf("app-1", "app-2"), Range: defaultRange, CustomerScope: ScopeIncluded})
	if err != nil {
		t.Fatal(err)
	}
	totals := map[string]AttributionMoney{}
	for _, r := range got.Rows {
		for cur, m := range r.ByCurrency {
			tot := totals[cur]
			tot.MRRCents, tot.SubscriptionMRRCents, tot.UsageMRRCents = tot.MRRCents+m.MRRCents, tot.SubscriptionMRRCents+m.SubscriptionMRRCents,
				tot.UsageMRRCents+m.UsageMRRCents
			tot.PayingCustomers += m.PayingCustomers
			totals[cur] = tot
		}
	}
	for cur, b := range sum.ByCurrency {
		tot := totals[cur]
		if tot.MRRCents != b.MRRCents || tot.SubscriptionMRRCents != b.SubscriptionMRRCents || tot.UsageMRRCents != b.UsageMRRCents ||
			tot.PayingCustomers != b.PayingCustomers {
			t.Errorf("%s: rows add up to %+v, summary %+v", cur, tot, b)
		}
	}
	if len(totals) != len(sum.ByCurrency) || sum.ByCurrency["USD"].MRRCents != 27500 {
		t.Fatalf("currencies: rows %v, summary %v", totals, sum.ByCurrency)
	}

	// currency=EUR keeps that block only; the counts stay.
	eur := rowsByName(attributionOf(t, e, GroupUTMCampaign, "EUR").Rows)
	if len(eur["spring"].ByCurrency) != 1 || eur["spring"].ByCurrency["EUR"].MRRCents != 3900 || eur["spring"].Installs != 4 ||
		len(eur[RowUnattributed].ByCurrency) != 0 {
		t.Fatalf("EUR only: %+v", eur)
	}
	// Both were served from the one kept result (the data did not change), which the filter left whole.
	jsonEq(t, "rows again", attributionOf(t, e, GroupUTMCampaign, "").Rows, want)
}

func TestAttributionDimensions(t *testing.T) {
	e := setup(t)
	reportingtest.ExampleAttribution(e.fx)
	e.fx.Flush(t)
	type cell struct{ acquisitions, installs, customers, usdMRR int64 }
	for _, tc := range []struct {
		groupBy string
		want    map[string]cell
	}{
		// gclid: alpha; gbraid: bravo; wbraid: charlie (usage); none: delta (EUR), echo, foxtrot, india in both apps,
		// and the browsers of e2, golf, hotel.
		{GroupClickIDType, map[string]cell{"gclid": {1, 1, 1, 4900}, "gbraid": {1, 1, 1, 1900}, "wbraid": {1, 1, 1, 500},
			"none": {7, 4, 5, 4900 + 2900 + 1900 + 2900}}},
		// /pricing: alpha; "/": bravo (a trailing slash) and charlie (no path); /blog/post: delta (before the
		// range: no acquisition, its install too); "": the rest, which have no landing URL.
		{GroupLandingPath, map[string]cell{"/pricing": {1, 1, 1, 4900}, "/": {2, 2, 2, 1900 + 500}, "/blog/post": {0, 0, 1, 0},
			"": {7, 4, 4, 2900 + 4900 + 1900 + 2900}}},
		{GroupUTMSource, map[string]cell{"google": {4, 4, 4, 4900 + 1900 + 500 + 4900}, "newsletter": {0, 0, 1, 0}, "facebook": {1, 1, 1, 2900},
			"bing": {1, 0, 0, 0}, "": {4, 2, 2, 1900 + 2900}}},
		{GroupUTMMedium, map[string]cell{"cpc": {1, 1, 1, 4900}, "email": {0, 0, 1, 0}, "": {9, 6, 6, 1900 + 500 + 2900 + 4900 + 1900 + 2900}}},
		{GroupTrackerRef, map[string]cell{"partner-a": {1, 1, 1, 4900}, "": {9, 6, 7, 1900 + 500 + 2900 + 4900 + 1900 + 2900}}},
	} {
		t.Run(tc.groupBy, func(t *testing.T) {
			got := map[string]cell{}
			for _, r := range attributionOf(t, e, tc.groupBy, "").Rows {
				if r.Kind == RowChannel {
					got[*r.Key] = cell{r.Acquisitions, r.Installs, r.Customers, r.ByCurrency["USD"].MRRCents}
				}
			}
			jsonEq(t, tc.groupBy, got, tc.want)
		})
	}
	if _, err := e.store.Attribution(ctx(t), AttributionRequest{Scope: scopeOf("app-1"), Range: defaultRange, GroupBy: "utm_term"}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("groupBy utm_term: %v", err)
	}
}

// Browser history that lands after the install was attributed moves the customer and its install
// from no_browser_history to its channel: the first touch is joined when read.
func TestAttributionLateBrowserHistory(t *testing.T) {
	e := setup(t)
	reportingtest.ExampleAttribution(e.fx)
	e.fx.Flush(t)
	before := rowsByName(attributionOf(t, e, GroupUTMCampaign, "").Rows)
	if before[RowNoBrowserHistory].Customers != 1 || before["summer"].Customers != 2 {
		t.Fatalf("before: %+v", before)
	}
	reportingtest.JulietLateHistory(e.fx)
	e.fx.Flush(t)
	after := rowsByName(attributionOf(t, e, GroupUTMCampaign, "").Rows)
	jsonEq(t, "no browser history", after[RowNoBrowserHistory], AttributionRow{Kind: RowNoBrowserHistory, ByCurrency: map[string]AttributionMoney{}})
	summer := after["summer"]
	if summer.Acquisitions != 4 || summer.Installs != 3 || summer.Customers != 3 || summer.PayingCustomers != 3 {
		t.Fatalf("summer: %+v", summer)
	}
	jsonEq(t, "summer USD", summer.ByCurrency, usd(3, 7700, 0, 6322))
}

// An app without any browser event has not started tracking: every customer of it without a
// credited link is before_tracking, and its coverage says so.
func TestAttributionWithoutTracking(t *testing.T) {
	e := setup(t)
	reportingtest.Example37(e.fx, "app-1")
	e.fx.Flush(t)
	got, err := e.store.Attribution(ctx(t), AttributionRequest{Scope: scopeOf("app-1"), AppID: "app-1", Range: defaultRange, GroupBy: GroupUTMSource})
	if err != nil {
		t.Fatal(err)
	}
	rows := rowsByName(got.Rows)
	// Example37: alpha … hotel without golf (excluded): 7 customers; USD MRR 17,350 (2 paying), EUR 3,900.
	bt := rows[RowBeforeTracking]
	if len(got.Rows) != 3 || bt.Customers != 7 || bt.PayingCustomers != 3 || bt.ByCurrency["USD"].MRRCents != 17350 ||
		bt.ByCurrency["EUR"].MRRCents != 3900 || rows[RowUnattributed].Customers != 0 {
		t.Fatalf("rows: %+v", got.Rows)
	}
	jsonEq(t, "tracking coverage", got.Coverage.Tracking, []TrackingAppCoverage{{AppID: "app-1"}})
	if got.AppID == nil || *got.AppID != "app-1" {
		t.Fatalf("appId: %v", got.AppID)
	}
}
