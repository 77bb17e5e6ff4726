package main

import (
	"strings"
	"testing"
	"time"
)

// These tests cover the suite's own accounting, without a stack: a check that cannot fail proves
// nothing, so each one is shown to count what it claims to.

func TestErrorShape(t *testing.T) {
	for body, want := range map[string]bool{
		`{"error":"invalid_parameter","message":"name is required"}`: true,
		`{"error":"invalid_parameter"}`:                              false,
		`{"error":"","message":"x"}`:                                 false,
		`{"error":5,"message":"x"}`:                                  false,
		`<html>502</html>`:                                           false,
		`{"index":0,"error":"invalid_parameter","message":"eventId must be 1-128 printable characters"}`: true,
	} {
		if got := isErrorShape([]byte(body)); got != want {
			t.Errorf("isErrorShape(%s) = %v, want %v", body, got, want)
		}
	}
}

func TestEventTableCountsMissingTwiceAndWrong(t *testing.T) {
	at := time.Date(2026, 11, 21, 9, 30, 0, 123e6, time.UTC)
	acked := at.Add(time.Second)
	events := []sentEvent{
		{ID: "ok", Kind: kindServer, At: at, AckedAt: acked},
		{ID: "lost", Kind: kindServer, At: at, AckedAt: acked},
		{ID: "double", Kind: kindServer, At: at, AckedAt: acked},
		{ID: "moved", Kind: kindServer, At: time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC), AckedAt: acked},
		{ID: "refused-but-doubled", Kind: kindServer, At: at}, // never acknowledged: only "twice" applies
		{ID: "browser", Kind: kindBrowser, At: at, AckedAt: acked},
	}
	ms := at.UnixMilli()
	stored := map[string]*storedEvent{
		"ok":                  {rows: 1, minMs: ms, maxMs: ms},
		"double":              {rows: 2, minMs: ms, maxMs: ms},
		"moved":               {rows: 1, minMs: 2085978496000, maxMs: 2085978496000},
		"refused-but-doubled": {rows: 2, minMs: ms, maxMs: ms},
	}
	got := eventTable("server_events", kindServer, events, stored)
	if got.Expected != 4 || got.Missing != 1 || got.Twice != 2 || got.Wrong != 1 {
		t.Fatalf("got expected %d missing %d twice %d wrong %d; want 4, 1, 2, 1 (%v)", got.Expected, got.Missing, got.Twice, got.Wrong, got.Examples)
	}
}

func TestSessionTablesCountAnEventCountedTwice(t *testing.T) {
	acked := time.Now()
	events := []sentEvent{
		{ID: "e1", Kind: kindBrowser, Acq: "a", AckedAt: acked},
		{ID: "e2", Kind: kindBrowser, Acq: "a", AckedAt: acked},
		{ID: "e3", Kind: kindBrowser, Acq: "b", AckedAt: acked},
	}
	web := map[string]*storedEvent{
		"e1": {rows: 1, acq: "a", session: "s1"},
		"e2": {rows: 1, acq: "a", session: "s1"},
		"e3": {rows: 1, acq: "b", session: "s2"},
	}
	// Browser a's session counts e1 three times' worth (a redelivery counted again); browser b has no
	// session row, no state and no acquisition.
	sessions := map[string]uint64{"a s1": 3}
	states := map[string]uint64{"a": 1}
	acqs := map[string]uint64{"a": 2}
	ts := sessionTables(events, web, sessions, states, acqs)
	sess, state, acq := ts[0], ts[1], ts[2]
	if sess.Twice != 1 || sess.Missing != 2 {
		t.Errorf("sessions: twice %d missing %d, want 1 and 2 (%v)", sess.Twice, sess.Missing, sess.Examples)
	}
	if state.Expected != 2 || state.Missing != 1 {
		t.Errorf("session_state: expected %d missing %d, want 2 and 1", state.Expected, state.Missing)
	}
	if acq.Missing != 1 || acq.Twice != 0 {
		t.Errorf("acquisitions: missing %d twice %d, want 1 and 0", acq.Missing, acq.Twice)
	}
}

