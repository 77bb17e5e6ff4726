package tracking

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/revtrack/revtrack/internal/testenv"
)

// The journey and the recent-events filters and paging, over the scenario of scenario_test.go.
func TestJourneyAndEventFilters(t *testing.T) {
	e := scenario(t)
	ctx := testenv.Ctx(t)
	from, to := t0.Add(-3*24*time.Hour), t0.Add(3*24*time.Hour)
	ids := func(evs []Event) []string {
		out := []string{}
		for _, ev := range evs {
			out = append(out, ev.EventID)
		}
		return out
	}

	t.Run("JourneyGolden", func(t *testing.T) {
		j, err := e.store.Journey(ctx, scope, "acq-a", "")
		if err != nil {
			t.Fatal(err)
		}
		// acq-a: first touch partner-a/spring/gclid landing on /a1; one session of two page views and
		// a custom event; its server events by ID and through shop-a's link, oldest first.
		want := []string{"a1", "a2", "a3", "a-install", "a-qualified", "a-trial", "a-conv", "a-paid", "a-refund", "a-paid-eur"}
		if got := ids(j.Events); !reflect.DeepEqual(got, want) {
			t.Fatalf("journey events %v, want %v", got, want)
		}
		if j.SourceID != "src" || j.LandingPath != "/a1" || len(j.Sessions) != 1 || j.Sessions[0].PageViews != 2 ||
			j.Sessions[0].Events != 3 || len(j.Shops) != 1 || j.Shops[0].Shop != "shop-a" || j.Shops[0].FirstEventName != "install" {
			t.Fatalf("journey %+v", j)
		}
		b, _ := json.MarshalIndent(j, "", "  ")
		testenv.Golden(t, "testdata/journey_acq_a.golden.json", append(b, '\n'))
	})

	t.Run("JourneyWithoutBrowserHistory", func(t *testing.T) {
		j, err := e.store.Journey(ctx, scope, "acq-d", "")
		if err != nil {
			t.Fatal(err)
		}
		if j.FirstTouch != nil || len(j.Sessions) != 0 || !reflect.DeepEqual(ids(j.Events), []string{"d-install"}) || j.SourceID != "src" {
			t.Fatalf("acq-d %+v", j)
		}
		// acq-c joined the existing shop-c with identified: the shop shows, by the identified event.
		c, err := e.store.Journey(ctx, scope, "acq-c", "")
		if err != nil || len(c.Shops) != 1 || c.Shops[0].Shop != "shop-c" || c.Shops[0].FirstEventName != "identified" {
			t.Fatalf("acq-c shops %+v, %v", c.Shops, err)
		}
	})

	t.Run("JourneyUnknownOrOutOfScope", func(t *testing.T) {
		if _, err := e.store.Journey(ctx, scope, "acq-none", ""); !errors.Is(err, ErrUnknownAcquisition) {
			t.Fatalf("unknown acquisition: %v", err)
		}
		other := Scope{WorkspaceID: "ws", AppIDs: []string{"another-app"}}
		if _, err := e.store.Journey(ctx, other, "acq-a", ""); !errors.Is(err, ErrUnknownAcquisition) {
			t.Fatalf("an app not selected: %v", err)
		}
		if _, err := e.store.Journey(ctx, scope, "acq-a", "other-source"); !errors.Is(err, ErrUnknownAcquisition) {
			t.Fatalf("another source's acquisition: %v", err)
		}
	})

	t.Run("NameAndShopFilters", func(t *testing.T) {
		got, err := e.store.RecentEvents(ctx, Filter{Scope: scope, Name: "install", From: from, To: to})
		if err != nil || !reflect.DeepEqual(ids(got), []string{"a-install", "d-install", "b-install", "c-install-old"}) {
			t.Fatalf("installs %v, %v", ids(got), err)
		}
		got, err = e.store.RecentEvents(ctx, Filter{Scope: scope, Name: "signup_click", From: from, To: to})
		if err != nil || !reflect.DeepEqual(ids(got), []string{"a3"}) {
			t.Fatalf("custom event %v, %v", ids(got), err)
		}
		got, err = e.store.RecentEvents(ctx, Filter{Scope: scope, Name: "no-such-name", From: from, To: to})
		if err != nil || len(got) != 0 {
			t.Fatalf("an unknown name matches nothing (not an error): %v, %v", ids(got), err)
		}
		got, err = e.store.RecentEvents(ctx, Filter{Scope: scope, Shop: "shop-a", From: from, To: to})
		if err != nil || !reflect.DeepEqual(ids(got), []string{"a-refund", "a-paid", "a-install"}) {
			t.Fatalf("shop-a %v, %v", ids(got), err)
		}
	})

	t.Run("PagingWalksTheWholeListOnce", func(t *testing.T) {
		all, err := e.store.RecentEvents(ctx, Filter{Scope: scope, From: from, To: to, Limit: 200})
		if err != nil {
			t.Fatal(err)
		}
		var walked []string
		f := Filter{Scope: scope, From: from, To: to, Limit: 3}
		for pages := 0; ; pages++ {
			p, err := e.store.EventsPage(ctx, f)
			if err != nil || pages > 20 {
				t.Fatalf("page %d: %v", pages, err)
			}
			walked = append(walked, ids(p.Events)...)
			if p.NextCursor == "" {
				break
			}
			if f.After, err = ParseCursor(p.NextCursor); err != nil {
				t.Fatal(err)
			}
		}
		if !reflect.DeepEqual(walked, ids(all)) {
			t.Fatalf("pages of 3 %v, one page %v", walked, ids(all))
		}
		if _, err := ParseCursor("not-a-cursor"); !errors.Is(err, ErrInvalidFilter) {
			t.Fatalf("a bad cursor: %v", err)
		}
	})
}

