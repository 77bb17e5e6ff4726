package reportingtest

import "time"

// Tracking rows, written as the tracking consumers write them: browser events (whose materialized
// views fill acquisitions and acquisition_clicks), acquisition links (whose view keeps each shop's
// first link in shop_attribution) and funnel events with the acquisition the identity join
// resolved (processors/identity.go).
const (
	insertBrowserEvents = `INSERT INTO browser_events (event_id, source_id, workspace_id, app_id, acquisition_id, session_id, name,
occurred_at, occurred_ms, received_at, url, path, first_tracker_ref, first_utm_source, first_utm_medium, first_utm_campaign,
first_gclid, first_gbraid, first_wbraid, first_landing_url)`
	insertLinks = `INSERT INTO acquisition_links (source_id, acquisition_id, workspace_id, app_id, shop_domain, first_event_id,
linked_at, version)`
	insertFunnel = `INSERT INTO funnel_events (workspace_id, source_id, app_id, event_id, name, occurred_at, occurred_ms,
acquisition_source_id, acquisition_id, acquisition_resolved_by, shop_domain, amount_cents, currency, version)`
)

// Touch is what a browser's events carry as its first touch.
type Touch struct {
	TrackerRef, UTMSource, UTMMedium, UTMCampaign string
	Gclid, Gbraid, Wbraid, LandingURL             string
}

// AddPageView writes a page view of acquisition acq captured by source (of app) at at.
func (f *Fixture) AddPageView(app, source, acq, id, at string, t Touch) {
	ts := At(at)
	f.add(insertBrowserEvents, id, source, f.WorkspaceID, app, acq, "s-"+acq, "page_view", ts, uint16(0), ts.Add(time.Second),
		t.LandingURL, "/", t.TrackerRef, t.UTMSource, t.UTMMedium, t.UTMCampaign, t.Gclid, t.Gbraid, t.Wbraid, t.LandingURL)
}

// AddLink writes the link of acquisition acq (of source, app) to a shop domain made by event at at.
func (f *Fixture) AddLink(app, source, acq, domain, event, at string) {
	f.add(insertLinks, source, acq, f.WorkspaceID, app, domain, event, At(at), f.next())
}

// FunnelEvent is a funnel_events row: a verified server event with its resolved acquisition
// (Resolved "event", "shop_link" or "" for none).
type FunnelEvent struct {
	App, Source, ID, Name, At string
	AcqSource, Acq, Resolved  string
	Domain                    string
}

// AddFunnelEvent writes a funnel event (a new version each call: a later write wins).
func (f *Fixture) AddFunnelEvent(e FunnelEvent) {
	f.add(insertFunnel, f.WorkspaceID, e.Source, e.App, e.ID, e.Name, At(e.At), uint16(0), e.AcqSource, e.Acq, e.Resolved, e.Domain,
		(*int64)(nil), "", f.next())
}

