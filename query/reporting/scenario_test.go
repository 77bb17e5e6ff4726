package reporting

import (
	"errors"
	"slices"
	"testing"

	"github.com/revtrack/revtrack/query/reporting/reportingtest"
)

// The golden datasets of reportingtest, evaluated through ClickHouse 18.16. Every expected figure is
// the hand computation of docs/METRICS.md (3.7–3.11, 6, 7.3, 8) or of the dataset's comment.

func complete(b BilledUsage) BilledUsage { b.Complete = true; return b }

func TestSummaryExample37(t *testing.T) {
	e := setup(t)
	reportingtest.Example37(e.fx, "app-1")
	e.fx.Flush(t)
	req := Request{Scope: scopeOf("app-1"), Range: defaultRange, CustomerScope: ScopeIncluded}

	sum, err := e.store.Summary(ctx(t), req)
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, "currencies", sum.Currencies, []string{"EUR", "USD"})
	if !sum.MixedCurrencies || sum.AppID != nil || sum.AsOf != defaultRange.To || sum.Source != SourceSummary || sum.StaleDataWarning != nil {
		t.Fatalf("envelope: %+v", sum.Envelope)
	}
	jsonEq(t, "USD", sum.ByCurrency["USD"], CurrencyBlock{MRRCents: 17350, SubscriptionMRRCents: 13150, UsageMRRCents: 4200, ARRCents: 208200,
		PayingCustomers: 2, ARPUCents: 6575, NetRevenueRetentionRate: r4(8193), LargestCustomerShare: r4(4755), TopFiveCustomerShare: r4(10000),
		TopTenCustomerShare: r4(10000), Usage: UsageBlock{UsageMRRCents: 4200,
			BilledUsage:          complete(BilledUsage{GrossCents: 4200, FeesCents: 752, NetCents: 3448, TransactionCount: 2}),
			ObservedUsageCharges: ObservedUsage{GrossCents: 4300, Count: 4}}})
	jsonEq(t, "EUR", sum.ByCurrency["EUR"], CurrencyBlock{MRRCents: 3900, SubscriptionMRRCents: 3900, ARRCents: 46800, PayingCustomers: 1,
		ARPUCents: 3900, NetRevenueRetentionRate: r4(10000), LargestCustomerShare: r4(10000), TopFiveCustomerShare: r4(10000),
		TopTenCustomerShare: r4(10000), Usage: UsageBlock{BilledUsage: complete(BilledUsage{})}})
	jsonEq(t, "usage activity", sum.UsageActivity, UsageActivity{Source: "received_usage_events", EventCount: 4, TotalCount: 19,
		ByName:         []UsageName{{Name: "orders_synced", EventCount: 3, TotalCount: 18}, {Name: "labels_printed", EventCount: 1, TotalCount: 1}},
		LastOccurredAt: Timestamp(reportingtest.At("2026-03-16T08:00:00Z")), Loaded: true})
	jsonEq(t, "coverage", sum.Coverage.Transactions, TransactionCoverage{Complete: true, CoverageFrom: MustDate("2024-06-01"),
		CoverageThrough: MustDate("2026-03-31")})
	jsonEq(t, "lifecycle coverage", sum.Coverage.Lifecycle, StreamCoverage{Complete: true, CoverageFrom: MustDate("2023-02-14"),
		CoverageThrough: MustDate("2026-03-31")})
	if len(sum.Coverage.Apps) != 1 || *sum.Coverage.Apps[0].LastSyncStatus != "succeeded" ||
		stamp(timeOf(sum.Coverage.Apps[0].LastSuccessfulSyncAt)) != "2026-03-31T05:10:00Z" {
		t.Fatalf("apps: %+v", sum.Coverage.Apps)
	}

	req.CustomerScope = ScopeAll
	all, err := e.store.Summary(ctx(t), req)
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, "USD, all", all.ByCurrency["USD"], CurrencyBlock{MRRCents: 27750, SubscriptionMRRCents: 23050, UsageMRRCents: 4700, ARRCents: 333000,
		PayingCustomers: 3, ARPUCents: 7683, NetRevenueRetentionRate: r4(8882), LargestCustomerShare: r4(3748), TopFiveCustomerShare: r4(10000),
		TopTenCustomerShare: r4(10000), Usage: UsageBlock{UsageMRRCents: 4700,
			BilledUsage:          complete(BilledUsage{GrossCents: 4700, FeesCents: 842, NetCents: 3858, TransactionCount: 3}),
			ObservedUsageCharges: ObservedUsage{GrossCents: 4300, Count: 4}}})
	if all.UsageActivity.EventCount != 5 || all.UsageActivity.TotalCount != 119 {
		t.Fatalf("usage activity, all: %+v", all.UsageActivity)
	}

	req.CustomerScope = ScopeExcluded
	ex, err := e.store.Summary(ctx(t), req)
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, "excluded currencies", ex.Currencies, []string{"USD"})
	jsonEq(t, "USD, excluded", ex.ByCurrency["USD"], CurrencyBlock{MRRCents: 10400, SubscriptionMRRCents: 9900, UsageMRRCents: 500, ARRCents: 124800,
		PayingCustomers: 1, ARPUCents: 9900, NetRevenueRetentionRate: r4(10000), LargestCustomerShare: r4(10000), TopFiveCustomerShare: r4(10000),
		TopTenCustomerShare: r4(10000), Usage: UsageBlock{UsageMRRCents: 500,
			BilledUsage: complete(BilledUsage{GrossCents: 500, FeesCents: 90, NetCents: 410, TransactionCount: 1})}})

	// currency=EUR builds that block only; a currency without rows gives none.
	req.CustomerScope, req.Currency = ScopeIncluded, "EUR"
	eur, err := e.store.Summary(ctx(t), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(eur.ByCurrency) != 1 || eur.MixedCurrencies || !slices.Equal(eur.Currencies, []string{"EUR"}) {
		t.Fatalf("EUR only: %+v", eur)
	}
	req.Currency = "GBP"
	gbp, err := e.store.Summary(ctx(t), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(gbp.ByCurrency) != 0 || len(gbp.Currencies) != 0 || gbp.Currencies == nil {
		t.Fatalf("GBP: %+v", gbp)
	}
}

func TestCustomersExample37(t *testing.T) {
	e := setup(t)
	cs := reportingtest.Example37(e.fx, "app-1")
	e.fx.Flush(t)
	list, err := e.store.Customers(ctx(t), ListRequest{Scope: scopeOf("app-1"), Range: defaultRange, CustomerScope: ScopeIncluded})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for name, c := range cs {
		if name != "golf" {
			want = append(want, c.ID())
		}
	}
	slices.Sort(want)
	var got []string
	byID := map[string]Customer{}
	for _, c := range list.Customers {
		got = append(got, c.ID)
		byID[c.ID] = c
	}
	if !slices.Equal(got, want) || list.NextCursor != nil {
		t.Fatalf("ids %v, want %v (next %v)", got, want, list.NextCursor)
	}
	jsonEq(t, "alpha", byID[cs["alpha"].ID()], Customer{ID: cs["alpha"].ID(), AppID: "app-1", Name: "Alpha", Domain: "alpha.myshopify.com",
		Status: "installed", Paying: true, AMRCents: 4900, AMRCurrency: "USD", LTVByCurrencyCents: map[string]int64{"USD": 12204}, Plan: "Starter",
		Tags: []string{"usage_billing"}, Health: HealthAtRisk, FirstSeen: "2025-06-10T08:50:00Z", LastActive: "2026-03-20T09:00:00Z",
		StoreClassification: "production"})
	for name, want := range map[string]struct {
		paying bool
		amr    int64
		health string
		class  string
		tags   []string
	}{
		"bravo":   {true, 8250, HealthHealthy, "production", []string{"annual_plan"}},
		"charlie": {false, 0, HealthNotPaying, "production", nil},
		"delta":   {false, 0, HealthAtRisk, "production", nil},
		"echo":    {false, 0, HealthNotPaying, "production", []string{"usage_billing"}},
		"foxtrot": {true, 3900, HealthHealthy, "production", nil},
		"hotel":   {false, 0, HealthNotPaying, "development", nil},
	} {
		c := byID[cs[name].ID()]
		if c.Paying != want.paying || c.AMRCents != want.amr || c.Health != want.health || c.StoreClassification != want.class ||
			!slices.Equal(c.Tags, want.tags) {
			t.Errorf("%s: %+v, want %+v", name, c, want)
		}
	}

	// Paging: two at a time, in ID order, then the excluded scope (golf only).
	var paged []string
	cursor := ""
	for {
		page, err := e.store.Customers(ctx(t), ListRequest{Scope: scopeOf("app-1"), Range: defaultRange, CustomerScope: ScopeIncluded,
			Cursor: cursor, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range page.Customers {
			paged = append(paged, c.ID)
		}
		if page.NextCursor == nil {
			break
		}
		cursor = *page.NextCursor
	}
	if !slices.Equal(paged, want) {
		t.Fatalf("paged %v, want %v", paged, want)
	}
	ex, err := e.store.Customers(ctx(t), ListRequest{Scope: scopeOf("app-1"), Range: defaultRange, CustomerScope: ScopeExcluded})
	if err != nil {
		t.Fatal(err)
	}
	if len(ex.Customers) != 1 || ex.Customers[0].ID != cs["golf"].ID() || !ex.Customers[0].ReportExcluded || !ex.Customers[0].Paying {
		t.Fatalf("excluded: %+v", ex.Customers)
	}
	if _, err := e.store.Customers(ctx(t), ListRequest{Scope: scopeOf("app-1"), Range: defaultRange, Cursor: "nope"}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("bad cursor: %v", err)
	}
}

func TestCustomerDetailExample37(t *testing.T) {
	e := setup(t)
	cs := reportingtest.Example37(e.fx, "app-1")
	e.fx.Flush(t)
	for _, ref := range []string{cs["alpha"].ID(), "alpha.myshopify.com", "ALPHA.myshopify.com"} {
		d, err := e.store.Customer(ctx(t), DetailRequest{Scope: scopeOf("app-1"), Ref: ref, Range: defaultRange})
		if err != nil {
			t.Fatal(err)
		}
		a := d.Analytics
		jsonEq(t, "paying", a.Paying, PayingState{Paying: true,
			Reason: `paying: active subscription "Starter" at 49.00 USD every 30 days, last subscription payment on 2026-03-10`})
		jsonEq(t, "current", a.Current.ByCurrency, map[string]MRRBlock{"USD": {MRRCents: 6100, SubscriptionMRRCents: 4900, UsageMRRCents: 1200}})
		jsonEq(t, "last30", a.Last30Days.ByCurrency, map[string]Last30Block{"USD": {GrossCents: 5100, FeeCents: 765, NetCents: 4158,
			TotalDeductionsCents: 942, SubscriptionCents: 4900, UsageCents: 1200, RefundCents: 1000, TransactionCount: 3,
			ObservedUsageCharges: ObservedUsageDetail{GrossCents: 1150, Count: 2, LastOccurredAt: Timestamp(reportingtest.At("2026-03-20T09:00:00Z"))}}})
		jsonEq(t, "currencies", a.Currencies, []string{"USD"})
		if stamp(timeOf(a.AsOf)) != "2026-03-31T12:00:00Z" {
			t.Fatalf("asOf on today is the response time: %v", a.AsOf)
		}
		if a.Last30Days.UsageActivity.EventCount != 2 || a.Last30Days.UsageActivity.TotalCount != 8 || !a.Coverage.Transactions.Complete {
			t.Fatalf("activity or coverage: %+v %+v", a.Last30Days.UsageActivity, a.Coverage)
		}
		var types []string
		for _, en := range d.Timeline {
			types = append(types, en.Source+":"+en.Type)
		}
		// Newest first: usage sale and its subscription sale are distinct instants; the duplicate
		// activation event and the duplicate usage sale appear once.
		jsonEq(t, "timeline", types, []string{"transaction:refund", "transaction:usage", "transaction:subscription", "transaction:subscription",
			"transaction:subscription", "lifecycle_event:SUBSCRIPTION_CHARGE_ACTIVATED", "lifecycle_event:SUBSCRIPTION_CHARGE_ACCEPTED",
			"lifecycle_event:RELATIONSHIP_INSTALLED"})
	}
	// A past reporting date: asOf is end(D); the paying verdict replays the state then.
	d, err := e.store.Customer(ctx(t), DetailRequest{Scope: scopeOf("app-1"), Ref: cs["delta"].ID(),
		Range: Range{From: MustDate("2026-02-18"), To: MustDate("2026-03-19")}, TimelineLimit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !d.Analytics.Paying.Paying || stamp(timeOf(d.Analytics.AsOf)) != "2026-03-20T00:00:00Z" || len(d.Timeline) != 1 ||
		d.Timeline[0].Type != "subscription" {
		t.Fatalf("delta on 03-19: %+v, timeline %+v", d.Analytics, d.Timeline)
	}
	// Excluded customers are answered (docs/METRICS.md section 6); other apps are not found.
	g, err := e.store.Customer(ctx(t), DetailRequest{Scope: scopeOf("app-1"), Ref: "golf.myshopify.com", Range: defaultRange})
	if err != nil || !g.Customer.ReportExcluded {
		t.Fatalf("golf: %v %+v", err, g.Customer)
	}
	for _, sc := range []Scope{scopeOf("app-2"), {WorkspaceID: "other", AppIDs: []string{"app-1"}}} {
		if _, err := e.store.Customer(ctx(t), DetailRequest{Scope: sc, Ref: cs["alpha"].ID(), Range: defaultRange}); !errors.Is(err, ErrNotFound) {
			t.Fatalf("outside the scope: %v", err)
		}
	}
}

func TestNetRevenueRetentionExample(t *testing.T) {
	e := setup(t)
	reportingtest.ExampleNRR(e.fx, "app-1")
	e.fx.Flush(t)
	m, err := e.store.Metric(ctx(t), MetricNetRevenueRetention, Request{Scope: scopeOf("app-1"), Range: defaultRange, CustomerScope: ScopeIncluded})
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, "NRR", m.ByCurrency, map[string]any{"USD": NRRBlock{NetRevenueRetentionRate: r4(8942)}})
	if *m.MetricBasis != basisNRR || m.Metric != MetricNetRevenueRetention {
		t.Fatalf("%+v", m)
	}
	mrr, err := e.store.Metric(ctx(t), MetricMRR, Request{Scope: scopeOf("app-1"), Range: defaultRange, CustomerScope: ScopeIncluded})
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, "MRR", mrr.ByCurrency, map[string]any{"USD": MRRBlock{MRRCents: 19950, SubscriptionMRRCents: 19950}})
	// A range that opens after the cohort's changes: everyone paying on 03-20 keeps their MRR but
	// mike (frozen on 03-20, so not paying on the close) and kilo/november changed before.
	late, err := e.store.Metric(ctx(t), MetricNetRevenueRetention, Request{Scope: scopeOf("app-1"),
		Range: Range{From: MustDate("2026-03-20"), To: MustDate("2026-03-31")}, CustomerScope: ScopeIncluded})
	if err != nil {
		t.Fatal(err)
	}
	// Opening date 03-19: kilo 2,900, lima 8,250, mike 2,900, november 4,900, oscar 3,900 =
	// 22,850; closing 22,850 − 2,900 = 19,950 → 0.8731.
	jsonEq(t, "NRR from 03-20", late.ByCurrency, map[string]any{"USD": NRRBlock{NetRevenueRetentionRate: r4(8731)}})
	if _, err := e.store.Metric(ctx(t), "ltv", Request{Scope: scopeOf("app-1"), Range: defaultRange}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown metric: %v", err)
	}
}

func TestConcentrationExample(t *testing.T) {
	e := setup(t)
	reportingtest.ExampleConcentration(e.fx, "app-1")
	e.fx.Flush(t)
	m, err := e.store.Metric(ctx(t), MetricCustomerConcentration, Request{Scope: scopeOf("app-1"), Range: defaultRange, CustomerScope: ScopeIncluded})
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, "concentration", m.ByCurrency, map[string]any{"USD": ConcentrationBlock{LargestCustomerShare: r4(3571),
		TopFiveCustomerShare: r4(8929), TopTenCustomerShare: r4(10000)}})
}

func TestLifecycleExample(t *testing.T) {
	e := setup(t)
	cs := reportingtest.ExampleLifecycle(e.fx, "app-a", "app-b")
	e.fx.Flush(t)
	sum, err := e.store.Summary(ctx(t), Request{Scope: scopeOf("app-a", "app-b"), Range: defaultRange, CustomerScope: ScopeIncluded})
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, "currencies", sum.Currencies, []string{"JPY", "USD"})
	// USD paying on the close: papa 1,900 and uniform in both apps 1,000 each.
	usd := sum.ByCurrency["USD"]
	if usd.SubscriptionMRRCents != 3900 || usd.PayingCustomers != 3 || usd.ARPUCents != 1300 || *usd.NetRevenueRetentionRate != 2436 {
		t.Fatalf("USD: %+v", usd)
	}
	if jpy := sum.ByCurrency["JPY"]; jpy.MRRCents != 5000 || jpy.ARRCents != 60000 || jpy.PayingCustomers != 1 || jpy.NetRevenueRetentionRate != nil {
		t.Fatalf("JPY: %+v", jpy)
	}
	for name, want := range map[string]struct {
		reason, health string
		tags           []string
	}{
		"papa":   {`paying: active subscription "Lite" at 19.00 USD every 30 days, last subscription payment on 2026-03-15`, HealthHealthy, []string{"reinstalled"}},
		"quebec": {"not paying: subscription ended on 2026-03-05 (uninstalled)", HealthChurned, nil},
		"romeo":  {`paying: active subscription "Yen plan" at 5000 JPY every 30 days, last subscription payment on 2026-03-12`, HealthHealthy, nil},
		"sierra": {"not paying: subscription awaiting merchant approval", HealthNotPaying, nil},
		"tango":  {"not paying: subscription ended on 2026-03-03 (expired)", HealthAtRisk, []string{"one_time_purchase"}},
	} {
		d, err := e.store.Customer(ctx(t), DetailRequest{Scope: scopeOf("app-a", "app-b"), Ref: cs[name].ID(), Range: defaultRange})
		if err != nil {
			t.Fatal(err)
		}
		if d.Analytics.Paying.Reason != want.reason || d.Customer.Health != want.health || !slices.Equal(d.Customer.Tags, want.tags) {
			t.Errorf("%s: %q %s %v", name, d.Analytics.Paying.Reason, d.Customer.Health, d.Customer.Tags)
		}
	}
	// The shared domain: 409 with both IDs; one app selected, or an ID, resolves it.
	_, err = e.store.Customer(ctx(t), DetailRequest{Scope: scopeOf("app-a", "app-b"), Ref: "shared.myshopify.com", Range: defaultRange})
	var amb *AmbiguousError
	wantIDs := []string{cs["uniform-app-a"].ID(), cs["uniform-app-b"].ID()}
	slices.Sort(wantIDs)
	if !errors.As(err, &amb) || !slices.Equal(amb.CustomerIDs, wantIDs) {
		t.Fatalf("shared domain: %v", err)
	}
	one, err := e.store.Customer(ctx(t), DetailRequest{Scope: scopeOf("app-b"), Ref: "shared.myshopify.com", Range: defaultRange})
	if err != nil || one.Customer.ID != cs["uniform-app-b"].ID() {
		t.Fatalf("shared domain in app-b: %v %+v", err, one.Customer)
	}
}

func TestCoverageAndStaleWarnings(t *testing.T) {
	e := setup(t)
	apps := reportingtest.ExampleCoverage(e.fx)
	e.fx.Flush(t)
	sum, err := e.store.Summary(ctx(t), Request{Scope: scopeOf(apps...), Range: defaultRange, CustomerScope: ScopeIncluded})
	if err != nil {
		t.Fatal(err)
	}
	want := "Transaction history for app cov-a reached the row limit of 1,000,000 rows; transactions before 2026-03-06 are not loaded. " +
		"No successful platform sync has finished for app cov-b; its figures are missing or partial. " +
		"Platform data for app cov-c was last synced at 2026-03-29T05:10:00Z, more than 24 hours before this response. " +
		"The latest platform sync for app cov-c, started at 2026-03-30T05:00:00Z, ended with status failed."
	if sum.StaleDataWarning == nil || *sum.StaleDataWarning != want {
		t.Fatalf("warning:\n got %v\nwant %s", sum.StaleDataWarning, want)
	}
	a := sum.Coverage.Apps[0]
	jsonEq(t, "cov-a, 03-02 … 03-31", a.Transactions, TransactionCoverage{CoverageFrom: MustDate("2026-03-06"), CoverageThrough: MustDate("2026-03-31"), Truncated: true})
	jsonEq(t, "combined", sum.Coverage.Transactions, TransactionCoverage{CoverageFrom: MustDate("2026-03-06"), CoverageThrough: MustDate("2026-03-31"), Truncated: true})
	if *sum.Coverage.Apps[3].LastSyncStatus != "running" {
		t.Fatalf("cov-d: %+v", sum.Coverage.Apps[3])
	}

	only, err := e.store.Summary(ctx(t), Request{Scope: scopeOf("cov-a"), AppID: "cov-a", Range: Range{From: MustDate("2026-03-10"), To: MustDate("2026-03-31")},
		CustomerScope: ScopeIncluded})
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, "cov-a, 03-10 … 03-31", only.Coverage.Transactions, TransactionCoverage{Complete: true, CoverageFrom: MustDate("2026-03-06"),
		CoverageThrough: MustDate("2026-03-31"), Truncated: true})
	if *only.AppID != "cov-a" || !only.Coverage.Lifecycle.Complete {
		t.Fatalf("%+v", only.Envelope)
	}
	// A reporting date after the forward cursor is not complete (docs/METRICS.md 7.2, `complete`).
	future, err := e.store.Summary(ctx(t), Request{Scope: scopeOf("cov-b"), Range: Range{From: MustDate("2026-03-10"), To: MustDate("2026-04-01")},
		CustomerScope: ScopeIncluded})
	if err != nil {
		t.Fatal(err)
	}
	if future.Coverage.Transactions.Complete || future.Coverage.Lifecycle.Complete {
		t.Fatalf("through 03-31 does not cover 04-01: %+v", future.Coverage)
	}
}

func TestNoAppsNoData(t *testing.T) {
	e := setup(t)
	sum, err := e.store.Summary(ctx(t), Request{Scope: scopeOf(), Range: defaultRange, CustomerScope: ScopeIncluded})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.ByCurrency) != 0 || sum.Coverage.Transactions.Complete || sum.StaleDataWarning != nil || len(sum.Coverage.Apps) != 0 {
		t.Fatalf("%+v", sum)
	}
	list, err := e.store.Customers(ctx(t), ListRequest{Scope: scopeOf("app-1"), Range: defaultRange, CustomerScope: ScopeIncluded})
	if err != nil || len(list.Customers) != 0 || list.Customers == nil {
		t.Fatalf("%v %+v", err, list)
	}
}
