package main

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	"github.com/revtrack/revtrack/schemas"
)

// The tracking part of the data set. partnerfake's data set is platform data only, and attribution
// by campaign (docs/METRICS.md 10) joins the customers to their shops' first touches: without
// browser history it would measure an empty join. So the load adds, deterministically from the
// generated customers, what a tracking source per app would have collected: the browser events the
// edge puts on revtrack.browser-events.v1 and the verified server events it puts on
// revtrack.server-events.v1, which the real consumers (sessionize, land-server-events,
// identity-join) land in browser_events, acquisitions, acquisition_links, shop_attribution and
// funnel_events (tracking_load.go).
const (
	// trackingVersion names what planTracking generates; the marker records it, so that a -reuse
	// run adds the tracking part to a data set loaded before it (or by another version).
	trackingVersion = 1
	// trackingDays is how far back from the data set's end the tracking sources collected: inside
	// the edge's 172 days (schemas.MaxEventAge) and the 180-day retention of raw tracking tables
	// (docs/METRICS.md 10.4), so nothing generated is refused or dropped.
	trackingDays = 165
	// trackedPercent of the customers have a browser linked to their shop; trackingCampaigns
	// campaigns share the first touches; unconvertedPerCustomer browsers per customer never
	// install (most browsers do not).
	trackedPercent         = 40
	trackingCampaigns      = 20
	unconvertedPerCustomer = 3
)

// trackingPlan is the tracking part of the data set: the messages to produce and what the tables
// must hold afterwards.
type trackingPlan struct {
	browser []schemas.BrowserEvent
	server  []schemas.ServerEvent
	facts   trackingFacts
}

// trackingFacts are the tracking part's counts; the marker keeps them.
type trackingFacts struct {
	Version      int `json:"version"`
	Browsers     int `json:"browsers"`     // acquisitions (one page view each)
	ServerEvents int `json:"serverEvents"` // install, identified, trial_started, trial_converted
	Links        int `json:"links"`        // server events naming both an acquisition and a shop
	Tracked      int `json:"tracked"`      // customers whose shop is linked to a browser
	// Credited: of them, those installed inside the window, first seen 1 to 71 hours before the
	// install (the rest installed before tracking began: their browser is linked by `identified`
	// and is not credited, docs/METRICS.md 10.2).
	Credited int    `json:"credited"`
	From     string `json:"from"` // first day of the window
}

// sameAs reports whether two fact sets describe the same generated tracking data.
func (f trackingFacts) sameAs(g trackingFacts) bool { return f == g }

// hash64 is a stable hash of the parts (FNV-1a), the generator's only source of variation.
func hash64(parts ...string) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		_, _ = h.Write([]byte(p))
		_, _ = h.Write([]byte{0x1f})
	}
	return h.Sum64()
}

// channel is a campaign's source and medium; click marks a Google ad click (gclid), ref a partner's
// tracker_ref.
type channel struct {
	source, medium string
	click, ref     bool
}

var trackingChannels = []channel{{"google", "cpc", true, false}, {"facebook", "paid_social", false, false},
	{"newsletter", "email", false, false}, {"partner", "referral", false, true}}

// touchOf is a first touch chosen by n: one in ten organic (no campaign), the rest spread over the
// campaigns, each with its channel's source, medium and click ID or tracker_ref.
func touchOf(n uint64) schemas.FirstTouch {
	if n%10 == 0 {
		return schemas.FirstTouch{LandingURL: "https://bench-app.example/"}
	}
	c := int(n/10) % trackingCampaigns
	ch := trackingChannels[c%len(trackingChannels)]
	name := fmt.Sprintf("bench-campaign-%02d", c+1)
	t := schemas.FirstTouch{UTMSource: ch.source, UTMMedium: ch.medium, UTMCampaign: name,
		LandingURL: fmt.Sprintf("https://bench-app.example/lp/%02d?utm_source=%s&utm_campaign=%s", c+1, ch.source, name)}
	if ch.click {
		t.Gclid = "bench-gclid-" + strconv.FormatUint(n, 36)
	}
	if ch.ref {
		t.TrackerRef = fmt.Sprintf("bench-partner-%d", c%5)
	}
	return t
}

