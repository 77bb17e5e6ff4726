package devcli

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/revtrack/revtrack/devtools/partnerfake"
	"github.com/revtrack/revtrack/schemas"
)

// TestTrackingPlan checks the demo's tracked shops on the data a `make run` on a fixed day serves:
// about half of the eligible customers are tracked, every channel and click-ID type appears, every
// event is in the range the edge accepts, and a second plan is the same (same IDs, same times).
func TestTrackingPlan(t *testing.T) {
	end := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	d := partnerfake.Generate(partnerfake.DemoConfig(end))
	appID := demoApps[0].PlatformAppID
	p := planTracking(d, appID, "demo", "tracker_pk_x", demoPageOrigin)
	if again := planTracking(d, appID, "demo", "tracker_pk_x", demoPageOrigin); !reflect.DeepEqual(p, again) {
		t.Fatal("two plans of the same data differ: a second make run would count events twice")
	}
	t.Logf("%s, channels %v", p, p.channelCounts())
	if share := float64(len(p.Shops)) / float64(p.Eligible); share < 0.4 || share > 0.6 || p.Eligible >= p.Customers {
		t.Errorf("tracked %d of %d eligible (%d customers): want 40-60%% of the eligible, and untracked customers", len(p.Shops), p.Eligible, p.Customers)
	}
	counts := p.channelCounts()
	for _, c := range demoChannels {
		if counts[c.Name] == 0 {
			t.Errorf("no shop arrives through %s", c.Name)
		}
	}

	earliest, _ := schemas.EventTimeRange(end, time.Hour)
	ids := map[string]bool{}
	campaigns, clicks, names := map[string]bool{}, map[string]bool{}, map[string]int{}
	check := func(shop, id, at string) {
		if ids[id] {
			t.Errorf("%s: event ID %s used twice", shop, id)
		}
		ids[id] = true
		ts, err := time.Parse(time.RFC3339, at)
		// A week to spare: make run may be started days after the data's end.
		if err != nil || ts.Before(earliest.Add(7*24*time.Hour)) || ts.After(end) {
			t.Errorf("%s: event %s at %q is outside the accepted range", shop, id, at)
		}
	}
	for _, s := range p.Shops {
		c, ok := d.Truth.Customer(appID, s.Domain)
		if !ok {
			t.Fatalf("%s is not a customer of %s", s.Domain, appID)
		}
		for _, b := range s.Browser {
			check(s.Domain, b.EventID, b.OccurredAt)
			if b.AcquisitionID != s.AcquisitionID || b.FirstTouch.LandingURL == "" {
				t.Errorf("%s: page view %+v", s.Domain, b)
			}
			campaigns[b.FirstTouch.UTMCampaign] = true
			for typ, v := range map[string]string{"gclid": b.FirstTouch.Gclid, "gbraid": b.FirstTouch.Gbraid, "wbraid": b.FirstTouch.Wbraid} {
				if v != "" {
					clicks[typ] = true
				}
			}
		}
		inst := s.Server[0]
		if inst.Name != "install" || inst.AcquisitionID != s.AcquisitionID || inst.OccurredAt != stamp(c.Installs[len(c.Installs)-1].From) {
			t.Errorf("%s: first server event %+v, want the latest install with the acquisition", s.Domain, inst)
		}
		if first, _ := time.Parse(time.RFC3339, s.Browser[0].OccurredAt); !first.Before(c.Installs[len(c.Installs)-1].From) {
			t.Errorf("%s: the visit at %s is not before the install", s.Domain, s.Browser[0].OccurredAt)
		}
		for _, e := range s.Server {
			check(s.Domain, e.EventID, e.OccurredAt)
			names[e.Name]++
			if e.CustomerRef != s.Domain || e.TeamSlug != "demo" || e.PublicKey != "tracker_pk_x" {
				t.Errorf("%s: server event %+v", s.Domain, e)
			}
			if (e.Name == "paid") != (e.Currency != "") || (e.Name == "paid") != (len(e.AmountCents) > 0) {
				t.Errorf("%s: %s with amount %s %q", s.Domain, e.Name, e.AmountCents, e.Currency)
			}
		}
	}
	// utm_campaign groups: four campaigns and the visits without one.
	if len(campaigns) < 5 || !campaigns[""] {
		t.Errorf("campaigns %v: want at least four and the visits without one", campaigns)
	}
	if len(clicks) != 3 {
		t.Errorf("click-ID types %v: want gclid, gbraid and wbraid", clicks)
	}
	for _, n := range []string{"install", "trial_started", "trial_converted", "paid"} {
		if names[n] == 0 {
			t.Errorf("no %s event among %v", n, names)
		}
	}
	// The largest batch the seed posts fits the edge's 64 KB.
	var batch []json.RawMessage
	for _, s := range p.Shops {
		for _, b := range s.Browser {
			if len(batch) < collectBatch {
				raw, _ := json.Marshal(b)
				batch = append(batch, raw)
			}
		}
	}
	if body, _ := json.Marshal(schemas.CollectRequest{Key: "tracker_pk_x", Batch: batch}); len(body) > 64<<10 {
		t.Errorf("a batch of %d events is %d bytes, over the edge's 64 KB", collectBatch, len(body))
	}
}

// TestTrackingPlanOneShop pins what the seed sends for one shop, so a change to the plan is seen.
func TestTrackingPlanOneShop(t *testing.T) {
	c := &partnerfake.Customer{ShopDomain: "quiet-tea.myshopify.com",
		Installs: []partnerfake.Span{{From: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)},
			{From: time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)}},
		Subscriptions: []partnerfake.Subscription{{
			Amount: partnerfake.Money{Minor: 1999, Currency: "EUR"}, TrialDays: 14,
			ActivatedAt: time.Date(2026, 10, 1, 12, 5, 0, 0, time.UTC), TrialEndsAt: time.Date(2026, 10, 15, 12, 5, 0, 0, time.UTC),
			Periods: []partnerfake.PaidPeriod{{From: time.Date(2026, 10, 15, 12, 5, 0, 0, time.UTC), BilledAt: time.Date(2026, 10, 16, 3, 0, 0, 0, time.UTC),
				TransactionID: "gid://partners/AppSubscriptionSale/7", Gross: partnerfake.Money{Minor: 1999, Currency: "EUR"}}},
		}},
	}
	s := planShop(c, 1, time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC), digest("revtrack demo shop", c.ShopDomain), "demo", "tracker_pk_x", demoPageOrigin)
	var got []string
	for _, e := range s.Server {
		got = append(got, e.Name+" "+e.OccurredAt+" "+e.AcquisitionID+" "+string(e.AmountCents)+" "+e.Currency)
	}
	want := []string{
		"install 2026-10-01T12:00:00Z " + s.AcquisitionID + "  ",
		"trial_started 2026-10-01T12:05:00Z   ",
		"trial_converted 2026-10-15T12:05:00Z   ",
		"paid 2026-10-16T03:00:00Z  1999 EUR",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("server events\n got %q\nwant %q", got, want)
	}
	if s.AcquisitionID != uuidOf(digest("revtrack demo acquisition", c.ShopDomain)) || len(s.AcquisitionID) != 36 {
		t.Errorf("acquisition ID %q", s.AcquisitionID)
	}
	if len(s.Browser) != 2 || s.Browser[0].Path != "/" || s.Browser[1].Path != "/pricing" || s.Browser[0].FirstTouch != s.Browser[1].FirstTouch {
		t.Errorf("page views %+v", s.Browser)
	}
}
