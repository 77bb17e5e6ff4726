package processors

import (
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/schemas"
)

// The identity join's pure rules.

var i0 = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

func serverEvent(id, name, acq, shop string, at time.Duration) schemas.ServerEvent {
	return schemas.ServerEvent{EventID: id, SourceID: "src", WorkspaceID: "ws", AppID: "app", AcquisitionID: acq, Name: name,
		CustomerRef: shop, OccurredAt: i0.Add(at), ReceivedAt: i0.Add(at + time.Second)}
}

func TestLinksOfKeepsTheFirstLinkPerAcquisitionAndShop(t *testing.T) {
	batch := []schemas.ServerEvent{
		serverEvent("e3", "paid", "acq-a", "shop.example", 10*time.Second),
		serverEvent("e2", "install", "acq-a", "shop.example", 0),
		serverEvent("e1", "identified", "acq-a", "shop.example", 500*time.Millisecond), // same second as e2, smaller ID
		serverEvent("e4", "install", "acq-b", "shop.example", 20*time.Second),
		serverEvent("e5", "paid", "", "shop.example", 30*time.Second), // no acquisition: no link
		serverEvent("e6", "install", "acq-c", "", 0),                  // no shop: no link
	}
	got := linksOf(batch)
	if len(got) != 2 {
		t.Fatalf("links %+v", got)
	}
	if got[0].AcquisitionID != "acq-a" || got[0].FirstEventID != "e1" || !got[0].LinkedAt.Equal(i0) {
		t.Fatalf("first link of acq-a: %+v (the earliest second wins, then the smaller event ID)", got[0])
	}
	if got[1].AcquisitionID != "acq-b" || got[1].FirstEventID != "e4" {
		t.Fatalf("link of acq-b: %+v", got[1])
	}
	if linkVersion(i0) <= linkVersion(i0.Add(time.Second)) {
		t.Fatal("an earlier link must have the higher acquisition_links version")
	}
}

func TestFunnelRowResolution(t *testing.T) {
	links := map[shopKey]shopLink{{"ws", "app", "shop.example"}: {SourceID: "src-web", AcquisitionID: "acq-a", EventID: "e1", LinkedAt: i0}}

	own := funnelRowOf(serverEvent("e1", "install", "acq-x", "shop.example", 0), links)
	if own.ResolvedBy != resolvedByEvent || own.AcqID != "acq-x" || own.AcqSourceID != "src" || own.Version != eventVersion {
		t.Fatalf("an event's own acquisition wins over its shop's link: %+v", own)
	}
	viaShop := funnelRowOf(serverEvent("e2", "paid", "", "shop.example", time.Hour), links)
	if viaShop.ResolvedBy != resolvedByShopLink || viaShop.AcqID != "acq-a" || viaShop.AcqSourceID != "src-web" ||
		viaShop.Version != shopLinkVersion(i0) {
		t.Fatalf("resolved through the shop link: %+v", viaShop)
	}
	none := funnelRowOf(serverEvent("e3", "paid", "", "other.example", time.Hour), links)
	if none.ResolvedBy != resolvedNone || none.AcqID != "" || none.Version != unresolvedVersion {
		t.Fatalf("a shop without link: %+v", none)
	}

	// A later re-check with an earlier first link moves the row and ranks it higher.
	earlier := map[shopKey]shopLink{{"ws", "app", "shop.example"}: {SourceID: "src", AcquisitionID: "acq-0", LinkedAt: i0.Add(-time.Hour)}}
	moved, changed := viaShop.resolve(earlier)
	if !changed || moved.AcqID != "acq-0" || moved.Version <= viaShop.Version {
		t.Fatalf("re-resolved %+v (changed %v)", moved, changed)
	}
	if _, changed := moved.resolve(earlier); changed {
		t.Fatal("resolving again against the same links changed the row")
	}
	if _, changed := own.resolve(earlier); changed {
		t.Fatal("an event's own acquisition was re-resolved")
	}
	if !(eventVersion > shopLinkVersion(time.Unix(0, 0)) && shopLinkVersion(schemas.LatestStorableTime) > unresolvedVersion) {
		t.Fatal("versions must rank event > any shop link > unresolved")
	}
}

func TestShopsToRecheck(t *testing.T) {
	links := []linkRow{{WorkspaceID: "ws", AppID: "app", Shop: "a.example"}}
	rows := []funnelRow{
		{WorkspaceID: "ws", AppID: "app", Shop: "a.example", ResolvedBy: resolvedByShopLink},
		{WorkspaceID: "ws", AppID: "app", Shop: "b.example", ResolvedBy: resolvedNone},
		{WorkspaceID: "ws", AppID: "app", Shop: "c.example", ResolvedBy: resolvedByEvent},
		{WorkspaceID: "ws", AppID: "app", ResolvedBy: resolvedNone},
	}
	got := shopsToRecheck(links, rows)
	if len(got) != 2 || got[0].Shop != "a.example" || got[1].Shop != "b.example" {
		t.Fatalf("shops to recheck %+v", got)
	}
}

func TestDecodeIdentityEvent(t *testing.T) {
	r := &kgo.Record{Topic: "t", Value: []byte(`{"eventId":"e","sourceId":"s","workspaceId":"w","appId":"a","name":"paid",
"customerRef":" Shop.Example ","occurredAt":"2026-11-20T12:00:00Z","receivedAt":"2026-11-20T12:00:01Z"}`)}
	e, err := decodeIdentityEvent(r)
	if err != nil || e.CustomerRef != "shop.example" {
		t.Fatalf("decoded %+v, %v", e, err)
	}
	r.Value = []byte(`{"eventId":"e","sourceId":"s","workspaceId":"w","appId":"a","name":"paid","occurredAt":"1960-01-01T00:00:00Z"}`)
	if _, err := decodeIdentityEvent(r); !errors.Is(err, schemas.ErrInvalidMessage) {
		t.Fatalf("a time DateTime cannot hold: %v", err)
	}
}
