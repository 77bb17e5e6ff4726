package main

import (
	"context"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// tableCount is the final accounting of one table: of what belongs in it, how much is missing,
// stored twice (as readers see it, after FINAL) or stored wrong.
type tableCount struct {
	Table    string
	Unit     string // what Expected counts
	Expected int
	Missing  int
	Twice    int
	Wrong    int
	// RawExtra is rows that repeat an event ID before ReplacingMergeTree merged them away: expected
	// after redeliveries, invisible to readers (they use FINAL or uniqExact); reported, not failed.
	RawExtra uint64
	Examples []string
}

func (t *tableCount) example(format string, a ...any) {
	if len(t.Examples) < 5 {
		t.Examples = append(t.Examples, fmt.Sprintf(format, a...))
	}
}

// storedEvent is what one event table holds for one event ID, after FINAL.
type storedEvent struct {
	rows         uint64
	minMs, maxMs int64
	session, acq string
}

// Which tables each event belongs to (processors/): a server event lands in server_events
// (land-server-events) and funnel_events (identity-join), and with an acquisition ID and a shop
// makes an acquisition_links row; a browser event lands in browser_events and is counted in its
// session in sessions and in session_state (sessionize), and in acquisitions (a materialized view of
// browser_events), and with a click ID in acquisition_clicks (another view).
//
// It also returns, per kind, how many events never acknowledged are stored anyway.
func verify(ctx context.Context, conn driver.Conn, sourceID string, events []sentEvent) ([]tableCount, map[string]int, error) {
	srv, err := readEvents(ctx, conn, `SELECT event_id, count(), min(toInt64(toUInt32(occurred_at)) * 1000 + occurred_ms),
max(toInt64(toUInt32(occurred_at)) * 1000 + occurred_ms), '', '' FROM server_events FINAL WHERE source_id = ? GROUP BY event_id`, sourceID)
	if err != nil {
		return nil, nil, err
	}
	fun, err := readEvents(ctx, conn, `SELECT event_id, count(), min(toInt64(toUInt32(occurred_at)) * 1000 + occurred_ms),
max(toInt64(toUInt32(occurred_at)) * 1000 + occurred_ms), '', any(acquisition_id) FROM funnel_events FINAL WHERE source_id = ? GROUP BY event_id`, sourceID)
	if err != nil {
		return nil, nil, err
	}
	web, err := readEvents(ctx, conn, `SELECT event_id, count(), min(toInt64(toUInt32(occurred_at)) * 1000 + occurred_ms),
max(toInt64(toUInt32(occurred_at)) * 1000 + occurred_ms), any(session_id), any(acquisition_id) FROM browser_events FINAL WHERE source_id = ? GROUP BY event_id`, sourceID)
	if err != nil {
		return nil, nil, err
	}
	sessions, err := readCounts(ctx, conn, `SELECT concat(acquisition_id, ' ', session_id), toUInt64(sum(event_count)) FROM sessions FINAL WHERE source_id = ? GROUP BY acquisition_id, session_id`, sourceID)
	if err != nil {
		return nil, nil, err
	}
	states, err := readCounts(ctx, conn, `SELECT acquisition_id, count() FROM session_state FINAL WHERE source_id = ? GROUP BY acquisition_id`, sourceID)
	if err != nil {
		return nil, nil, err
	}
	acqs, err := readCounts(ctx, conn, `SELECT acquisition_id, toUInt64(uniqExactMerge(events)) FROM acquisitions WHERE source_id = ? GROUP BY acquisition_id`, sourceID)
	if err != nil {
		return nil, nil, err
	}
	clicks, err := readStrings(ctx, conn, `SELECT acquisition_id, argMinMerge(click_gclid) FROM acquisition_clicks WHERE source_id = ? GROUP BY acquisition_id`, sourceID)
	if err != nil {
		return nil, nil, err
	}
	links, err := readCounts(ctx, conn, `SELECT concat(acquisition_id, ' ', shop_domain), count() FROM acquisition_links FINAL WHERE source_id = ? GROUP BY acquisition_id, shop_domain`, sourceID)
	if err != nil {
		return nil, nil, err
	}

	out := []tableCount{
		eventTable("server_events", kindServer, events, srv),
		eventTable("funnel_events", kindServer, events, fun),
		eventTable("browser_events", kindBrowser, events, web),
	}
	for i, table := range []string{"server_events", "funnel_events", "browser_events"} {
		extra, err := rawExtra(ctx, conn, table, sourceID)
		if err != nil {
			return nil, nil, err
		}
		out[i].RawExtra = extra
	}
	out = append(out, linkTable(events, links))
	out = append(out, sessionTables(events, web, sessions, states, acqs)...)
	out = append(out, clickTable(events, clicks))
	unacked := map[string]int{}
	for _, e := range events {
		if !e.AckedAt.IsZero() {
			continue
		}
		if (e.Kind == kindServer && srv[e.ID] != nil) || (e.Kind == kindBrowser && web[e.ID] != nil) {
			unacked[e.Kind]++
		}
	}
	return out, unacked, nil
}

// eventTable accounts for one row per event: an acknowledged event must be there once, at the
// time it was sent; no event the suite sent (acknowledged or not) may be there twice.
func eventTable(table, kind string, events []sentEvent, stored map[string]*storedEvent) tableCount {
	t := tableCount{Table: table, Unit: "events"}
	for _, e := range events {
		if e.Kind != kind {
			continue
		}
		s := stored[e.ID]
		if s != nil && s.rows > 1 {
			t.Twice++
			t.example("%s (%s, %s) stored %d times", e.ID, e.Origin, e.AckPhase, s.rows)
		}
		if e.AckedAt.IsZero() {
			continue
		}
		t.Expected++
		switch {
		case s == nil:
			t.Missing++
			t.example("%s (%s, occurredAt %s, acknowledged during %s) missing", e.ID, e.Origin, e.At.Format(time.RFC3339Nano), e.AckPhase)
		case s.minMs != e.At.UnixMilli() || s.maxMs != e.At.UnixMilli():
			t.Wrong++
			t.example("%s (%s) sent with occurredAt %s, stored as %s", e.ID, e.Origin, e.At.Format(time.RFC3339Nano),
				time.UnixMilli(s.minMs).UTC().Format(time.RFC3339Nano))
		case kind == kindBrowser && s.acq != e.Acq:
			t.Wrong++
			t.example("%s stored under acquisition %q, sent under %q", e.ID, s.acq, e.Acq)
		}
	}
	return t
}

// linkTable: one acquisition_links row per (acquisition, shop) of an acknowledged server event.
func linkTable(events []sentEvent, links map[string]uint64) tableCount {
	t := tableCount{Table: "acquisition_links", Unit: "links"}
	want := map[string]string{}
	for _, e := range events {
		if e.Kind == kindServer && !e.AckedAt.IsZero() && e.Acq != "" && e.Shop != "" {
			want[e.Acq+" "+e.Shop] = e.ID
		}
	}
	for k, id := range want {
		t.Expected++
		switch n := links[k]; {
		case n == 0:
			t.Missing++
			t.example("link %s (first event %s) missing", k, id)
		case n > 1:
			t.Twice++
			t.example("link %s stored %d times", k, n)
		}
	}
	return t
}

// sessionTables: per browser, the events its sessions count must be exactly the distinct events
// browser_events holds for it (a higher count is an event counted twice), every acknowledged event's
// session must exist, the browser must have a session_state row, and acquisitions must count its
// events.
func sessionTables(events []sentEvent, web map[string]*storedEvent, sessions, states, acqs map[string]uint64) []tableCount {
	sess := tableCount{Table: "sessions", Unit: "events counted"}
	state := tableCount{Table: "session_state", Unit: "browsers"}
	acq := tableCount{Table: "acquisitions", Unit: "events counted"}
	landed := map[string]int{} // distinct events browser_events holds per browser
	for _, s := range web {
		landed[s.acq]++
	}
	counted := map[string]uint64{}
	for k, n := range sessions {
		var a, sid string
		_, _ = fmt.Sscan(k, &a, &sid)
		counted[a] += n
	}
	acked := map[string]int{}
	for _, e := range events {
		if e.Kind != kindBrowser || e.AckedAt.IsZero() {
			continue
		}
		acked[e.Acq]++
		sess.Expected++
		acq.Expected++
		if s := web[e.ID]; s != nil {
			if _, ok := sessions[e.Acq+" "+s.session]; !ok {
				sess.Missing++
				sess.example("%s: its session %s is not in sessions", e.ID, s.session)
			}
		}
	}
	for a := range acked {
		state.Expected++
		if states[a] == 0 {
			state.Missing++
			state.example("browser %s has no session_state row", a)
		}
		want, got := uint64(landed[a]), counted[a]
		switch {
		case got > want:
			sess.Twice += int(got - want)
			sess.example("browser %s: sessions count %d events, browser_events holds %d", a, got, want)
		case got < want:
			sess.Missing += int(want - got)
			sess.example("browser %s: sessions count %d events, browser_events holds %d", a, got, want)
		}
		if n := acqs[a]; n != want {
			if n < want {
				acq.Missing += int(want - n)
			} else {
				acq.Twice += int(n - want)
			}
			acq.example("browser %s: acquisitions counts %d events, browser_events holds %d", a, n, want)
		}
	}
	return []tableCount{sess, state, acq}
}

// clickTable: a browser that sent a click ID has it as its first click in acquisition_clicks.
func clickTable(events []sentEvent, clicks map[string]string) tableCount {
	t := tableCount{Table: "acquisition_clicks", Unit: "browsers"}
	want := map[string]string{}
	for _, e := range events {
		if e.Kind == kindBrowser && !e.AckedAt.IsZero() && e.Gclid != "" {
			want[e.Acq] = e.Gclid
		}
	}
	for a, g := range want {
		t.Expected++
		got, ok := clicks[a]
		switch {
		case !ok:
			t.Missing++
			t.example("browser %s: no acquisition_clicks row", a)
		case got != g:
			t.Wrong++
			t.example("browser %s: click %q, sent %q", a, got, g)
		}
	}
	return t
}

func readEvents(ctx context.Context, conn driver.Conn, query, sourceID string) (map[string]*storedEvent, error) {
	rows, err := conn.Query(ctx, query, sourceID)
	if err != nil {
		return nil, fmt.Errorf("%.60s…: %w", query, err)
	}
	defer rows.Close()
	out := map[string]*storedEvent{}
	for rows.Next() {
		var (
			id string
			s  storedEvent
		)
		if err := rows.Scan(&id, &s.rows, &s.minMs, &s.maxMs, &s.session, &s.acq); err != nil {
			return nil, err
		}
		out[id] = &s
	}
	return out, rows.Err()
}

func readCounts(ctx context.Context, conn driver.Conn, query, sourceID string) (map[string]uint64, error) {
	rows, err := conn.Query(ctx, query, sourceID)
	if err != nil {
		return nil, fmt.Errorf("%.60s…: %w", query, err)
	}
	defer rows.Close()
	out := map[string]uint64{}
	for rows.Next() {
		var (
			k string
			n uint64
		)
		if err := rows.Scan(&k, &n); err != nil {
			return nil, err
		}
		out[k] += n
	}
	return out, rows.Err()
}

func readStrings(ctx context.Context, conn driver.Conn, query, sourceID string) (map[string]string, error) {
	rows, err := conn.Query(ctx, query, sourceID)
	if err != nil {
		return nil, fmt.Errorf("%.60s…: %w", query, err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, rows.Err()
}

func rawExtra(ctx context.Context, conn driver.Conn, table, sourceID string) (uint64, error) {
	var n uint64
	err := conn.QueryRow(ctx, "SELECT toUInt64(count() - uniqExact(event_id)) FROM "+table+" WHERE source_id = ?", sourceID).Scan(&n)
	return n, err
}
