package main

import (
	"encoding/json"
	"slices"
	"sync"
	"time"
)

// Event kinds.
const (
	kindServer  = "server"
	kindBrowser = "browser"
)

// Where an event came from: the steady load, or the malformed-input cases whose odd values the
// edge acknowledged (they must then be stored like any other event).
const (
	originLoad      = "load"
	originMalformed = "malformed"
)

// sentEvent is one event the suite sent, however many times.
type sentEvent struct {
	ID     string
	Kind   string
	Origin string
	// What the stored rows must say.
	Acq, Shop, Name, Gclid string
	At                     time.Time // occurredAt as sent, to the millisecond
	// AckedAt is the first 2xx that covered it (zero: never acknowledged), AckPhase the phase it fell in.
	AckedAt  time.Time
	AckPhase string
	// Landed is when the landing poll first found it in a table (landing.go).
	Landed map[string]time.Time
	// Abandoned: the client gave up its first send mid-request; InProgress holds the phase of each
	// "event_in_progress" answer its sends got (the ID still reserved by an earlier send).
	Abandoned  bool
	InProgress []string
}

// request is one HTTP attempt.
type request struct {
	Route    string
	Phase    string
	Start    time.Time
	Duration time.Duration
	Status   int    // 0: no answer
	Err      string // transport error, when Status is 0
	// BadShape says a refusal was not a JSON {error, message}.
	BadShape bool
	// Abandoned: the client cancelled it on purpose (load.go); it is not held against the edge.
	Abandoned bool
}

// ledger is what was sent, acknowledged and answered, shared by the load, the pollers and the report.
type ledger struct {
	mu       sync.Mutex
	events   map[string]*sentEvent
	order    []string
	requests []request
	phase    string
}

func newLedger() *ledger { return &ledger{events: map[string]*sentEvent{}, phase: "setup"} }

func (l *ledger) setPhase(p string) {
	l.mu.Lock()
	l.phase = p
	l.mu.Unlock()
}

func (l *ledger) currentPhase() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.phase
}

// add registers an event before its first send.
func (l *ledger) add(e *sentEvent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.events[e.ID]; ok {
		return
	}
	e.Landed = map[string]time.Time{}
	l.events[e.ID] = e
	l.order = append(l.order, e.ID)
}

// ack marks events acknowledged at t (the first acknowledgement counts).
func (l *ledger) ack(t time.Time, ids ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, id := range ids {
		if e := l.events[id]; e != nil && e.AckedAt.IsZero() {
			e.AckedAt, e.AckPhase = t, l.phase
		}
	}
}

func (l *ledger) abandoned(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e := l.events[id]; e != nil {
		e.Abandoned = true
	}
}

// refused notes a refusal of one of id's sends by its error code.
func (l *ledger) refused(id, code string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e := l.events[id]; e != nil && code == "event_in_progress" {
		e.InProgress = append(e.InProgress, l.phase)
	}
}

func (l *ledger) record(r request) {
	l.mu.Lock()
	l.requests = append(l.requests, r)
	l.mu.Unlock()
}

// landed records the first time each id was seen in table.
func (l *ledger) landed(table string, at time.Time, ids []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, id := range ids {
		if e := l.events[id]; e != nil {
			if _, ok := e.Landed[table]; !ok {
				e.Landed[table] = at
			}
		}
	}
}

// snapshot copies every event (with its own Landed map) in sending order.
func (l *ledger) snapshot() []sentEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]sentEvent, 0, len(l.order))
	for _, id := range l.order {
		e := *l.events[id]
		e.Landed = make(map[string]time.Time, len(e.Landed))
		for k, v := range l.events[id].Landed {
			e.Landed[k] = v
		}
		out = append(out, e)
	}
	return out
}

func (l *ledger) requestsIn(phase string) []request {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []request
	for _, r := range l.requests {
		if phase == "" || r.Phase == phase {
			out = append(out, r)
		}
	}
	return out
}

// firstAckAfter is the first 2xx of a load request started at or after t (zero: none yet).
func (l *ledger) firstAckAfter(t time.Time) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	var first time.Time
	for _, r := range l.requests {
		if r.Status/100 == 2 && !r.Abandoned && !r.Start.Before(t) && (r.Route == routeServer || r.Route == routeCollect) {
			if end := r.Start.Add(r.Duration); first.IsZero() || end.Before(first) {
				first = end
			}
		}
	}
	return first
}

// pending returns the acknowledged events not yet seen in every landing table of their kind.
func (l *ledger) pending() []sentEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []sentEvent
	for _, id := range l.order {
		e := l.events[id]
		if e.AckedAt.IsZero() {
			continue
		}
		for _, t := range landingTables(e.Kind) {
			if _, ok := e.Landed[t]; !ok {
				out = append(out, sentEvent{ID: e.ID, Kind: e.Kind, Origin: e.Origin})
				break
			}
		}
	}
	return out
}

// firstAckedAfter is the earliest acknowledgement at or after t of any event (zero: none yet).
func (l *ledger) firstAckedAfter(t time.Time) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	var first time.Time
	for _, e := range l.events {
		if !e.AckedAt.Before(t) && (first.IsZero() || e.AckedAt.Before(first)) {
			first = e.AckedAt
		}
	}
	return first
}

// lastLanding is the latest time an event of the load acknowledged within [from, to] arrived in
// all of its landing tables, with the number of those events and of those that have not arrived
// yet. (Malformed-input events are left to the final accounting: one the pipeline drops must not
// hold up the recovery of every later fault.)
func (l *ledger) lastLanding(from, to time.Time) (last time.Time, acked, missing int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, id := range l.order {
		e := l.events[id]
		if e.Origin != originLoad || e.AckedAt.IsZero() || e.AckedAt.Before(from) || e.AckedAt.After(to) {
			continue
		}
		acked++
		at := landedAll(*e)
		if at.IsZero() {
			missing++
		} else if at.After(last) {
			last = at
		}
	}
	return last, acked, missing
}

// landedAll is when e was in every landing table of its kind (zero: not yet).
func landedAll(e sentEvent) time.Time {
	var last time.Time
	for _, t := range landingTables(e.Kind) {
		at, ok := e.Landed[t]
		if !ok {
			return time.Time{}
		}
		if at.After(last) {
			last = at
		}
	}
	return last
}

// isErrorShape says whether body is a JSON object with non-empty string error and message, the
// shape every refusal of every edge must have.
func isErrorShape(body []byte) bool {
	var v struct {
		Error   *string `json:"error"`
		Message *string `json:"message"`
	}
	if json.Unmarshal(body, &v) != nil || v.Error == nil || v.Message == nil {
		return false
	}
	return *v.Error != "" && *v.Message != ""
}

// sortedDurations returns the durations sorted ascending.
func sortedDurations(rs []request) []time.Duration {
	out := make([]time.Duration, len(rs))
	for i, r := range rs {
		out[i] = r.Duration
	}
	slices.Sort(out)
	return out
}