func TestRecoveryWaitsForTheFirstEventAfterTheReturn(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 6, 0, 0, 0, time.UTC)
	l := newLedger()
	for i, e := range []struct {
		ack, landed time.Duration
		origin      string
	}{
		{-2 * time.Second, -time.Second, originLoad},    // landed before the fault
		{time.Second, 44 * time.Second, originLoad},     // acknowledged during the outage, landed after the stall
		{3 * time.Second, 45 * time.Second, originLoad}, // the first after the return (at 2 s)
		{-3 * time.Second, 0, originMalformed},          // dropped by the pipeline: not the load's recovery
	} {
		id := string(rune('a' + i))
		l.add(&sentEvent{ID: id, Kind: kindBrowser, Origin: e.origin})
		l.ack(t0.Add(e.ack), id)
		if e.landed != 0 {
			l.landed("browser_events", t0.Add(e.landed), []string{id})
		}
	}
	first := l.firstAckedAfter(t0.Add(2 * time.Second))
	if !first.Equal(t0.Add(3 * time.Second)) {
		t.Fatalf("first acknowledgement after the return: %s", first)
	}
	last, acked, missing := l.lastLanding(t0.Add(-recoveryWindow), first)
	if acked != 3 || missing != 0 || !last.Equal(t0.Add(45*time.Second)) {
		t.Fatalf("lastLanding = %s, %d acknowledged, %d missing; want +45s, 3, 0", last.Sub(t0), acked, missing)
	}
}

func TestPhaseStatsFindTheLongestGapWithoutA2xx(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 6, 0, 0, 0, time.UTC)
	l := newLedger()
	l.setPhase("Kafka kill -9")
	for _, q := range []struct {
		start  time.Duration
		dur    time.Duration
		status int
	}{
		{0, 10 * time.Millisecond, 202},
		{time.Second, 12 * time.Second, 503}, // over an 11 s bound
		{2 * time.Second, 9 * time.Second, 202},
		{12 * time.Second, 10 * time.Millisecond, 202},
	} {
		l.record(request{Route: routeServer, Phase: "Kafka kill -9", Start: t0.Add(q.start), Duration: q.dur, Status: q.status})
	}
	r := &runner{opts: options{bound: 11 * time.Second}, led: l}
	res := r.stats(faultResult{fault: fault{Name: "Kafka kill -9"}}, t0, t0.Add(15*time.Second))
	if res.Requests != 4 || res.OK != 3 || res.Unavailable != 1 || res.OverBound != 1 || res.MaxLatency != 12*time.Second {
		t.Fatalf("stats: %+v", res)
	}
	// 2xx answers end at 0.01 s, 11 s and 12.01 s; the longest span without one is 0.01 → 11 s.
	if res.EdgeGap != 11*time.Second-10*time.Millisecond {
		t.Fatalf("edge gap %s", res.EdgeGap)
	}
}

func TestBoundIsWhatTheBinaryStates(t *testing.T) {
	help := `      --ingest-produce-timeout duration   longest an event request waits for Kafka (default 5s)
      --kafka-delivery-timeout duration   how long a record not yet sent waits (default 10s)`
	d, from, err := parseBound([]byte(help))
	if err != nil || d != 5*time.Second+requestSlack || !strings.Contains(from, "ingest-produce-timeout") {
		t.Fatalf("parseBound = %s, %q, %v", d, from, err)
	}
	old := `      --kafka-delivery-timeout duration   how long a produce waits for all in-sync replicas before failing (default 10s)`
	if d, _, err := parseBound([]byte(old)); err != nil || d != 10*time.Second+requestSlack {
		t.Fatalf("parseBound(earlier help) = %s, %v", d, err)
	}
	if _, _, err := parseBound([]byte("no such flags")); err == nil {
		t.Fatal("parseBound accepted a help text without a bound")
	}
}

func TestRefusesSharedStacks(t *testing.T) {
	for _, name := range []string{"test", "dev", "bench"} {
		if _, err := newStackCtl("deploy/local/stack", name, ".stack/"+name); err == nil {
			t.Errorf("stack %q accepted", name)
		}
	}
	if _, err := newStackCtl("deploy/local/stack", "faults", ".stack/faults"); err != nil {
		t.Error(err)
	}
}
