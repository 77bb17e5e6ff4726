package tracking

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas"
)

// The scenario: three browsers of source src and their verified server events, written through
// the real consumers (sessionize, land-server-events, identity-join), then read with the Store.
//
//	acq-a  first touch partner-a / spring / gclid; installs shop-a (a link), qualifies, starts and
//	       converts a trial; shop-a pays 49.00 USD naming only the shop (twice: a redelivery) and
//	       is refunded 9.00 USD the same way; acq-a pays 10.00 EUR with its own ID.
//	acq-b  first touch partner-b / spring; installs 2 minutes before its first page view (clock
//	       skew), is identified with shop-b, pays 20.00 USD without a trial.
//	acq-c  first touch partner-a; shop-c installed two days before (naming only the shop, before any
//	       link), acq-c is then identified with the existing shop-c, which pays 30.00 USD.
//	shop-z pays 7.00 USD and is never linked; acq-d installs without any browser history.
var (
	touchA = schemas.FirstTouch{TrackerRef: "partner-a", UTMCampaign: "spring", Gclid: "g-a", LandingURL: "https://app.example/a1"}
	touchB = schemas.FirstTouch{TrackerRef: "partner-b", UTMCampaign: "spring"}
	touchC = schemas.FirstTouch{TrackerRef: "partner-a"}
)

func scenario(t *testing.T) env {
	t.Helper()
	e := setup(t)
	a3 := pageView("a3", "src", "acq-a", 6*time.Minute, touchA)
	a3.Name = "signup_click"
	a2 := pageView("a2", "src", "acq-a", 5*time.Minute, touchA)
	e.browser(t,
		pageView("a1", "src", "acq-a", 0, touchA), a2, a3, a2, // a2 retried by the client
		pageView("b1", "src", "acq-b", 10*time.Minute, touchB),
		pageView("c1", "src", "acq-c", 24*time.Hour, touchC),
	)
	paidA := money(serverEvent("a-paid", "src", "paid", "", "shop-a", 4*time.Hour), 4900, "USD")
	e.server(t,
		serverEvent("a-install", "src", "install", "acq-a", "shop-a", time.Hour),
		serverEvent("a-qualified", "src", "qualified", "acq-a", "", 90*time.Minute),
		serverEvent("a-trial", "src", "trial_started", "acq-a", "", 2*time.Hour),
		serverEvent("a-conv", "src", "trial_converted", "acq-a", "", 3*time.Hour),
		paidA, paidA,
		money(serverEvent("a-refund", "src", "refunded", "", "shop-a", 5*time.Hour), 900, "USD"),
		money(serverEvent("a-paid-eur", "src", "paid", "acq-a", "", 6*time.Hour), 1000, "EUR"),
		serverEvent("b-install", "src", "install", "acq-b", "", 8*time.Minute),
		serverEvent("b-identified", "src", "identified", "acq-b", "shop-b", 20*time.Minute),
		money(serverEvent("b-paid", "src", "paid", "acq-b", "", 30*time.Minute), 2000, "USD"),
		serverEvent("c-install-old", "src", "install", "", "shop-c", -48*time.Hour),
		serverEvent("c-identified", "src", "identified", "acq-c", "shop-c", 25*time.Hour),
		money(serverEvent("c-paid", "src", "paid", "", "shop-c", 26*time.Hour), 3000, "USD"),
		money(serverEvent("z-paid", "src", "paid", "", "shop-z", 2*time.Hour), 700, "USD"),
		serverEvent("d-install", "src", "install", "acq-d", "", time.Hour),
	)
	eventually(t, "15 server events in the funnel, only shop-z's unresolved, and 5 browser events summarised", func() bool {
		return e.count(t, "SELECT count() FROM funnel_events FINAL") == 15 &&
			e.count(t, "SELECT count() FROM funnel_events FINAL WHERE acquisition_id = ''") == 1 &&
			e.count(t, "SELECT count() FROM server_events FINAL") == 15 &&
			e.count(t, "SELECT toUInt64(sum(n)) FROM (SELECT uniqExactMerge(events) AS n FROM acquisitions GROUP BY source_id, acquisition_id)") == 5
	})
	return e
}

