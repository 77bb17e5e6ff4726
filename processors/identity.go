package processors

import (
	"math"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/schemas"
)

// Identity join rules (the pure part; identity_sink.go does the I/O).
//
// Links. A verified server event that carries both an acquisitionId and a customerRef (the verified
// shop domain) links that browser to that shop, whatever its name: `identified` exists precisely to
// link browsing history to an existing shop. One acquisition_links row per (source, acquisition,
// shop), holding the first event that linked them. "First" is the smallest (linked_at second,
// event ID) everywhere: in a batch, in acquisition_links' version (ties within a second keep the
// last written; argMin over (linked_at, first_event_id) is exact), and in shop_attribution's argMin.
//
// Shop attribution. The first acquisition linked to a shop of an app (any source of the app) is
// the shop's first touch: shop_attribution, maintained by a materialized view from
// acquisition_links, so this consumer only ever inserts links.
//
// Resolution. Every server event becomes one funnel_events row whose acquisition is, in order:
//  1. its own acquisitionId ('event'); the acquisition's source is the event's source;
//  2. else, if it names a shop, the shop's first linked acquisition ('shop_link');
//  3. else none ('').
//
// A shop may be linked after events that name only it were processed: its link may come in another
// partition (the topic key carries the acquisition ID, which such events lack), be processed by
// another group member, or arrive late. So after writing a batch the sink re-resolves the
// not-'event' rows of every shop the batch touched against shop_attribution as it is then
// (identity_sink.go). Resolution only ever improves (a shop gains links; its first link can only
// move earlier), and the row version ranks resolutions (resolutionVersion), so whatever order
// rows are written in, ReplacingMergeTree keeps the best one.

// Resolutions, the values of funnel_events.acquisition_resolved_by.
const (
	resolvedNone       = ""
	resolvedByEvent    = "event"
	resolvedByShopLink = "shop_link"
)

// Versions of funnel_events rows, by resolution: an event's own acquisition never changes and
// outranks everything; a shop link ranks higher the earlier it was made (the earliest is the first
// touch); an unresolved row ranks lowest. Links are at most 2^33 seconds after 1970, far below
// shopLinkVersionBase.
const (
	eventVersion        = math.MaxUint64
	shopLinkVersionBase = 1 << 62
	unresolvedVersion   = 0
)

func shopLinkVersion(linkedAt time.Time) uint64 {
	return shopLinkVersionBase - uint64(linkedAt.Unix())
}

// linkVersion makes acquisition_links (ReplacingMergeTree(version), which keeps the highest) keep
// the earliest link of a (source, acquisition, shop).
func linkVersion(linkedAt time.Time) uint64 {
	return math.MaxUint64 - uint64(linkedAt.Unix())
}

// shopKey identifies a shop of an app.
type shopKey struct{ WorkspaceID, AppID, Shop string }

// shopLink is a shop's first link as shop_attribution holds it.
type shopLink struct {
	SourceID, AcquisitionID, EventID string
	LinkedAt                         time.Time
}

// linkRow is one row of acquisition_links.
type linkRow struct {
	SourceID, AcquisitionID, WorkspaceID, AppID, Shop, FirstEventID string
	LinkedAt                                                        time.Time // whole seconds
}

// funnelRow is one row of funnel_events.
type funnelRow struct {
	WorkspaceID, SourceID, AppID, EventID, Name string
	OccurredAt                                  time.Time // to the millisecond
	AcqSourceID, AcqID, ResolvedBy              string
	Shop                                        string
	AmountCents                                 *int64
	Currency                                    string
	Version                                     uint64
}

// decodeIdentityEvent decodes a server event for the identity join (Validate applies the event-time
// rule of schemas/event_time.go, so a time ClickHouse would wrap never reaches funnel_events). The
// shop domain is compared in lower case (the edge already lowers it; this keeps the join's keys
// exact regardless).
func decodeIdentityEvent(r *kgo.Record) (schemas.ServerEvent, error) {
	e, err := decodeJSON[schemas.ServerEvent](r)
	if err != nil {
		return e, err
	}
	e.CustomerRef = strings.ToLower(strings.TrimSpace(e.CustomerRef))
	return e, nil
}

