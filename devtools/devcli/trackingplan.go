package devcli

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/revtrack/revtrack/devtools/partnerfake"
	"github.com/revtrack/revtrack/schemas"
)

// The demo's tracked visits: what `revtrack-dev seed-tracking` sends through the edge so that the
// demo workspace's attribution (docs/METRICS.md) has first touches to join to the fake partner
// data's customers. Everything is derived from the shop domain, so every run plans the same
// acquisitions and event IDs and a second `make run` counts nothing twice (the edge answers a
// repeated server event ID as a duplicate; the sessionizer drops repeated browser event IDs).
const (
	// trackingWindow is how long before the data's end the demo source "has been collecting": only
	// customers whose latest install started in it were seen by tracker.js. Everything the seed
	// sends is then at most trackingWindow + maxTouchLead old, inside the 172 days the edge accepts
	// (docs/TRACKING.md, "Event times"), with a week to spare for a `make run` days after the data's
	// end. Older customers stay unattributed, which the attribution's coverage explains.
	trackingWindow = 160 * 24 * time.Hour
	// maxTouchLead is the longest a tracked visitor browses before installing.
	maxTouchLead = 3 * 24 * time.Hour
	// trackedPercent of the eligible customers' shops have a tracked first touch; the rest never
	// reached the install page through it (blocked script, direct install from the app store).
	trackedPercent = 50
)

// demoChannel is one acquisition channel the demo's visitors arrive from: the landing page's query
// string as tracker.js would read it, and the page they came from.
type demoChannel struct {
	Name     string
	Query    url.Values
	Referrer string
}

// demoChannels covers every first-touch dimension of the attribution: utm_source/medium/campaign,
// tracker_ref, each click-ID type (gclid, gbraid, wbraid, none) and visits with no campaign at all.
// share is the percentage of tracked shops each gets.
var demoChannels = []struct {
	demoChannel
	share int
	click string // the click-ID parameter the visit carries, if any
}{
	{demoChannel{Name: "google-search", Query: url.Values{"utm_source": {"google"}, "utm_medium": {"cpc"},
		"utm_campaign": {"upsell-search"}, "utm_term": {"upsell app"}}, Referrer: "https://www.google.com/"}, 30, "gclid"},
	{demoChannel{Name: "newsletter", Query: url.Values{"utm_source": {"newsletter"}, "utm_medium": {"email"},
		"utm_campaign": {"merchant-newsletter"}}}, 15, ""},
	{demoChannel{Name: "partner", Query: url.Values{"tracker_ref": {"northwind-agency"}},
		Referrer: "https://northwind-agency.example/blog/best-upsell-apps"}, 15, ""},
	{demoChannel{Name: "ios-web", Query: url.Values{"utm_source": {"google"}, "utm_medium": {"cpc"},
		"utm_campaign": {"upsell-ios"}}, Referrer: "https://www.google.com/"}, 8, "wbraid"},
	{demoChannel{Name: "ios-app", Query: url.Values{"utm_source": {"google"}, "utm_medium": {"cpc"},
		"utm_campaign": {"upsell-ios"}}}, 7, "gbraid"},
	{demoChannel{Name: "paid-social", Query: url.Values{"utm_source": {"facebook"}, "utm_medium": {"paid_social"},
		"utm_campaign": {"upsell-retargeting"}}, Referrer: "https://l.facebook.com/"}, 10, ""},
	{demoChannel{Name: "organic", Query: url.Values{}, Referrer: "https://www.bing.com/"}, 15, ""},
}

// trackedShop is what the seed sends for one customer's shop: its visitor's page views and the
// verified server events of its latest install.
type trackedShop struct {
	Domain, Channel, AcquisitionID string
	Browser                        []schemas.BrowserEventRequest
	Server                         []schemas.ServerEventRequest
}

// trackingPlan is the seed of one run.
type trackingPlan struct {
	// Customers counts the app's customers in the data; Eligible those whose latest install is in
	// the tracking window; Shops the tracked ones.
	Customers, Eligible int
	Shops               []trackedShop
}

// digest is the stable hash everything of a shop is derived from.
func digest(parts ...string) [32]byte {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	var d [32]byte
	copy(d[:], h.Sum(nil))
	return d
}

// uuidOf formats a digest as a version-8 (custom) UUID, the shape tracker.js's IDs have.
func uuidOf(d [32]byte) string {
	b := d[:16]
	b[6] = b[6]&0x0f | 0x80
	b[8] = b[8]&0x3f | 0x80
	x := hex.EncodeToString(b)
	return x[:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:]
}

// planTracking plans the demo's tracked shops among the customers of appID (the platform app the
// demo source belongs to) in d, as the page at origin would have recorded them.
func planTracking(d *partnerfake.Dataset, appID, team, publicKey, origin string) trackingPlan {
	var p trackingPlan
	since := d.Truth.End.Add(-trackingWindow)
	for i := range d.Truth.Customers {
		c := &d.Truth.Customers[i]
		if c.AppID != appID {
			continue
		}
		p.Customers++
		inst := len(c.Installs) - 1
		if inst < 0 || c.Installs[inst].From.Before(since) {
			continue
		}
		p.Eligible++
		h := digest("revtrack demo shop", c.ShopDomain)
		if binary.BigEndian.Uint64(h[:8])%100 >= trackedPercent {
			continue
		}
		p.Shops = append(p.Shops, planShop(c, inst, d.Truth.End, h, team, publicKey, origin))
	}
	return p
}

