package main

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/revtrack/revtrack/schemas"
)

// The tracking part is deterministic, inside the window the edge and the retention accept, valid on
// the consume path, and has the shares it claims: about 40 % of the customers linked, three
// unconverted browsers per customer, twenty campaigns.
func TestPlanTracking(t *testing.T) {
	end := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	ds := generate(end, 0.02, 1)
	src := map[string]string{"bench-app-1": "s1", "bench-app-2": "s2", "bench-app-3": "s3"}
	a, b := planTracking(ds, "ws", src), planTracking(ds, "ws", src)
	if a.facts != b.facts || len(a.browser) != len(b.browser) || !reflect.DeepEqual(a.browser, b.browser) || !reflect.DeepEqual(a.server, b.server) {
		t.Fatal("two plans of the same data set differ")
	}
	if !a.facts.sameAs(planTracking(ds, "", nil).facts) {
		t.Error("the counts depend on the IDs")
	}
	f := a.facts
	n := ds.facts.Customers
	if f.Browsers != unconvertedPerCustomer*n+f.Tracked || f.Tracked < n*35/100 || f.Tracked > n*45/100 || f.Credited == 0 || f.Credited >= f.Tracked {
		t.Fatalf("facts %+v for %d customers", f, n)
	}
	from := end.AddDate(0, 0, -trackingDays)
	campaigns, acqs, links := map[string]bool{}, map[string]bool{}, 0
	for _, e := range a.browser {
		if err := e.Validate(); err != nil || e.OccurredAt.Before(from) || !e.OccurredAt.Before(end) || src[e.AppID] != e.SourceID {
			t.Fatalf("browser event %+v: %v", e, err)
		}
		if end.Sub(e.OccurredAt) > schemas.MaxEventAge {
			t.Fatalf("%s is older than the edge accepts", e.EventID)
		}
		if acqs[e.AcquisitionID] {
			t.Fatalf("acquisition %s twice", e.AcquisitionID)
		}
		acqs[e.AcquisitionID] = true
		if e.FirstTouch.UTMCampaign != "" {
			campaigns[e.FirstTouch.UTMCampaign] = true
		}
	}
	names := map[string]int{}
	for _, e := range a.server {
		if err := e.Validate(); err != nil || e.OccurredAt.Before(from) || !e.OccurredAt.Before(end) || e.CustomerRef != strings.ToLower(e.CustomerRef) {
			t.Fatalf("server event %+v: %v", e, err)
		}
		names[e.Name]++
		if e.AcquisitionID != "" {
			links++
			if !acqs[e.AcquisitionID] {
				t.Errorf("%s links an acquisition without browser history", e.EventID)
			}
		}
	}
	if len(campaigns) != trackingCampaigns || links != f.Links || f.ServerEvents != len(a.server) ||
		names["install"] != f.Credited || names["identified"] != f.Tracked-f.Credited || names["trial_started"] == 0 {
		t.Errorf("%d campaigns, %d links, server events %v, facts %+v", len(campaigns), links, names, f)
	}
}

// A data set whose marker records the tracking part of another generator needs a reload; one loaded
// without any is reusable (the tracking part is added).
func TestTrackingReuse(t *testing.T) {
	ds := generate(time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC), 0.004, 1)
	f := planTracking(ds, "", nil).facts
	if why := trackingReuse(marker{}, ds); why != "" {
		t.Errorf("without tracking: %q", why)
	}
	if why := trackingReuse(marker{Tracking: &trackingResult{Facts: f}}, ds); why != "" {
		t.Errorf("same tracking: %q", why)
	}
	old := f
	old.Version--
	if why := trackingReuse(marker{Tracking: &trackingResult{Facts: old}}, ds); !strings.Contains(why, "reload") {
		t.Errorf("older tracking: %q", why)
	}
}

// The revenue rows: computed, over a 365-date series ending on the data set's last whole day, 12
// whole months of movements, attribution by campaign over the summary's range, each judged against
// the computed summary (2×, 2×, 1×).
func TestRevenueTargets(t *testing.T) {
	sf, mf, mt := revenueRanges("2026-11-25")
	if sf != "2025-11-26" || mf != "2025-11-01" || mt != "2026-10-31" {
		t.Errorf("ranges %s %s %s", sf, mf, mt)
	}
	ts := newAPI("http://x", "k").targets(queryPlan{from: "2026-10-27", to: "2026-11-25", lastDay: "2026-11-25", limit: 50})
	want := map[string]goal{seriesComputed: {relTo: summaryComputed, maxRatio: 2}, movementsComputed: {relTo: summaryComputed, maxRatio: 2},
		attributionComputed: {relTo: summaryComputed, maxRatio: 1}}
	for _, tg := range ts {
		if g, ok := want[tg.name]; ok {
			if tg.goal != g || !tg.computed {
				t.Errorf("%s: goal %+v computed %v", tg.name, tg.goal, tg.computed)
			}
			delete(want, tg.name)
		}
	}
	if len(want) > 0 {
		t.Errorf("missing targets %v", want)
	}
}
