package partnerfake

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"sort"
	"time"
)

// Cursor pagination over the two connections. Cursors are opaque base64 JSON holding the last
// record's ID and sort value (the shape the platform's Admin API uses); they are keyset cursors, so
// a cursor stays valid across calls and filter changes, and paging never skips or repeats a record.

type cursorBody struct {
	LastID    uint64 `json:"last_id"`
	LastValue string `json:"last_value"`
}

var errInvalidCursor = errors.New("Invalid cursor")

func encodeCursor(id uint64, at time.Time) string {
	b, _ := json.Marshal(cursorBody{id, at.UTC().Format("2006-01-02T15:04:05Z")})
	return base64.StdEncoding.EncodeToString(b)
}

func decodeCursor(s string) (uint64, error) {
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return 0, errInvalidCursor
	}
	var c cursorBody
	if json.Unmarshal(raw, &c) != nil || c.LastID == 0 {
		return 0, errInvalidCursor
	}
	return c.LastID, nil
}

// pageArgs reads first/last: a missing size means the page limit, a larger one is clamped to it
// (graphql-ruby's max_page_size behaviour), a negative one is an error.
func (x *execCtx) pageArgs(args map[string]any) (first, last int, err error) {
	max := x.srv.cfg.MaxPageSize
	first, last = -1, -1
	if v, ok := args["first"].(int); ok {
		if v < 0 {
			return 0, 0, errors.New("Argument 'first' must be a non-negative integer")
		}
		first = min(v, max)
	}
	if v, ok := args["last"].(int); ok {
		if v < 0 {
			return 0, 0, errors.New("Argument 'last' must be a non-negative integer")
		}
		last = min(v, max)
	}
	if first < 0 && last < 0 {
		first = max
	}
	return first, last, nil
}

// window turns a [min, max] DateTime filter (both inclusive, as documented: "on or after", "on or
// before") into seconds since the dataset base, raising min to the history floor.
func (x *execCtx) window(args map[string]any, minArg, maxArg string) (lo, hi int64) {
	lo, hi = x.floor, math.MaxInt64
	base := x.srv.ds.base
	if t, ok := args[minArg].(time.Time); ok {
		// Round up: records are whole seconds, so 12:00:00.5 excludes 12:00:00.
		s := t.Unix() - base
		if t.Nanosecond() > 0 {
			s++
		}
		lo = max(lo, s)
	}
	if t, ok := args[maxArg].(time.Time); ok {
		hi = min(hi, t.Unix()-base)
	}
	return lo, hi
}

// pager walks positions [start, end) of an ordered list.
type pager struct {
	lo, hi     int // the window's bounds in the list
	start, end int // after applying after/before cursors
	pos        func(i int) int
	match      func(p int) bool
}

func (g *pager) page(first, last int, after, before bool) (out []int, hasNext, hasPrev bool) {
	if last >= 0 && first < 0 {
		for i := g.end - 1; i >= g.start; i-- {
			p := g.pos(i)
			if !g.match(p) {
				continue
			}
			if len(out) == last {
				hasPrev = true
				break
			}
			out = append(out, p)
		}
		slices.Reverse(out)
		return out, before && g.end < g.hi, hasPrev
	}
	for i := g.start; i < g.end; i++ {
		p := g.pos(i)
		if !g.match(p) {
			continue
		}
		if len(out) == first {
			hasNext = true
			break
		}
		out = append(out, p)
	}
	hasPrev = after && g.start > g.lo
	if last >= 0 && len(out) > last {
		out, hasPrev = out[len(out)-last:], true
	}
	return out, hasNext, hasPrev
}