func TestScenario(t *testing.T) {
	e := scenario(t)
	ctx := testenv.Ctx(t)
	from, to := t0.Add(-3*24*time.Hour), t0.Add(3*24*time.Hour)

	t.Run("RecentEventsOfAnAcquisition", func(t *testing.T) {
		got, err := e.store.RecentEvents(ctx, Filter{Scope: scope, AcquisitionID: "acq-a", From: from, To: to})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, ev := range got {
			ids = append(ids, ev.EventID)
		}
		want := []string{"a-paid-eur", "a-refund", "a-paid", "a-conv", "a-trial", "a-qualified", "a-install", "a3", "a2", "a1"}
		if !reflect.DeepEqual(ids, want) {
			t.Fatalf("events %v, want %v (newest first, the retried and redelivered ones once)", ids, want)
		}
		paid, a1 := got[2], got[9]
		if paid.Evidence != EvidenceServer || paid.Name != "paid" || paid.AcquisitionResolvedBy != "shop_link" || paid.Shop != "shop-a" ||
			paid.AmountCents == nil || *paid.AmountCents != 4900 || paid.Currency != "USD" || paid.AcquisitionSourceID != "src" ||
			!paid.OccurredAt.Equal(t0.Add(4*time.Hour)) {
			t.Fatalf("paid event %+v", paid)
		}
		ft := paid.FirstTouch
		if ft == nil || ft.TrackerRef != "partner-a" || ft.Gclid != "g-a" || ft.PageViews != 2 || !ft.FirstSeenAt.Equal(t0) ||
			!ft.LastSeenAt.Equal(t0.Add(6*time.Minute)) || ft.LandingURL != "https://app.example/a1" {
			t.Fatalf("first touch of the paid event %+v", ft)
		}
		if a1.Evidence != EvidenceBrowser || a1.Name != "page_view" || a1.SessionID == "" || a1.SessionID != got[8].SessionID ||
			a1.URL != "https://app.example/a1" || a1.Path != "/a1" || a1.FirstTouch == nil || a1.FirstTouch.TrackerRef != "partner-a" {
			t.Fatalf("browser event %+v", a1)
		}
	})

	t.Run("RecentEventsLimitAndSource", func(t *testing.T) {
		got, err := e.store.RecentEvents(ctx, Filter{Scope: scope, From: from, To: to, Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 || got[0].EventID != "c-paid" || got[1].EventID != "c-identified" || got[2].EventID != "c1" {
			t.Fatalf("newest three %+v", got)
		}
		if got[0].AcquisitionID != "acq-c" || got[0].FirstTouch == nil || got[0].FirstTouch.TrackerRef != "partner-a" {
			t.Fatalf("c-paid resolved through shop-c's link: %+v", got[0])
		}
		none, err := e.store.RecentEvents(ctx, Filter{Scope: scope, SourceID: "other", From: from, To: to})
		if err != nil || len(none) != 0 {
			t.Fatalf("another source: %+v, %v", none, err)
		}
	})

	t.Run("Funnel", func(t *testing.T) {
		steps := func(counts ...uint64) []FunnelStep {
			out := make([]FunnelStep, len(FunnelSteps))
			for i, name := range FunnelSteps {
				out[i] = FunnelStep{Name: name, Acquisitions: counts[i]}
			}
			return out
		}
		cohortFrom, cohortTo := t0.Add(-time.Hour), t0.Add(2*24*time.Hour)
		for _, tc := range []struct {
			dimension string
			window    time.Duration
			want      []FunnelGroup
		}{
			// acq-a reaches every step (its shop-link payment follows the conversion); acq-c
			// reaches only page_view: shop-c's install predates acq-c, identified is no
			// conversion, and its payment has no install before it. acq-b installs before its
			// first page view (clock skew) and still reaches install, then pays without a trial.
			{DimensionTrackerRef, 0, []FunnelGroup{
				{Key: "partner-a", Steps: steps(2, 1, 1, 1, 1), Qualified: 1},
				{Key: "partner-b", Steps: steps(1, 1, 0, 0, 0)},
			}},
			{DimensionSource, 0, []FunnelGroup{{Key: "src", Steps: steps(3, 2, 1, 1, 1), Qualified: 1}}},
			{DimensionUTMCampaign, 0, []FunnelGroup{
				{Key: "", Steps: steps(1, 0, 0, 0, 0)},
				{Key: "spring", Steps: steps(2, 2, 1, 1, 1), Qualified: 1},
			}},
			// A two-hour window ends before acq-a's trial (two hours after its first page view).
			{DimensionTrackerRef, 2 * time.Hour, []FunnelGroup{
				{Key: "partner-a", Steps: steps(2, 1, 0, 0, 0), Qualified: 1},
				{Key: "partner-b", Steps: steps(1, 1, 0, 0, 0)},
			}},
		} {
			got, err := e.store.Funnel(ctx, FunnelFilter{Scope: scope, Dimension: tc.dimension, From: cohortFrom, To: cohortTo, Window: tc.window})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Groups, tc.want) {
				t.Errorf("funnel by %s, window %s:\n got %+v\nwant %+v", tc.dimension, tc.window, got.Groups, tc.want)
			}
		}
		// The cohort is the acquisitions first seen in the range: acq-c (a day later) is not in it.
		got, err := e.store.Funnel(ctx, FunnelFilter{Scope: scope, From: cohortFrom, To: t0.Add(time.Hour)})
		if err != nil || len(got.Groups) != 1 || got.Groups[0].Steps[0].Acquisitions != 2 || got.WindowSeconds != 30*24*3600 {
			t.Fatalf("first hour's cohort: %+v, %v", got, err)
		}
	})

	t.Run("Ledger", func(t *testing.T) {
		got, err := e.store.Ledger(ctx, scope, from, to)
		if err != nil {
			t.Fatal(err)
		}
		want := []LedgerRow{
			{TrackerRef: "", Currency: "USD", PaidCents: 700, NetCents: 700, PaidCount: 1},
			{TrackerRef: "partner-a", Currency: "EUR", PaidCents: 1000, NetCents: 1000, PaidCount: 1},
			{TrackerRef: "partner-a", Currency: "USD", PaidCents: 7900, RefundedCents: 900, NetCents: 7000, PaidCount: 2, RefundedCount: 1},
			{TrackerRef: "partner-b", Currency: "USD", PaidCents: 2000, NetCents: 2000, PaidCount: 1},
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("ledger\n got %+v\nwant %+v", got, want)
		}
		got, err = e.store.Ledger(ctx, scope, t0.Add(25*time.Hour), to)
		if err != nil || !reflect.DeepEqual(got, []LedgerRow{{TrackerRef: "partner-a", Currency: "USD", PaidCents: 3000, NetCents: 3000, PaidCount: 1}}) {
			t.Fatalf("ledger from day two: %+v, %v", got, err)
		}
	})

	t.Run("Troubleshoot", func(t *testing.T) {
		got, err := e.store.Troubleshoot(ctx, scope, "src", from)
		if err != nil {
			t.Fatal(err)
		}
		if got.PageViews.Count != 4 || got.PageViews.LastAt == nil || !got.PageViews.LastAt.Equal(t0.Add(24*time.Hour+time.Second)) {
			t.Fatalf("page views %+v", got.PageViews)
		}
		if got.LifecycleEvents.Count != 15 || got.LifecycleEvents.LastAt == nil || !got.LifecycleEvents.LastAt.Equal(t0.Add(26*time.Hour+time.Second)) ||
			got.IdentifiedEvents != 2 {
			t.Fatalf("lifecycle events %+v, %d identified", got.LifecycleEvents, got.IdentifiedEvents)
		}
		if got.ClickEvidence != (ClickEvidence{BrowserEvents: 3, Acquisitions: 1, LifecycleEvents: 7}) {
			t.Fatalf("click evidence %+v", got.ClickEvidence)
		}
		for _, c := range got.Conditions {
			if c.Detected {
				t.Errorf("condition %+v detected on a working source", c)
			}
		}
		silent, err := e.store.Troubleshoot(ctx, scope, "src-silent", from)
		if err != nil {
			t.Fatal(err)
		}
		var codes []string
		detected := map[string]bool{}
		for _, c := range silent.Conditions {
			codes = append(codes, c.Code)
			detected[c.Code] = c.Detected
			if c.Checked != (c.Code == ConditionNoPageView || c.Code == ConditionNoLifecycleEvent) {
				t.Errorf("condition %s checked = %v", c.Code, c.Checked)
			}
		}
		if !reflect.DeepEqual(codes, []string{ConditionOriginNotAllowed, ConditionSourceUnavailable, ConditionNoPageView, ConditionNoLifecycleEvent}) ||
			!detected[ConditionNoPageView] || !detected[ConditionNoLifecycleEvent] || silent.PageViews.LastAt != nil ||
			silent.LifecycleEvents.LastAt != nil || silent.Hint == "" {
			t.Fatalf("silent source %+v", silent)
		}
	})
}

// TestLateBrowserHistoryStillAttributes: a payment that names only a shop is resolved through the
// shop's link to an acquisition of another source of the app; the acquisition's browser history
// lands afterwards and the ledger, recent events and funnel attribute the payment from then on,
// because first touches are joined when read.
func TestLateBrowserHistoryStillAttributes(t *testing.T) {
	e := setup(t)
	ctx := testenv.Ctx(t)
	from, to := t0.Add(-24*time.Hour), t0.Add(24*time.Hour)
	e.server(t,
		serverEvent("e-install", "src-web", "install", "acq-e", "shop-e", 0),
		money(serverEvent("e-paid", "src-srv", "paid", "", "shop-e", time.Hour), 5000, "USD"),
	)
	eventually(t, "the payment resolved through the shop link", func() bool {
		return e.count(t, "SELECT count() FROM funnel_events FINAL WHERE event_id = 'e-paid' AND acquisition_source_id = 'src-web' AND acquisition_id = 'acq-e'") == 1
	})
	got, err := e.store.Ledger(ctx, scope, from, to)
	if err != nil || !reflect.DeepEqual(got, []LedgerRow{{Currency: "USD", PaidCents: 5000, NetCents: 5000, PaidCount: 1}}) {
		t.Fatalf("ledger before browser history: %+v, %v", got, err)
	}

	e.browser(t, pageView("e1", "src-web", "acq-e", -10*time.Minute, schemas.FirstTouch{TrackerRef: "partner-e"}))
	want := []LedgerRow{{TrackerRef: "partner-e", Currency: "USD", PaidCents: 5000, NetCents: 5000, PaidCount: 1}}
	eventually(t, "the ledger to attribute the payment to partner-e", func() bool {
		got, err = e.store.Ledger(ctx, scope, from, to)
		return err == nil && reflect.DeepEqual(got, want)
	})
	evs, err := e.store.RecentEvents(ctx, Filter{Scope: scope, AcquisitionID: "acq-e", From: from, To: to})
	if err != nil || len(evs) != 3 || evs[0].EventID != "e-paid" || evs[0].SourceID != "src-srv" || evs[0].AcquisitionSourceID != "src-web" ||
		evs[0].FirstTouch == nil || evs[0].FirstTouch.TrackerRef != "partner-e" {
		t.Fatalf("recent events of acq-e: %+v, %v", evs, err)
	}
	// A workspace that no longer selects the app sees none of it.
	unselected := Scope{WorkspaceID: scope.WorkspaceID, AppIDs: []string{"another-app"}}
	for name, n := range map[string]func() int{
		"events": func() int {
			v, _ := e.store.RecentEvents(ctx, Filter{Scope: unselected, From: from, To: to})
			return len(v)
		},
		"ledger": func() int { v, _ := e.store.Ledger(ctx, unselected, from, to); return len(v) },
		"funnel": func() int {
			v, _ := e.store.Funnel(ctx, FunnelFilter{Scope: unselected, From: from, To: to})
			return len(v.Groups)
		},
		"no app": func() int {
			v, _ := e.store.RecentEvents(ctx, Filter{Scope: Scope{WorkspaceID: "ws"}, From: from, To: to})
			return len(v)
		},
	} {
		if got := n(); got != 0 {
			t.Errorf("%s of an unselected app: %d rows", name, got)
		}
	}
	f, err := e.store.Funnel(ctx, FunnelFilter{Scope: scope, From: from, To: to})
	if err != nil || len(f.Groups) != 1 || f.Groups[0].Key != "src-web" || f.Groups[0].Steps[1].Acquisitions != 1 {
		t.Fatalf("funnel by source: %+v, %v", f, err)
	}
}

// TestFiltersAreValidated: bad requests are refused before any query (the store has no connection).
func TestFiltersAreValidated(t *testing.T) {
	s := New(nil)
	ctx := testenv.Ctx(t)
	now := time.Now()
	for name, call := range map[string]func() error{
		"no workspace": func() error { _, err := s.RecentEvents(ctx, Filter{}); return err },
		"limit too high": func() error {
			_, err := s.RecentEvents(ctx, Filter{Scope: scope, Limit: MaxEventLimit + 1})
			return err
		},
		"negative limit": func() error { _, err := s.RecentEvents(ctx, Filter{Scope: scope, Limit: -1}); return err },
		"from after to": func() error {
			_, err := s.RecentEvents(ctx, Filter{Scope: scope, From: now, To: now.Add(-time.Hour)})
			return err
		},
		"unknown dimension": func() error {
			_, err := s.Funnel(ctx, FunnelFilter{Scope: scope, Dimension: "country"})
			return err
		},
		"window too long": func() error {
			_, err := s.Funnel(ctx, FunnelFilter{Scope: scope, Window: 181 * 24 * time.Hour})
			return err
		},
		"ledger workspace": func() error { _, err := s.Ledger(ctx, Scope{}, now.Add(-time.Hour), now); return err },
		"no source":        func() error { _, err := s.Troubleshoot(ctx, scope, "", now); return err },
	} {
		if err := call(); !errors.Is(err, ErrInvalidFilter) {
			t.Errorf("%s: %v, want ErrInvalidFilter", name, err)
		}
	}
}
