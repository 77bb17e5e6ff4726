package processors

import (
	"reflect"
	"testing"
	"time"

	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas"
)

// The identity-join consumer and the acquisitions view on the real Kafka and ClickHouse.

func (e env) produceServer(t *testing.T, evs ...schemas.ServerEvent) {
	t.Helper()
	for _, ev := range evs {
		e.produce(t, schemas.TopicServerEvents, ev.SourceID+":"+ev.AcquisitionID, mustJSON(t, ev))
	}
}

type funnelRecord struct {
	Name, AcqSource, Acq, By, Shop, Currency string
	Amount                                   *int64
}

// storedFunnel reads funnel_events as readers do (FINAL), by event ID.
func storedFunnel(t *testing.T, e env) map[string]funnelRecord {
	t.Helper()
	rows, err := e.ch.Query(testenv.Ctx(t), `SELECT event_id, toString(name), acquisition_source_id, acquisition_id,
toString(acquisition_resolved_by), shop_domain, currency, amount_cents FROM funnel_events FINAL`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]funnelRecord{}
	for rows.Next() {
		var id string
		var r funnelRecord
		if err := rows.Scan(&id, &r.Name, &r.AcqSource, &r.Acq, &r.By, &r.Shop, &r.Currency, &r.Amount); err != nil {
			t.Fatal(err)
		}
		out[id] = r
	}
	return out
}

// storedShopLinks reads shop_attribution merged, by shop domain.
func storedShopLinks(t *testing.T, e env) map[string]shopLink {
	t.Helper()
	rows, err := e.ch.Query(testenv.Ctx(t), `SELECT shop_domain, tupleElement(l, 1), tupleElement(l, 2), tupleElement(l, 3), tupleElement(l, 4)
FROM (SELECT shop_domain, argMinMerge(first_link) AS l FROM shop_attribution GROUP BY workspace_id, app_id, shop_domain)`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]shopLink{}
	for rows.Next() {
		var shop string
		var l shopLink
		if err := rows.Scan(&shop, &l.SourceID, &l.AcquisitionID, &l.EventID, &l.LinkedAt); err != nil {
			t.Fatal(err)
		}
		l.LinkedAt = l.LinkedAt.UTC()
		out[shop] = l
	}
	return out
}

func count(t *testing.T, e env, query string) uint64 {
	t.Helper()
	var n uint64
	if err := e.ch.QueryRow(testenv.Ctx(t), query).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func cents(v int64) *int64 { return &v }

// TestIdentityJoinLinksResolvesAndDeadLetters: an identified event links a browser to a shop, a paid
// event that names only the shop resolves through that link, a duplicate counts once, an event of
// an unlinked shop stays unresolved, and poison records are dead-lettered.
func TestIdentityJoinLinksResolvesAndDeadLetters(t *testing.T) {
	e := setup(t)
	identified := serverEvent("id-1", "identified", "acq-a", "shop-1.example", 0)
	paid := serverEvent("paid-1", "paid", "", "shop-1.example", time.Hour)
	paid.AmountCents, paid.Currency = cents(4900), "USD"
	install := serverEvent("inst-1", "install", "acq-b", "", 0)
	orphan := serverEvent("ref-1", "refunded", "", "shop-2.example", 2*time.Hour)
	orphan.AmountCents, orphan.Currency = cents(900), "EUR"
	e.produceServer(t, identified, paid, install, paid, orphan) // paid twice: a redelivery
	e.produce(t, schemas.TopicServerEvents, "src:", []byte(`{"eventId":`))
	tooOld := serverEvent("old", "paid", "", "shop-1.example", 0)
	tooOld.OccurredAt = time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC)
	e.produceServer(t, tooOld)

	stop := startService(t, e)
	defer stop()
	want := map[string]funnelRecord{
		"id-1":   {Name: "identified", AcqSource: "src", Acq: "acq-a", By: "event", Shop: "shop-1.example"},
		"paid-1": {Name: "paid", AcqSource: "src", Acq: "acq-a", By: "shop_link", Shop: "shop-1.example", Currency: "USD", Amount: cents(4900)},
		"inst-1": {Name: "install", AcqSource: "src", Acq: "acq-b", By: "event"},
		"ref-1":  {Name: "refunded", Shop: "shop-2.example", Currency: "EUR", Amount: cents(900)},
	}
	var got map[string]funnelRecord
	eventually(t, "four funnel rows, the paid one resolved through the shop", func() bool {
		got = storedFunnel(t, e)
		return len(got) == 4 && got["paid-1"].By == "shop_link"
	})
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("funnel rows\n got %+v\nwant %+v", got, want)
	}
	if n := count(t, e, "SELECT count() FROM funnel_events FINAL WHERE event_id = 'paid-1'"); n != 1 {
		t.Fatalf("the duplicate paid event has %d rows", n)
	}
	if n := count(t, e, "SELECT count() FROM acquisition_links FINAL WHERE acquisition_id = 'acq-a' AND shop_domain = 'shop-1.example' AND first_event_id = 'id-1'"); n != 1 {
		t.Fatal("acquisition link missing")
	}
	if l := storedShopLinks(t, e); len(l) != 1 || l["shop-1.example"] != (shopLink{SourceID: "src", AcquisitionID: "acq-a", EventID: "id-1", LinkedAt: i0}) {
		t.Fatalf("shop attribution %+v", l)
	}

	assertPoisonAndDrained(t, e, "identity-join")
}