func (x *execCtx) transactions(args map[string]any) (any, error) {
	d := x.srv.ds
	first, last, err := x.pageArgs(args)
	if err != nil {
		return nil, err
	}
	empty := connVal{typ: "TransactionConnection", edges: []any{}}
	var kinds [len(txTypes)]bool
	if types, ok := args["types"].([]any); ok {
		for _, t := range types {
			if k := slices.Index(txTypes[:], t.(string)); k >= 0 {
				kinds[k] = true
			}
		}
	} else {
		kinds = [len(txTypes)]bool{true, true, true, true, true}
	}
	shop := -1
	if id, ok := args["shopId"].(string); ok {
		if shop, ok = d.shopIndex(id); !ok {
			return empty, nil
		}
	}
	if dom, ok := args["myshopifyDomain"].(string); ok {
		s, ok := x.srv.domains[dom]
		if !ok || shop >= 0 && s != shop {
			return empty, nil
		}
		shop = s
	}
	n := len(d.txns)
	pos := func(i int) int { return i }
	if id, ok := args["appId"].(string); ok {
		a, ok := d.appIndex(id)
		if !ok {
			return empty, nil
		}
		list := d.appTxns[a]
		n, pos = len(list), func(i int) int { return int(list[i]) }
	}
	lo, hi := x.window(args, "createdAtMin", "createdAtMax")
	g := &pager{pos: pos}
	g.lo = sort.Search(n, func(i int) bool { return int64(d.txns[pos(i)].at) >= lo })
	g.hi = sort.Search(n, func(i int) bool { return int64(d.txns[pos(i)].at) > hi })
	g.start, g.end = g.lo, max(g.lo, g.hi)
	after, hasAfter := args["after"].(string)
	if hasAfter {
		id, err := decodeCursor(after)
		if err != nil {
			return nil, err
		}
		c := int(id) - firstTransactionNumber
		g.start = max(g.start, sort.Search(n, func(i int) bool { return pos(i) > c }))
	}
	before, hasBefore := args["before"].(string)
	if hasBefore {
		id, err := decodeCursor(before)
		if err != nil {
			return nil, err
		}
		c := int(id) - firstTransactionNumber
		g.end = min(g.end, sort.Search(n, func(i int) bool { return pos(i) >= c }))
	}
	g.match = func(p int) bool {
		t := &d.txns[p]
		return kinds[t.kind] && (shop < 0 || int(d.custShop[t.cust]) == shop)
	}
	out, hasNext, hasPrev := g.page(first, last, hasAfter, hasBefore)
	conn := connVal{typ: "TransactionConnection", edges: make([]any, len(out)), hasNext: hasNext, hasPrev: hasPrev}
	for i, p := range out {
		t := d.transaction(p)
		conn.edges[i] = edgeVal{"TransactionEdge", encodeCursor(d.transactionNumber(p), t.CreatedAt), txVal{t}}
	}
	return conn, nil
}

func (x *execCtx) events(app int, args map[string]any) (any, error) {
	d := x.srv.ds
	first, last, err := x.pageArgs(args)
	if err != nil {
		return nil, err
	}
	empty := connVal{typ: "AppEventConnection", edges: []any{}}
	var types [numEventTypes]bool
	if list, ok := args["types"].([]any); ok {
		for _, t := range list {
			if k := slices.Index(eventTypes[:], t.(string)); k >= 0 {
				types[k] = true
			}
		}
	} else {
		for i := range types {
			types[i] = true
		}
	}
	shop := -1
	if id, ok := args["shopId"].(string); ok {
		if shop, ok = d.shopIndex(id); !ok {
			return empty, nil
		}
	}
	chargeKind, chargeRef := -1, uint32(0)
	if id, ok := args["chargeId"].(string); ok {
		for ck, tn := range chargeTypenames {
			if n, ok := parseGID(id, "shopify", tn); ok && n >= uint64(chargeNumberBase[ck]) && n-uint64(chargeNumberBase[ck]) <= math.MaxUint32 {
				chargeKind, chargeRef = ck, uint32(n-uint64(chargeNumberBase[ck]))
			}
		}
		if chargeKind < 0 {
			return empty, nil
		}
	}
	evs := d.events[app]
	n := len(evs)
	lo, hi := x.window(args, "occurredAtMin", "occurredAtMax")
	g := &pager{pos: func(i int) int { return i }}
	g.lo = sort.Search(n, func(i int) bool { return int64(evs[i].at) >= lo })
	g.hi = sort.Search(n, func(i int) bool { return int64(evs[i].at) > hi })
	g.start, g.end = g.lo, max(g.lo, g.hi)
	after, hasAfter := args["after"].(string)
	if hasAfter {
		id, err := decodeCursor(after)
		if err != nil {
			return nil, err
		}
		g.start = max(g.start, min(int(id), n)) // last_id is the 1-based position
	}
	before, hasBefore := args["before"].(string)
	if hasBefore {
		id, err := decodeCursor(before)
		if err != nil {
			return nil, err
		}
		g.end = min(g.end, int(id)-1)
	}
	g.match = func(i int) bool {
		e := &evs[i]
		if !types[e.typ] || shop >= 0 && int(d.custShop[e.cust]) != shop {
			return false
		}
		if chargeKind >= 0 {
			ck, ok := eventPayload(e.typ)
			return ok && int(ck) == chargeKind && e.ref == chargeRef
		}
		return true
	}
	out, hasNext, hasPrev := g.page(first, last, hasAfter, hasBefore)
	conn := connVal{typ: "AppEventConnection", edges: make([]any, len(out)), hasNext: hasNext, hasPrev: hasPrev}
	for k, i := range out {
		e := d.event(app, i)
		conn.edges[k] = edgeVal{"AppEventEdge", encodeCursor(uint64(i)+1, e.OccurredAt), evVal{e, app}}
	}
	return conn, nil
}