// planTracking generates the tracking part for the data set ending at end: workspace ws, one
// tracking source per app (sources, by revtrack app ID). Every browser has one page view; the
// counts do not depend on the IDs passed.
func planTracking(ds *dataset, ws string, sources map[string]string) trackingPlan {
	end, _ := time.Parse(time.DateOnly, ds.facts.End)
	from := end.AddDate(0, 0, -trackingDays)
	window := end.Sub(from)
	p := trackingPlan{facts: trackingFacts{Version: trackingVersion, From: from.Format(time.DateOnly)}}
	pageView := func(app, acq string, at time.Time, t schemas.FirstTouch) {
		p.browser = append(p.browser, schemas.BrowserEvent{EventID: "pv-" + acq, SourceID: sources[app], WorkspaceID: ws, AppID: app,
			AcquisitionID: acq, Name: "page_view", OccurredAt: at, ReceivedAt: at.Add(time.Second), URL: t.LandingURL,
			Path: landingPath(t.LandingURL), FirstTouch: t})
	}
	serverEvent := func(app, id, name, acq, domain string, at time.Time) {
		p.server = append(p.server, schemas.ServerEvent{EventID: id, SourceID: sources[app], WorkspaceID: ws, AppID: app,
			AcquisitionID: acq, Name: name, CustomerRef: domain, OccurredAt: at, ReceivedAt: at.Add(2 * time.Second)})
		if acq != "" && domain != "" {
			p.facts.Links++
		}
	}
	for _, c := range ds.d.Truth.Customers {
		app := appID(ds.d.Apps[c.AppIndex])
		h := hash64(app, c.ShopID, strconv.Itoa(c.Index))
		for k := range unconvertedPerCustomer {
			acq := fmt.Sprintf("bq-%d-u%d", c.Index, k)
			n := hash64(acq)
			pageView(app, acq, from.Add(time.Duration(n%uint64(window/time.Minute))*time.Minute), touchOf(n>>8))
		}
		if h%100 >= trackedPercent || len(c.Installs) == 0 {
			continue
		}
		p.facts.Tracked++
		acq := fmt.Sprintf("bq-%d-c", c.Index)
		domain := strings.ToLower(c.ShopDomain)
		touch := touchOf(h >> 8)
		installed := c.Installs[0].From
		switch seen := installed.Add(-time.Duration(1+(h>>24)%71) * time.Hour); {
		case !seen.Before(from) && installed.Before(end):
			// Installed inside the window: first seen before the install, which the install event
			// (with its acquisition and shop) links: the shop's first touch, credited.
			p.facts.Credited++
			pageView(app, acq, seen, touch)
			serverEvent(app, "se-install-"+acq, "install", acq, domain, installed)
		default:
			// Installed before tracking began: a later visit, linked to the existing shop by
			// `identified`; not credited (docs/METRICS.md 10.2), still joined.
			seen = from.Add(time.Duration((h>>24)%uint64(window/time.Minute-60)) * time.Minute)
			pageView(app, acq, seen, touch)
			serverEvent(app, "se-identified-"+acq, "identified", acq, domain, seen.Add(30*time.Minute))
		}
		// The first trial inside the window, as the publisher's server reports it: named by shop
		// only, so the identity join resolves it through the shop's first link.
		for _, s := range c.Subscriptions {
			if s.TrialDays <= 0 || s.ActivatedAt.IsZero() || s.ActivatedAt.Before(from) || !s.ActivatedAt.Before(end) {
				continue
			}
			serverEvent(app, "se-trial-"+acq, "trial_started", "", domain, s.ActivatedAt)
			if s.TrialEndsAt.Before(end) && (s.EndedAt.IsZero() || s.EndedAt.After(s.TrialEndsAt)) {
				serverEvent(app, "se-converted-"+acq, "trial_converted", "", domain, s.TrialEndsAt)
			}
			break
		}
	}
	p.facts.Browsers, p.facts.ServerEvents = len(p.browser), len(p.server)
	return p
}

// landingPath is the path of a landing URL, as tracker.js reports a page's path.
func landingPath(u string) string {
	rest, ok := strings.CutPrefix(u, "https://bench-app.example")
	if !ok {
		return "/"
	}
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		rest = rest[:i]
	}
	if rest == "" {
		return "/"
	}
	return rest
}
