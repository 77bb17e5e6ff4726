package processors

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/schemas"
)

// Unit tests of the pure sessionization rules; the tests in sessionize_service_test.go run the
// consumer on the real Kafka and ClickHouse.

var t0 = time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)

// bev is a page view of browser acq at t0+at.
func bev(id, acq string, at time.Duration, url string) sessionEvent {
	ts := t0.Add(at)
	return sessionEvent{BrowserEvent: schemas.BrowserEvent{EventID: id, SourceID: "src", WorkspaceID: "ws", AppID: "app",
		AcquisitionID: acq, SessionID: "client-session", Name: "page_view", OccurredAt: ts, ReceivedAt: ts.Add(time.Second),
		URL: url, Referrer: "https://ref.example/"}}
}

// run applies batches in order, carrying the states over like the sink does after each write.
func run(seenCap int, batches ...[]sessionEvent) (map[string]string, map[string]sessionRow, map[browserKey]*browserState, []sessionizeResult) {
	states := map[browserKey]*browserState{}
	ids := map[string]string{}
	rows := map[string]sessionRow{}
	var results []sessionizeResult
	for _, b := range batches {
		res := sessionize(func(k browserKey) *browserState { return states[k] }, b, seenCap)
		for _, e := range res.Events {
			ids[e.EventID] = e.SessionID
		}
		for _, r := range res.Sessions {
			if old, ok := rows[r.SessionID]; ok && r.Version <= old.Version && !reflect.DeepEqual(old, r) {
				panic(fmt.Sprintf("session %s rewritten with version %d after %d", r.SessionID, r.Version, old.Version))
			}
			rows[r.SessionID] = r
		}
		for k, st := range res.States {
			states[k] = st
		}
		results = append(results, res)
	}
	return ids, rows, states, results
}

func TestSessionIDIsStableAndUnambiguous(t *testing.T) {
	// Recorded once: a change here changes every session ID in production.
	if got := sessionID("src-1", "acq-1", 1795000000000, "evt-1"); got != "6a3c931e-0a12-5c13-8edb-8efcdf4778d8" {
		t.Fatalf("session ID changed: %s", got)
	}
	if sessionID("ab", "c", 1, "e") == sessionID("a", "bc", 1, "e") {
		t.Fatal("field boundaries are ambiguous")
	}
}

func TestSessionsSplitAtGapsOfMoreThanThirtyMinutes(t *testing.T) {
	ids, rows, _, res := run(100, []sessionEvent{
		bev("a1", "A", 0, "/a1"),
		bev("a2", "A", 29*time.Minute, "/a2"),                           // 29 min: same session
		bev("a3", "A", 59*time.Minute, "/a3"),                           // exactly 30 min: still the same
		bev("a4", "A", 89*time.Minute+time.Millisecond, "/a4"),          // 30 min + 1 ms: new session
		bev("a5", "A", 89*time.Minute+time.Millisecond+time.Second, ""), // no URL: exit URL stays
	})
	first, second := ids["a1"], ids["a4"]
	if ids["a2"] != first || ids["a3"] != first || ids["a5"] != second || first == second {
		t.Fatalf("assignment %v", ids)
	}
	if want := sessionID("src", "A", t0.UnixMilli(), "a1"); first != want {
		t.Fatalf("first session ID %s, want %s", first, want)
	}
	f, s := rows[first], rows[second]
	if f.EventCount != 3 || f.PageViewCount != 3 || f.EntryURL != "/a1" || f.ExitURL != "/a3" || f.Returning ||
		!f.StartedAt.Equal(t0) || !f.LastEventAt.Equal(t0.Add(59*time.Minute)) || f.SessionOrdinal != 1 {
		t.Fatalf("first session %+v", f)
	}
	if s.EventCount != 2 || s.EntryURL != "/a4" || s.ExitURL != "/a4" || !s.Returning || s.SessionOrdinal != 2 {
		t.Fatalf("second session %+v", s)
	}
	if res[0].Started != 2 || len(res[0].Sessions) != 2 {
		t.Fatalf("started %d, rows %d", res[0].Started, len(res[0].Sessions))
	}
	if f.Version != uint64(t0.Add(59*time.Minute).UnixMilli()) {
		t.Fatalf("version %d is not the last event's epoch ms", f.Version)
	}
}

func TestClientReturningFlagIsKept(t *testing.T) {
	e := bev("b1", "B", 0, "/")
	e.Returning = true
	_, rows, _, _ := run(100, []sessionEvent{e})
	for _, r := range rows {
		if !r.Returning {
			t.Fatalf("client said returning: %+v", r)
		}
	}
}