// TestIdentityJoinFirstLinkWinsAndLateLinksResolve: a paid event that names a shop before any link
// exists is resolved when the shop is linked later; an earlier link that arrives last becomes the
// shop's first touch and moves the paid event; replaying a link changes nothing.
func TestIdentityJoinFirstLinkWinsAndLateLinksResolve(t *testing.T) {
	e := setup(t)
	stop := startService(t, e)
	defer stop()

	paid := serverEvent("paid-2", "paid", "", "shop-3.example", 3*time.Hour)
	paid.AmountCents, paid.Currency = cents(1500), "USD"
	e.produceServer(t, paid)
	eventually(t, "the paid event, unresolved", func() bool { r, ok := storedFunnel(t, e)["paid-2"]; return ok && r.By == "" })

	late := serverEvent("id-late", "identified", "acq-late", "shop-3.example", 2*time.Hour)
	e.produceServer(t, late)
	eventually(t, "the paid event resolved through the late link", func() bool {
		r := storedFunnel(t, e)["paid-2"]
		return r.By == "shop_link" && r.Acq == "acq-late"
	})

	first := serverEvent("inst-first", "install", "acq-first", "shop-3.example", time.Hour)
	e.produceServer(t, first)
	eventually(t, "the earlier link to win and move the paid event", func() bool {
		r := storedFunnel(t, e)["paid-2"]
		return r.Acq == "acq-first" && storedShopLinks(t, e)["shop-3.example"].AcquisitionID == "acq-first"
	})

	// Replaying the later link (and a marker to know it was consumed) changes nothing.
	marker := serverEvent("marker", "install", "acq-m", "", 0)
	e.produceServer(t, late, marker)
	eventually(t, "the marker", func() bool { _, ok := storedFunnel(t, e)["marker"]; return ok })
	if r := storedFunnel(t, e)["paid-2"]; r.Acq != "acq-first" || r.By != "shop_link" {
		t.Fatalf("after a replayed link: %+v", r)
	}
	if l := storedShopLinks(t, e)["shop-3.example"]; l.AcquisitionID != "acq-first" || l.EventID != "inst-first" || !l.LinkedAt.Equal(i0.Add(time.Hour)) {
		t.Fatalf("shop attribution after a replayed link: %+v", l)
	}
	if n := count(t, e, "SELECT count() FROM acquisition_links FINAL WHERE shop_domain = 'shop-3.example'"); n != 2 {
		t.Fatalf("%d links, want one per acquisition", n)
	}
}

type acquisitionRecord struct {
	FirstSeen, LastSeen              time.Time
	TrackerRef, Gclid, Landing       string
	PageViews, Events, MonthsWritten uint64
}

// storedAcquisition reads an acquisition merged over its months (zero if it has no row).
func storedAcquisition(t *testing.T, e env, acq string) acquisitionRecord {
	t.Helper()
	rows, err := e.ch.Query(testenv.Ctx(t), `SELECT minMerge(first_seen), maxMerge(last_seen), argMinMerge(first_tracker_ref),
argMinMerge(first_gclid), argMinMerge(first_landing_url), uniqExactIfMerge(page_views), uniqExactMerge(events), uniqExact(event_month)
FROM acquisitions WHERE acquisition_id = ? GROUP BY source_id, acquisition_id`, acq)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var a acquisitionRecord
	for rows.Next() {
		if err := rows.Scan(&a.FirstSeen, &a.LastSeen, &a.TrackerRef, &a.Gclid, &a.Landing, &a.PageViews, &a.Events, &a.MonthsWritten); err != nil {
			t.Fatal(err)
		}
		a.FirstSeen, a.LastSeen = a.FirstSeen.UTC(), a.LastSeen.UTC()
	}
	return a
}

// TestAcquisitionsFirstTouch: the acquisitions view takes the first touch from the earliest event,
// whatever order events arrive in and across months, and counts page views once when the same
// events are inserted again (a redelivered batch).
func TestAcquisitionsFirstTouch(t *testing.T) {
	e := setup(t)
	withTouch := func(ev schemas.BrowserEvent, ref, gclid string) schemas.BrowserEvent {
		ev.FirstTouch = schemas.FirstTouch{TrackerRef: ref, Gclid: gclid, LandingURL: ev.URL}
		return ev
	}
	prevMonth := pageView("f0", "acq-f", -20*24*time.Hour, "/october") // 2026-10-31 09:00, the month before the others
	later := withTouch(pageView("f2", "acq-f", 5*time.Minute, "/pricing"), "ref-later", "")
	custom := withTouch(pageView("f3", "acq-f", 6*time.Minute, "/pricing"), "ref-later", "")
	custom.Name = "signup_click"
	e.produceBrowser(t, later, custom, withTouch(prevMonth, "ref-first", "gclid-1"), later) // out of order; f2 retried
	stop := startService(t, e)
	defer stop()
	// The view is written right after browser_events by the same insert, so a reader may see the
	// events a moment before their summary: wait for the summary itself.
	want := acquisitionRecord{FirstSeen: prevMonth.OccurredAt, LastSeen: custom.OccurredAt, TrackerRef: "ref-first", Gclid: "gclid-1",
		Landing: "/october", PageViews: 2, Events: 3, MonthsWritten: 2}
	var got acquisitionRecord
	eventually(t, "the acquisition of three browser events", func() bool {
		got = storedAcquisition(t, e, "acq-f")
		return got.Events == 3
	})
	if got != want {
		t.Fatalf("acquisition\n got %+v\nwant %+v", got, want)
	}

	// A redelivered batch reaches browser_events (and the view) again: nothing changes.
	again, err := e.ch.PrepareBatch(testenv.Ctx(t), insertBrowserEvents)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range []schemas.BrowserEvent{later, custom} {
		if err := again.Append(browserEventRow(ev)...); err != nil {
			t.Fatal(err)
		}
	}
	if err := again.Send(); err != nil {
		t.Fatal(err)
	}
	if got := storedAcquisition(t, e, "acq-f"); got != want {
		t.Fatalf("after a redelivered batch\n got %+v\nwant %+v", got, want)
	}
}