// Same-instant events of both evidences and several sources page in the listing's order.
func TestCursorTies(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC)
	evs := []Event{
		{Evidence: EvidenceBrowser, SourceID: "a", EventID: "2", OccurredAt: at},
		{Evidence: EvidenceServer, SourceID: "a", EventID: "1", OccurredAt: at},
	}
	c := cursorOf(evs[0])
	back, err := ParseCursor(c.String())
	if err != nil || *back != c || back.AtMs != uint64(at.UnixMilli()) {
		t.Fatalf("round trip %+v, %v", back, err)
	}
}

// The funnel by the first-touch channels added for the console: the same values as attribution's.
func TestFunnelByClickIDTypeAndLandingPath(t *testing.T) {
	e := scenario(t)
	ctx := testenv.Ctx(t)
	steps := func(counts ...uint64) []FunnelStep {
		out := make([]FunnelStep, len(FunnelSteps))
		for i, name := range FunnelSteps {
			out[i] = FunnelStep{Name: name, Acquisitions: counts[i]}
		}
		return out
	}
	for _, tc := range []struct {
		dimension string
		want      []FunnelGroup
	}{
		// acq-a carried a gclid and landed on /a1; acq-b and acq-c neither.
		{DimensionClickIDType, []FunnelGroup{{Key: "gclid", Steps: steps(1, 1, 1, 1, 1), Qualified: 1}, {Key: "none", Steps: steps(2, 1, 0, 0, 0)}}},
		{DimensionLandingPath, []FunnelGroup{{Key: "", Steps: steps(2, 1, 0, 0, 0)}, {Key: "/a1", Steps: steps(1, 1, 1, 1, 1), Qualified: 1}}},
		{DimensionUTMSource, []FunnelGroup{{Key: "", Steps: steps(3, 2, 1, 1, 1), Qualified: 1}}},
	} {
		got, err := e.store.Funnel(ctx, FunnelFilter{Scope: scope, Dimension: tc.dimension, From: t0.Add(-time.Hour), To: t0.Add(2 * 24 * time.Hour)})
		if err != nil || !reflect.DeepEqual(got.Groups, tc.want) {
			t.Errorf("%s: %+v, %v; want %+v", tc.dimension, got.Groups, err, tc.want)
		}
	}
}