func TestOutOfOrderEventsJoinTheOpenSession(t *testing.T) {
	ids, rows, states, _ := run(100, []sessionEvent{
		bev("c1", "C", 10*time.Minute, "/anchor"),
		bev("c2", "C", 20*time.Minute, "/last"),
		bev("c3", "C", 15*time.Minute, "/between"),      // earlier than the last event
		bev("c4", "C", -15*time.Minute, "/before"),      // before the anchor, within 30 min
		bev("c5", "C", 48*time.Minute, "/newest"),       // 28 min after the last: same session
		bev("c6", "C", -30*time.Minute, "/way-before"),  // 40 min before the anchor: late
		bev("c7", "C", -30*time.Minute, "/way-before2"), // late too: each late event stands alone
	})
	open := ids["c1"]
	for _, id := range []string{"c2", "c3", "c4", "c5"} {
		if ids[id] != open {
			t.Fatalf("%s not in the open session: %v", id, ids)
		}
	}
	r := rows[open]
	if r.EventCount != 5 || r.EntryURL != "/anchor" || r.ExitURL != "/newest" || !r.StartedAt.Equal(t0.Add(10*time.Minute)) ||
		!r.LastEventAt.Equal(t0.Add(48*time.Minute)) {
		t.Fatalf("open session %+v", r)
	}
	late := ids["c6"]
	if late == open || ids["c7"] == late || ids["c7"] == open {
		t.Fatalf("late events %v", ids)
	}
	if want := sessionID("src", "C", t0.Add(-30*time.Minute).UnixMilli(), "c6"); late != want {
		t.Fatalf("late session ID %s, want %s", late, want)
	}
	if l := rows[late]; l.EventCount != 1 || l.Returning || l.EntryURL != "/way-before" {
		t.Fatalf("late session %+v", l)
	}
	if st := states[browserKey{"src", "C"}]; st.SessionID != open || st.EventCount != 5 || len(st.Seen) != 7 {
		t.Fatalf("state %+v", st)
	}
}

func TestLateEventAloneStillUpdatesSeenAndVersion(t *testing.T) {
	_, _, states, res := run(100,
		[]sessionEvent{bev("d1", "D", 2*time.Hour, "/")},
		[]sessionEvent{bev("d0", "D", 0, "/old")},
		[]sessionEvent{bev("d0", "D", 0, "/old")}, // its retry
	)
	if res[1].Late != 1 || len(res[1].Sessions) != 1 || res[2].Duplicates != 1 || len(res[2].Events) != 0 {
		t.Fatalf("results %+v", res)
	}
	st := states[browserKey{"src", "D"}]
	if st.EventCount != 1 || st.Version != uint64(t0.Add(2*time.Hour).UnixMilli())+1 {
		t.Fatalf("state %+v", st)
	}
}

func TestDuplicatesAreCountedOnce(t *testing.T) {
	ids, rows, _, res := run(100,
		[]sessionEvent{bev("e1", "E", 0, "/"), bev("e1", "E", 0, "/"), bev("e2", "E", time.Minute, "/2")},
		[]sessionEvent{bev("e2", "E", time.Minute, "/2"), bev("e3", "E", 2*time.Minute, "/3")},
		[]sessionEvent{bev("e1", "E", 0, "/")}, // only duplicates: nothing to write
	)
	if r := rows[ids["e1"]]; r.EventCount != 3 || r.PageViewCount != 3 {
		t.Fatalf("session %+v", r)
	}
	if res[0].Duplicates != 1 || len(res[0].Events) != 2 || res[1].Duplicates != 1 || len(res[1].Events) != 1 {
		t.Fatalf("results %+v %+v", res[0], res[1])
	}
	if len(res[2].Events) != 0 || len(res[2].Sessions) != 0 || len(res[2].States) != 0 {
		t.Fatalf("a batch of duplicates wrote %+v", res[2])
	}
}

func TestSessionizeDoesNotModifyPriorState(t *testing.T) {
	_, _, states, _ := run(100, []sessionEvent{bev("f1", "F", 0, "/")})
	k := browserKey{"src", "F"}
	before := *states[k]
	before.Seen = append([]uint64(nil), states[k].Seen...)
	batch := []sessionEvent{bev("f2", "F", time.Minute, "/2"), bev("f3", "F", 2*time.Hour, "/3")}
	a := sessionize(func(browserKey) *browserState { return states[k] }, batch, 100)
	b := sessionize(func(browserKey) *browserState { return states[k] }, batch, 100)
	if !reflect.DeepEqual(*states[k], before) {
		t.Fatalf("prior state changed: %+v, was %+v", *states[k], before)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the same batch on the same state gave different results")
	}
}