// ExampleAttribution is docs/METRICS.md 10.5: two apps, app-1 with tracking sources src-1a and src-1b
// (collecting since 2026-01-10), app-2 with src-2 (since 2026-03-04); range 2026-03-02 … 2026-03-31.
// Every subscription is paid once inside its 45-day evidence window, at 15 % platform fee.
//
//	oscar    app-1, installed 02-01, never linked (organic)                     USD 2,900, net 2,381 → unattributed
//	alpha    acq-alpha 03-03 google/cpc/spring, gclid, /pricing; installs 03-03   USD 4,900, net 4,023 → spring
//	bravo    acq-bravo 03-05 google/spring, gbraid, landing "/"                   USD 1,900, net 1,560 → spring
//	charlie  acq-charlie 03-07 google/brand, wbraid, landing without a path ("/") usage 500 in the range, net 410 → brand
//	delta    acq-delta 02-20 newsletter/email/spring, /blog/post                  EUR 3,900, net 3,202 → spring
//	echo     two sources: acq-e1 (src-1a, summer) linked 11:00, acq-e2 (src-1b, brand, seen earlier) linked 12:00:
//	         the first link wins                                                  USD 2,900, net 2,381 → summer
//	foxtrot  acq-fox seen 03-02 08:00, installed 09:00 and paid 10:00; linked (identified) only on 03-20
//	                                                                              USD 4,900, net 4,023 → spring
//	golf     installed 02-15; a browser seen 03-12 was linked to the existing shop (identified): not credited
//	                                                                              USD 900, net 739 → unattributed
//	hotel    acq-hotel 03-10 spring, excluded shop: in no row (its browser still counts as an acquisition)
//	india    india.myshopify.com in both apps: app-1 via acq-i1 (spring), app-2 via acq-i2 (summer)
//	                                                                              USD 1,900 + 2,900, net 1,560 + 2,381
//	juliet   install event with its own acq-juliet, whose browser history has not landed
//	                                                                              USD 1,900, net 1,560 → no_browser_history
//	kilo     app-1, installed 2025-12-01 (before tracking), never linked          USD 1,900, no sale in the range → before_tracking
//	lima     app-2, installed 2026-01-05 (before app-2's tracking), no charge     → before_tracking
//	zulu     a trial_started naming an unlinked shop, no customer row            → unattributed (trials started)
//
// JulietLateHistory writes juliet's browser history (03-15 09:00, summer).
func ExampleAttribution(f *Fixture) map[string]Customer {
	c := map[string]Customer{}
	const app1, app2, s1a, s1b, s2 = "app-1", "app-2", "src-1a", "src-1b", "src-2"
	paying := func(app, name, shop, domain, installed string, amount int64, cur, paid string) {
		c[name] = f.install(app, shop, domain, name, installed)
		charge := "sub-" + name + "-" + app
		f.subscription(app, shop, charge, "Plan", amount, cur, "every_30_days", installed)
		f.sale(app, "tx-"+name+"-"+app, "subscription", shop, charge, paid, cur, amount, amount*29/1000, "every_30_days")
	}
	fe := func(app, source, id, name, at, acq, resolved, domain string) {
		acqSource := source
		if acq == "" {
			acqSource = ""
		}
		f.AddFunnelEvent(FunnelEvent{App: app, Source: source, ID: id, Name: name, At: at, AcqSource: acqSource, Acq: acq,
			Resolved: resolved, Domain: domain})
	}

	f.AddPageView(app1, s1b, "acq-early", "pv-early", "2026-01-10T08:00:00Z", Touch{}) // app-1's first browser event

	paying(app1, "oscar", Shop("9001"), "oscar.myshopify.com", "2026-02-01T09:00:00Z", 2900, "USD", "2026-03-05T10:00:00Z")

	google := func(campaign string) Touch { return Touch{UTMSource: "google", UTMCampaign: campaign} }
	alpha := google("spring")
	alpha.UTMMedium, alpha.TrackerRef, alpha.Gclid, alpha.LandingURL = "cpc", "partner-a", "g-1", "https://app.example/pricing?plan=pro"
	f.AddPageView(app1, s1a, "acq-alpha", "pv-alpha", "2026-03-03T10:00:00Z", alpha)
	paying(app1, "alpha", Shop("9002"), "alpha.myshopify.com", "2026-03-03T10:30:00Z", 4900, "USD", "2026-03-17T10:00:00Z")
	f.AddLink(app1, s1a, "acq-alpha", "alpha.myshopify.com", "fe-alpha-install", "2026-03-03T10:30:00Z")
	fe(app1, s1a, "fe-alpha-install", "install", "2026-03-03T10:30:00Z", "acq-alpha", "event", "alpha.myshopify.com")
	fe(app1, s1a, "fe-alpha-trial", "trial_started", "2026-03-03T10:31:00Z", "acq-alpha", "event", "")
	fe(app1, s1a, "fe-alpha-conv", "trial_converted", "2026-03-17T10:00:00Z", "acq-alpha", "event", "")

	bravo := google("spring")
	bravo.Gbraid, bravo.LandingURL = "gb-1", "https://app.example/"
	f.AddPageView(app1, s1a, "acq-bravo", "pv-bravo", "2026-03-05T08:00:00Z", bravo)
	paying(app1, "bravo", Shop("9003"), "bravo.myshopify.com", "2026-03-05T09:00:00Z", 1900, "USD", "2026-03-06T10:00:00Z")
	f.AddLink(app1, s1a, "acq-bravo", "bravo.myshopify.com", "fe-bravo-install", "2026-03-05T09:00:00Z")
	fe(app1, s1a, "fe-bravo-install", "install", "2026-03-05T09:00:00Z", "acq-bravo", "event", "bravo.myshopify.com")

	charlie := google("brand")
	charlie.Wbraid, charlie.LandingURL = "wb-1", "https://app.example"
	f.AddPageView(app1, s1a, "acq-charlie", "pv-charlie", "2026-03-07T08:00:00Z", charlie)
	c["charlie"] = f.install(app1, Shop("9004"), "charlie.myshopify.com", "charlie", "2026-03-07T09:00:00Z")
	f.sale(app1, "tx-charlie-usage", "usage", Shop("9004"), "", "2026-03-20T10:00:00Z", "USD", 500, 15, "")
	f.AddLink(app1, s1a, "acq-charlie", "charlie.myshopify.com", "fe-charlie-install", "2026-03-07T09:00:00Z")
	fe(app1, s1a, "fe-charlie-install", "install", "2026-03-07T09:00:00Z", "acq-charlie", "event", "charlie.myshopify.com")

	f.AddPageView(app1, s1a, "acq-delta", "pv-delta", "2026-02-20T08:00:00Z", Touch{UTMSource: "newsletter", UTMMedium: "email",
		UTMCampaign: "spring", LandingURL: "https://app.example/blog/post#top"})
	paying(app1, "delta", Shop("9005"), "delta.myshopify.com", "2026-02-20T09:00:00Z", 3900, "EUR", "2026-03-10T10:00:00Z")
	f.AddLink(app1, s1a, "acq-delta", "delta.myshopify.com", "fe-delta-install", "2026-02-20T09:00:00Z")
	fe(app1, s1a, "fe-delta-install", "install", "2026-02-20T09:00:00Z", "acq-delta", "event", "delta.myshopify.com")

	f.AddPageView(app1, s1a, "acq-e1", "pv-e1", "2026-03-08T09:00:00Z", Touch{UTMSource: "facebook", UTMCampaign: "summer"})
	f.AddPageView(app1, s1b, "acq-e2", "pv-e2", "2026-03-08T08:00:00Z", Touch{UTMSource: "bing", UTMCampaign: "brand"})
	paying(app1, "echo", Shop("9006"), "echo.myshopify.com", "2026-03-08T10:59:00Z", 2900, "USD", "2026-03-09T10:00:00Z")
	f.AddLink(app1, s1b, "acq-e2", "echo.myshopify.com", "fe-echo-identified", "2026-03-08T12:00:00Z")
	f.AddLink(app1, s1a, "acq-e1", "echo.myshopify.com", "fe-echo-install", "2026-03-08T11:00:00Z")
	fe(app1, s1a, "fe-echo-install", "install", "2026-03-08T11:00:00Z", "acq-e1", "event", "echo.myshopify.com")
	fe(app1, s1b, "fe-echo-identified", "identified", "2026-03-08T12:00:00Z", "acq-e2", "event", "echo.myshopify.com")

	f.AddPageView(app1, s1a, "acq-fox", "pv-fox", "2026-03-02T08:00:00Z", google("spring"))
	paying(app1, "foxtrot", Shop("9007"), "foxtrot.myshopify.com", "2026-03-02T09:00:00Z", 4900, "USD", "2026-03-02T10:00:00Z")
	// The install named only the shop (unresolved when written); the identified link of 03-20
	// resolved it through the shop's first link, as the identity join re-resolves.
	fe(app1, s1a, "fe-fox-install", "install", "2026-03-02T09:00:00Z", "", "", "foxtrot.myshopify.com")
	f.AddLink(app1, s1a, "acq-fox", "foxtrot.myshopify.com", "fe-fox-identified", "2026-03-20T10:00:00Z")
	fe(app1, s1a, "fe-fox-identified", "identified", "2026-03-20T10:00:00Z", "acq-fox", "event", "foxtrot.myshopify.com")
	fe(app1, s1a, "fe-fox-install", "install", "2026-03-02T09:00:00Z", "acq-fox", "shop_link", "foxtrot.myshopify.com")

	paying(app1, "golf", Shop("9008"), "golf.myshopify.com", "2026-02-15T09:00:00Z", 900, "USD", "2026-03-15T10:00:00Z")
	f.AddPageView(app1, s1a, "acq-golf", "pv-golf", "2026-03-12T08:00:00Z", Touch{UTMCampaign: "summer"})
	f.AddLink(app1, s1a, "acq-golf", "golf.myshopify.com", "fe-golf-identified", "2026-03-12T08:05:00Z")
	fe(app1, s1a, "fe-golf-identified", "identified", "2026-03-12T08:05:00Z", "acq-golf", "event", "golf.myshopify.com")

	f.AddPageView(app1, s1a, "acq-hotel", "pv-hotel", "2026-03-10T08:00:00Z", Touch{UTMCampaign: "spring"})
	paying(app1, "hotel", Shop("9009"), "hotel.myshopify.com", "2026-03-10T09:00:00Z", 4900, "USD", "2026-03-11T10:00:00Z")
	f.AddLink(app1, s1a, "acq-hotel", "hotel.myshopify.com", "fe-hotel-install", "2026-03-10T09:00:00Z")
	fe(app1, s1a, "fe-hotel-install", "install", "2026-03-10T09:00:00Z", "acq-hotel", "event", "hotel.myshopify.com")
	f.Exclude("hotel.myshopify.com", app1, true)

	f.AddPageView(app1, s1a, "acq-i1", "pv-i1", "2026-03-04T08:00:00Z", Touch{UTMCampaign: "spring"})
	f.AddPageView(app2, s2, "acq-i2", "pv-i2", "2026-03-04T08:00:00Z", Touch{UTMCampaign: "summer"})
	for _, a := range []struct{ app, source, acq, name string }{{app1, s1a, "acq-i1", "india-1"}, {app2, s2, "acq-i2", "india-2"}} {
		amount := map[string]int64{app1: 1900, app2: 2900}[a.app]
		paying(a.app, a.name, Shop("9010"), "India.myshopify.com", "2026-03-04T09:00:00Z", amount, "USD", "2026-03-05T10:00:00Z")
		f.AddLink(a.app, a.source, a.acq, "india.myshopify.com", "fe-"+a.name+"-install", "2026-03-04T09:00:00Z")
		fe(a.app, a.source, "fe-"+a.name+"-install", "install", "2026-03-04T09:00:00Z", a.acq, "event", "india.myshopify.com")
	}
	fe(app2, s2, "fe-india-2-trial", "trial_started", "2026-03-04T09:01:00Z", "acq-i2", "event", "")

	paying(app1, "juliet", Shop("9011"), "juliet.myshopify.com", "2026-03-15T10:00:00Z", 1900, "USD", "2026-03-16T10:00:00Z")
	f.AddLink(app1, s1a, "acq-juliet", "juliet.myshopify.com", "fe-juliet-install", "2026-03-15T10:00:00Z")
	fe(app1, s1a, "fe-juliet-install", "install", "2026-03-15T10:00:00Z", "acq-juliet", "event", "juliet.myshopify.com")

	paying(app1, "kilo", Shop("9012"), "kilo.myshopify.com", "2025-12-01T09:00:00Z", 1900, "USD", "2026-03-01T10:00:00Z")
	c["lima"] = f.install(app2, Shop("9013"), "lima.myshopify.com", "lima", "2026-01-05T09:00:00Z")

	fe(app1, s1a, "fe-zulu-trial", "trial_started", "2026-03-18T10:00:00Z", "", "", "zulu.myshopify.com")

	f.Covered(app1, "2024-01-01T00:00:00Z", "2026-03-31T05:10:00Z")
	f.Covered(app2, "2024-01-01T00:00:00Z", "2026-03-31T05:10:00Z")
	return c
}

// JulietLateHistory writes the browser history of juliet's acquisition after its install was
// attributed: first seen 2026-03-15 09:00 with campaign summer.
func JulietLateHistory(f *Fixture) {
	f.AddPageView("app-1", "src-1a", "acq-juliet", "pv-juliet", "2026-03-15T09:00:00Z", Touch{UTMCampaign: "summer"})
}
