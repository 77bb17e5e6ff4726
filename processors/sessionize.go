package processors

import (
	"encoding/binary"
	"hash/fnv"
	"time"

	"github.com/google/uuid"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/schemas"
)

// Sessionization rules (the pure part; sessionize_sink.go does the I/O).
//
// A browser is (source_id, acquisition_id). Its events arrive in one partition in the order the
// browser sent them; their occurredAt is the browser's clock, so it may run slightly backwards. The
// browser has at most one open session: anchor (the event that opened it: its time is started_at
// and, with its event ID, the basis of the session ID), last (latest occurredAt seen), counts, URLs.
// Each event, in arrival order, is handled by the first rule that matches:
//
//  1. Duplicate: its event ID is among the browser's most recently seen IDs (client retry or Kafka
//     redelivery). It is dropped: not counted, not landed again (its first copy already was). The
//     window is the browser's last defaultSeenPerBrowser event IDs; an older retry counts again,
//     which the edge's Redis deduplicator makes rare.
//  2. No open session, or occurredAt > last + 30 min: a new session opens with this event as
//     anchor. It is returning if the browser had a session before (server-side truth: an open
//     session existed in memory or in ClickHouse) or the client said so.
//  3. occurredAt < anchor - 30 min (late: it cannot belong to the open session without a gap): it
//     becomes a session of its own, computed from this event alone (ID from its own time and event
//     ID, count 1, returning only if the client said so, since we do not know what came before it).
//     The open session is not touched. We do not look older sessions up: that would make the
//     result depend on what else ClickHouse holds, and browsers' clocks rarely jump back that far.
//  4. Otherwise it joins the open session: counted; if it is the newest so far it moves last and
//     the exit URL. started_at, the ID and the entry URL never move (an event up to 30 min before
//     the anchor joins without changing them), so the sessions row keeps its partition
//     (toYYYYMM(started_at)) and its ID stays reproducible from the row.
//
// "occurredAt" above is sessionTime: to the millisecond, and capped at receipt + maxClockAhead.
// Every decision depends only on the prior state and the events in arrival order, so replaying the
// same events (in a fresh database, or after a restart that reloads the state) gives the same IDs.

// sessionGap ends a session: it "restarts after 30 minutes without a tracked event"
// (ingest/tracker/README.md, "Session").
const sessionGap = 30 * time.Minute

// maxClockAhead bounds how far a browser's clock may claim to be ahead of the edge's. An event
// stamped later than that is placed at its receipt time instead: one event from a clock set a year
// ahead would otherwise open a session in the future and turn every following event into a late one.
const maxClockAhead = 5 * time.Minute

// sessionNamespace is the UUIDv5 namespace of session IDs. Never change it: every ID would change.
var sessionNamespace = uuid.MustParse("5d1b7a4e-3c2f-4e8b-9a61-0f7e2c9d4b38")

// sessionID derives a session's ID from its browser and its anchor event. Fields are length-prefixed
// so that no two different inputs share an encoding.
func sessionID(sourceID, acquisitionID string, startMs int64, anchorEventID string) string {
	b := make([]byte, 0, 16+len(sourceID)+len(acquisitionID)+len(anchorEventID))
	for _, s := range []string{sourceID, acquisitionID} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	b = binary.BigEndian.AppendUint64(b, uint64(startMs))
	b = binary.AppendUvarint(b, uint64(len(anchorEventID)))
	b = append(b, anchorEventID...)
	return uuid.NewSHA1(sessionNamespace, b).String()
}

// eventHash is what the seen set stores: 8 bytes instead of the ID. A collision (odds about 1 in
// 10^11 within one browser's window) would drop one event of that browser.
func eventHash(eventID string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(eventID))
	return h.Sum64()
}

// browserKey identifies a browser; the topic's key is its "source_id:acquisition_id".
type browserKey struct{ SourceID, AcquisitionID string }

// sessionEvent is a decoded browser event with the partition it came from (the state cache drops
// a partition's browsers when the partition is assigned again).
type sessionEvent struct {
	schemas.BrowserEvent
	Partition int32
}

// decodeSessionEvent decodes and validates a browser event. Its times are checked by Validate, by
// the rule the edge applied before acknowledging it (schemas/event_time.go): a time ClickHouse
// would silently wrap never reaches a session.
func decodeSessionEvent(r *kgo.Record) (sessionEvent, error) {
	e, err := decodeJSON[schemas.BrowserEvent](r)
	if err != nil {
		return sessionEvent{}, err
	}
	return sessionEvent{BrowserEvent: e, Partition: r.Partition}, nil
}

// sessionTime is the time an event counts at: its occurredAt to the millisecond (what ClickHouse
// stores, so a reloaded state compares exactly like the in-memory one), unless it is implausibly
// ahead of its receipt.
func sessionTime(e schemas.BrowserEvent) time.Time {
	t := e.OccurredAt.UTC().Truncate(time.Millisecond)
	if !e.ReceivedAt.IsZero() && t.After(e.ReceivedAt.Add(maxClockAhead)) {
		return e.ReceivedAt.UTC().Truncate(time.Millisecond)
	}
	return t
}

// browserState is a browser's open session plus the hashes of its most recent event IDs (oldest
// first, at most seenCap). Stored states are never mutated: a batch works on copies.
type browserState struct {
	schemas.SessionState
	Seen    []uint64
	Version uint64
}

// sessionRow is one row of the sessions table.
type sessionRow struct {
	schemas.SessionState
	Version uint64
}