// TestBatchingDoesNotChangeSessions applies one event stream as one batch and as single-event
// batches (what a restart, a retry or a bisection produces): the session IDs and rows are the same.
func TestBatchingDoesNotChangeSessions(t *testing.T) {
	var stream []sessionEvent
	gaps := []time.Duration{0, 3, 31, 1, -2, 29, 45, -50, 10, 0, 30, 31, -1, 5} // minutes, some backwards
	at := time.Duration(0)
	for i, g := range gaps {
		at += g * time.Minute
		for _, acq := range []string{"G", "H"} {
			stream = append(stream, bev(fmt.Sprintf("%s%d", acq, i), acq, at, fmt.Sprintf("/%d", i)))
		}
		if i%4 == 0 {
			stream = append(stream, bev(fmt.Sprintf("G%d", i), "G", at, "/dup")) // a retry
		}
	}
	idsOne, rowsOne, statesOne, _ := run(1000, stream)
	var single [][]sessionEvent
	for _, e := range stream {
		single = append(single, []sessionEvent{e})
	}
	idsMany, rowsMany, statesMany, _ := run(1000, single...)
	if !reflect.DeepEqual(idsOne, idsMany) {
		t.Fatalf("assignment differs:\n%v\n%v", idsOne, idsMany)
	}
	strip := func(rows map[string]sessionRow) map[string]schemas.SessionState {
		out := map[string]schemas.SessionState{}
		for id, r := range rows {
			out[id] = r.SessionState
		}
		return out
	}
	if !reflect.DeepEqual(strip(rowsOne), strip(rowsMany)) {
		t.Fatalf("sessions differ:\n%+v\n%+v", rowsOne, rowsMany)
	}
	for k := range statesOne {
		if !reflect.DeepEqual(statesOne[k].SessionState, statesMany[k].SessionState) || !reflect.DeepEqual(statesOne[k].Seen, statesMany[k].Seen) {
			t.Fatalf("state of %v differs", k)
		}
	}
}

func TestSeenHashesAreCapped(t *testing.T) {
	var b []sessionEvent
	for i := range 10 {
		b = append(b, bev(fmt.Sprint("h", i), "I", time.Duration(i)*time.Second, "/"))
	}
	_, _, states, _ := run(4, b)
	st := states[browserKey{"src", "I"}]
	if len(st.Seen) != 4 || st.Seen[3] != eventHash("h9") || st.Seen[0] != eventHash("h6") {
		t.Fatalf("seen %v", st.Seen)
	}
}

func TestClockFarAheadCountsAtReceipt(t *testing.T) {
	ahead := bev("j2", "J", 365*24*time.Hour, "/future")
	ahead.ReceivedAt = t0.Add(time.Minute)
	slightly := bev("j3", "J", 2*time.Minute+4*time.Minute, "/slightly-ahead")
	slightly.ReceivedAt = t0.Add(2 * time.Minute)
	ids, rows, _, _ := run(100, []sessionEvent{bev("j1", "J", 0, "/"), ahead, slightly, bev("j4", "J", 3*time.Minute, "/next")})
	if ids["j1"] != ids["j2"] || ids["j1"] != ids["j3"] || ids["j1"] != ids["j4"] {
		t.Fatalf("assignment %v", ids)
	}
	if r := rows[ids["j1"]]; !r.LastEventAt.Equal(t0.Add(6*time.Minute)) || r.EventCount != 4 {
		t.Fatalf("session %+v", r)
	}
}

func TestStateCacheBounds(t *testing.T) {
	st := func(hashes int) *browserState { return &browserState{Seen: make([]uint64, hashes)} }
	c := newStateCache(3, 10)
	for i, k := range []string{"a", "b", "c"} {
		c.put(browserKey{"s", k}, int32(i), st(2))
	}
	c.get(browserKey{"s", "a"})           // a is now the most recently used
	c.put(browserKey{"s", "d"}, 0, st(2)) // evicts b (least recently used)
	if _, ok := c.get(browserKey{"s", "b"}); ok || c.len() != 3 {
		t.Fatalf("b not evicted, %d cached", c.len())
	}
	c.put(browserKey{"s", "e"}, 1, st(7)) // 13 hashes > 10: evict from the back until within bounds
	if c.hashes > 10 || c.len() != 2 {
		t.Fatalf("%d hashes in %d browsers", c.hashes, c.len())
	}
	if n := c.dropPartitions(map[int32]bool{1: true}); n != 1 || c.len() != 1 || c.hashes != 2 {
		t.Fatalf("dropped %d, %d left with %d hashes", n, c.len(), c.hashes)
	}
}

func TestDecodeRejectsTimesClickHouseCannotHold(t *testing.T) {
	for _, at := range []time.Time{time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC), time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)} {
		e := bev("k1", "K", 0, "/").BrowserEvent
		e.OccurredAt = at
		_, err := decodeSessionEvent(&kgo.Record{Topic: "t", Partition: 3, Value: mustJSON(t, e)})
		if !errors.Is(err, schemas.ErrInvalidMessage) {
			t.Fatalf("%s: %v", at, err)
		}
	}
	got, err := decodeSessionEvent(&kgo.Record{Topic: "t", Partition: 3, Value: mustJSON(t, bev("k1", "K", 0, "/").BrowserEvent)})
	if err != nil || got.Partition != 3 || got.EventID != "k1" {
		t.Fatalf("%+v %v", got, err)
	}
}