// planShop plans one tracked shop: two page views (the landing page with the channel's first touch,
// then the pricing page) shortly before the install, and the server events its partner data
// supports. Only the install carries the acquisition ID, as an install callback would; the later
// events name only the shop and are attributed through its link (docs/ARCHITECTURE.md, identity
// join).
func planShop(c *partnerfake.Customer, inst int, end time.Time, h [32]byte, team, publicKey, origin string) trackedShop {
	pick := int(binary.BigEndian.Uint64(h[8:16]) % 100)
	ch := demoChannels[len(demoChannels)-1]
	for _, x := range demoChannels {
		if pick < x.share {
			ch = x
			break
		}
		pick -= x.share
	}
	q := url.Values{}
	for k, v := range ch.Query {
		q[k] = v
	}
	if ch.click != "" {
		q.Set(ch.click, "demo-"+hex.EncodeToString(h[16:24]))
	}
	landing := origin + "/"
	if len(q) > 0 {
		landing += "?" + q.Encode()
	}
	ft := schemas.FirstTouch{TrackerRef: q.Get("tracker_ref"), UTMSource: q.Get("utm_source"), UTMMedium: q.Get("utm_medium"),
		UTMCampaign: q.Get("utm_campaign"), UTMTerm: q.Get("utm_term"), Gclid: q.Get("gclid"), Gbraid: q.Get("gbraid"),
		Wbraid: q.Get("wbraid"), LandingURL: landing, Referrer: ch.Referrer}

	install := c.Installs[inst]
	lead := time.Duration(binary.BigEndian.Uint64(h[24:])%uint64(maxTouchLead/time.Minute-10))*time.Minute + 10*time.Minute
	seen := install.From.Add(-lead)
	acq := uuidOf(digest("revtrack demo acquisition", c.ShopDomain))
	session := uuidOf(digest("revtrack demo session", c.ShopDomain))
	id := func(what string) string { return uuidOf(digest("revtrack demo event", c.ShopDomain, what)) }
	s := trackedShop{Domain: c.ShopDomain, Channel: ch.Name, AcquisitionID: acq}
	s.Browser = []schemas.BrowserEventRequest{
		{EventID: id("landing"), Name: "page_view", OccurredAt: stamp(seen), AcquisitionID: acq, SessionID: session,
			URL: landing, Path: "/", Title: "Upsell Wizard", Referrer: ch.Referrer, FirstTouch: ft},
		{EventID: id("pricing"), Name: "page_view", OccurredAt: stamp(seen.Add(2 * time.Minute)), AcquisitionID: acq, SessionID: session,
			URL: origin + "/pricing", Path: "/pricing", Title: "Upsell Wizard pricing", Referrer: landing, FirstTouch: ft},
	}
	// The install's ordinal is in its event ID: a reinstall is a new install (docs/TRACKING.md, section 4).
	n := strconv.Itoa(inst)
	server := func(name string, at time.Time, acqID string, amount *partnerfake.Money) schemas.ServerEventRequest {
		e := schemas.ServerEventRequest{TeamSlug: team, PublicKey: publicKey, EventID: id(name + "/" + n), AcquisitionID: acqID,
			Name: name, CustomerRef: c.ShopDomain, OccurredAt: stamp(at)}
		if amount != nil {
			e.AmountCents, e.Currency = []byte(strconv.FormatInt(amount.Minor, 10)), amount.Currency
		}
		return e
	}
	s.Server = append(s.Server, server("install", install.From, acq, nil))
	s.Server = append(s.Server, lifecycle(c, install, end, server)...)
	return s
}

// lifecycle is the trial and payment events of one install period: trial_started when a
// subscription with a trial was activated, trial_converted when that trial ended with the
// subscription still in effect and priced, paid at the period's first billed sale. Each at most
// once, at the time the partner data says it happened.
func lifecycle(c *partnerfake.Customer, install partnerfake.Span, end time.Time,
	server func(string, time.Time, string, *partnerfake.Money) schemas.ServerEventRequest) []schemas.ServerEventRequest {
	var out []schemas.ServerEventRequest
	trial, paid := false, false
	for i := range c.Subscriptions {
		sub := &c.Subscriptions[i]
		if sub.ActivatedAt.IsZero() || !install.Contains(sub.ActivatedAt) {
			continue
		}
		if !trial && sub.TrialDays > 0 {
			trial = true
			out = append(out, server("trial_started", sub.ActivatedAt, "", nil))
			if sub.Amount.Minor > 0 && !sub.TrialEndsAt.After(end) && (sub.EndedAt.IsZero() || sub.EndedAt.After(sub.TrialEndsAt)) {
				out = append(out, server("trial_converted", sub.TrialEndsAt, "", nil))
			}
		}
		for _, per := range sub.Periods {
			if !paid && per.TransactionID != "" && per.Gross.Minor > 0 {
				paid = true
				g := per.Gross
				out = append(out, server("paid", per.BilledAt, "", &g))
			}
		}
	}
	return out
}

// stamp formats a time as the edge reads it (RFC 3339, UTC).
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// channelCounts counts the plan's shops per channel, for the command's summary.
func (p trackingPlan) channelCounts() map[string]int {
	n := map[string]int{}
	for _, s := range p.Shops {
		n[s.Channel]++
	}
	return n
}

func (p trackingPlan) String() string {
	return fmt.Sprintf("%d of %d customers tracked (%d eligible)", len(p.Shops), p.Customers, p.Eligible)
}