// linksOf returns the first link per (source, acquisition, shop) made by the batch, in the order
// they first appear.
func linksOf(batch []schemas.ServerEvent) []linkRow {
	type key struct{ source, acq, shop string }
	idx := map[key]int{}
	var out []linkRow
	for _, e := range batch {
		if e.AcquisitionID == "" || e.CustomerRef == "" {
			continue
		}
		l := linkRow{SourceID: e.SourceID, AcquisitionID: e.AcquisitionID, WorkspaceID: e.WorkspaceID, AppID: e.AppID,
			Shop: e.CustomerRef, FirstEventID: e.EventID, LinkedAt: e.OccurredAt.UTC().Truncate(time.Second)}
		k := key{e.SourceID, e.AcquisitionID, e.CustomerRef}
		i, ok := idx[k]
		switch {
		case !ok:
			idx[k] = len(out)
			out = append(out, l)
		case linkBefore(l, out[i]):
			out[i] = l
		}
	}
	return out
}

func linkBefore(a, b linkRow) bool {
	if !a.LinkedAt.Equal(b.LinkedAt) {
		return a.LinkedAt.Before(b.LinkedAt)
	}
	return a.FirstEventID < b.FirstEventID
}

// shopsWithoutAcquisition are the shops whose attribution the batch's events need.
func shopsWithoutAcquisition(batch []schemas.ServerEvent) []shopKey {
	seen := map[shopKey]bool{}
	var out []shopKey
	for _, e := range batch {
		k := shopKey{e.WorkspaceID, e.AppID, e.CustomerRef}
		if e.AcquisitionID == "" && e.CustomerRef != "" && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// funnelRowOf turns a server event into its funnel row, resolved against the known shop links.
func funnelRowOf(e schemas.ServerEvent, links map[shopKey]shopLink) funnelRow {
	r := funnelRow{WorkspaceID: e.WorkspaceID, SourceID: e.SourceID, AppID: e.AppID, EventID: e.EventID, Name: e.Name,
		OccurredAt: e.OccurredAt.UTC().Truncate(time.Millisecond), Shop: e.CustomerRef, AmountCents: e.AmountCents,
		Currency: e.Currency, ResolvedBy: resolvedNone, Version: unresolvedVersion}
	if e.AcquisitionID != "" {
		r.AcqSourceID, r.AcqID, r.ResolvedBy, r.Version = e.SourceID, e.AcquisitionID, resolvedByEvent, eventVersion
		return r
	}
	r, _ = r.resolve(links)
	return r
}

// resolve re-resolves a row that does not carry its own acquisition against the shops' first links
// and says whether anything changed. A row keeps what it has when its shop has no link.
func (r funnelRow) resolve(links map[shopKey]shopLink) (funnelRow, bool) {
	if r.ResolvedBy == resolvedByEvent || r.Shop == "" {
		return r, false
	}
	l, ok := links[shopKey{r.WorkspaceID, r.AppID, r.Shop}]
	if !ok {
		return r, false
	}
	next := r
	next.AcqSourceID, next.AcqID, next.ResolvedBy, next.Version = l.SourceID, l.AcquisitionID, resolvedByShopLink, shopLinkVersion(l.LinkedAt)
	return next, next != r
}

// shopsToRecheck are the shops whose rows may resolve differently after this batch: those it
// linked, and those of its rows that did not carry their own acquisition.
func shopsToRecheck(links []linkRow, rows []funnelRow) []shopKey {
	seen := map[shopKey]bool{}
	var out []shopKey
	add := func(k shopKey) {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	for _, l := range links {
		add(shopKey{l.WorkspaceID, l.AppID, l.Shop})
	}
	for _, r := range rows {
		if r.ResolvedBy != resolvedByEvent && r.Shop != "" {
			add(shopKey{r.WorkspaceID, r.AppID, r.Shop})
		}
	}
	return out
}