// sessionizeResult is what one batch produces.
type sessionizeResult struct {
	// Events carries the non-duplicate events, in arrival order, with the server's session ID.
	Events []schemas.BrowserEvent
	// Sessions holds the final row of every session the batch touched.
	Sessions []sessionRow
	// States holds the new state of every browser with a non-duplicate event, Partitions its partition.
	States     map[browserKey]*browserState
	Partitions map[browserKey]int32
	// Counters for the metrics.
	Started, Late, Duplicates int
}

// sessionize applies a batch to the prior states (prior returns nil for an unknown browser) without
// modifying them, so a failed write leaves nothing half-applied and a retry starts from scratch.
func sessionize(prior func(browserKey) *browserState, batch []sessionEvent, seenCap int) sessionizeResult {
	res := sessionizeResult{States: map[browserKey]*browserState{}, Partitions: map[browserKey]int32{}}
	work := map[browserKey]*workState{}
	var order []browserKey
	for _, in := range batch {
		e := in.BrowserEvent
		k := browserKey{e.SourceID, e.AcquisitionID}
		w := work[k]
		if w == nil {
			w = newWorkState(prior(k))
			work[k] = w
			order = append(order, k)
		}
		res.Partitions[k] = in.Partition
		h := eventHash(e.EventID)
		if _, dup := w.seen[h]; dup {
			res.Duplicates++
			continue
		}
		w.remember(h)
		t := sessionTime(e)
		st := w.st
		switch {
		case st == nil || t.After(st.LastEventAt.Add(sessionGap)):
			if w.touched {
				res.Sessions = append(res.Sessions, w.row())
			}
			w.open(e, t)
			res.Started++
		case t.Before(st.StartedAt.Add(-sessionGap)):
			s := openedBy(e, t)
			s.SessionOrdinal = 0 // outside the browser's sequence of sessions
			s.Returning = e.Returning
			res.Sessions = append(res.Sessions, sessionRow{SessionState: s, Version: uint64(t.UnixMilli())})
			res.Late++
			res.Started++
			e.SessionID = s.SessionID
			res.Events = append(res.Events, e)
			continue
		default:
			w.join(e, t)
		}
		e.SessionID = w.st.SessionID
		res.Events = append(res.Events, e)
	}
	for _, k := range order {
		w := work[k]
		if !w.touched && !w.remembered {
			continue // only duplicates: nothing changed
		}
		if w.touched {
			res.Sessions = append(res.Sessions, w.row())
		}
		res.States[k] = w.state(seenCap)
	}
	return res
}

// workState is a browser's state while a batch is applied.
type workState struct {
	st   *schemas.SessionState // open session (a copy), nil if none
	base uint64                // version of the prior state
	seen map[uint64]struct{}
	// order keeps seen hashes oldest first, so the cap drops the oldest.
	order []uint64
	// touched: the open session changed in this batch; remembered: a hash was added.
	touched, remembered bool
}

func newWorkState(p *browserState) *workState {
	w := &workState{seen: map[uint64]struct{}{}}
	if p == nil {
		return w
	}
	st := p.SessionState
	w.st, w.base = &st, p.Version
	w.order = append([]uint64(nil), p.Seen...)
	for _, h := range p.Seen {
		w.seen[h] = struct{}{}
	}
	return w
}

func (w *workState) remember(h uint64) {
	w.seen[h] = struct{}{}
	w.order = append(w.order, h)
	w.remembered = true
}

func (w *workState) open(e schemas.BrowserEvent, t time.Time) {
	s := openedBy(e, t)
	if w.st != nil {
		s.SessionOrdinal = w.st.SessionOrdinal + 1
		s.Returning = true
	}
	w.st, w.touched = &s, true
}

func (w *workState) join(e schemas.BrowserEvent, t time.Time) {
	s := w.st
	s.EventCount++
	if e.Name == "page_view" {
		s.PageViewCount++
	}
	if s.EntryURL == "" {
		s.EntryURL = e.URL
	}
	if !t.Before(s.LastEventAt) {
		s.LastEventAt = t
		if e.URL != "" {
			s.ExitURL = e.URL
		}
	}
	s.Returning = s.Returning || e.Returning
	w.touched = true
}

// version orders the rows a batch writes after every earlier row of the same session and browser:
// the last event's epoch milliseconds, or one more than the prior version when a late event did not
// move the last event (ReplacingMergeTree and argMax need a strictly larger version to see a change).
func (w *workState) version() uint64 {
	return max(uint64(w.st.LastEventAt.UnixMilli()), w.base+1)
}

func (w *workState) row() sessionRow {
	return sessionRow{SessionState: *w.st, Version: w.version()}
}

func (w *workState) state(seenCap int) *browserState {
	seen := w.order
	if len(seen) > seenCap {
		seen = append([]uint64(nil), seen[len(seen)-seenCap:]...)
	}
	return &browserState{SessionState: *w.st, Seen: seen, Version: w.version()}
}

// openedBy is the first state of a session anchored on e.
func openedBy(e schemas.BrowserEvent, t time.Time) schemas.SessionState {
	s := schemas.SessionState{SourceID: e.SourceID, WorkspaceID: e.WorkspaceID, AcquisitionID: e.AcquisitionID,
		SessionID: sessionID(e.SourceID, e.AcquisitionID, t.UnixMilli(), e.EventID), StartedAt: t, LastEventAt: t,
		EventCount: 1, EntryURL: e.URL, ExitURL: e.URL, Referrer: e.Referrer, Returning: e.Returning, SessionOrdinal: 1}
	if e.Name == "page_view" {
		s.PageViewCount = 1
	}
	return s
}
