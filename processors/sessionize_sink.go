package processors

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/schemas"
)

// SessionConn is the part of a ClickHouse connection the sessionizer needs: it reads state back.
type SessionConn interface {
	BatchConn
	Query(ctx context.Context, query string, args ...any) (driver.Rows, error)
}

var _ SessionConn = (driver.Conn)(nil)

// Bounds of the sessionizer's memory and lookups.
const (
	// defaultSeenPerBrowser event-ID hashes are kept per browser. Duplicates are recognised within
	// that window: client retries (seconds later) and redelivery of the last, unacknowledged batch,
	// as long as one browser has no more events than this in a batch; New raises it to the poll size.
	defaultSeenPerBrowser = 10_000
	// cacheMaxBrowsers and cacheMaxHashes bound the state held in memory (about 64 MiB of hashes).
	cacheMaxBrowsers = 100_000
	cacheMaxHashes   = 8_000_000
	// stateLookupChunk browsers per lookup keep the bound IN list well under ClickHouse's
	// max_query_size (256 KiB): a 5,000-record batch of new browsers costs at most 5 queries.
	stateLookupChunk = 1000
)

// SessionSink is the sessionize consumer's sink. Per polled batch it assigns every browser event a
// server-side session (rules in sessionize.go), then inserts, in this order, the events into
// browser_events (the client's sessionId replaced by the server's), the touched sessions into
// sessions, and each touched browser's state into session_state. All three tables are
// ReplacingMergeTree, so writing a batch again is harmless.
//
// State store: ClickHouse's session_state, not the compacted revtrack.session-state.v1 topic (which
// stays unused). The state row is written last and carries the counts together with the seen event
// IDs, and offsets are committed only after Write returns, so whoever reads the partition next
// (this process after a restart, or another member after a rebalance) resumes from what was
// written: records redelivered after a crash are recognised as duplicates if their state was
// written, and recomputed to the same rows if it was not.
//
// Memory: the committed state of recently active browsers is cached (LRU, bounded in browsers and
// hashes); a miss costs one batched lookup. When a partition is assigned (again) to this consumer,
// its browsers are dropped from the cache: another member may have advanced them meanwhile.
// Browsers of revoked partitions are not dropped at revoke time (the revoke hook belongs to
// kafkax.NewConsumer, which commits there); they age out of the LRU.
//
// Retries and bisection: Write computes on copies and commits to the cache only after all three
// inserts succeeded, so calling it again with the same batch or with halves of it applies each
// event once.
type SessionSink struct {
	conn    SessionConn
	metrics *SessionMetrics
	seenCap int

	events   *TableSink[schemas.BrowserEvent]
	sessions *TableSink[sessionRow]
	states   *TableSink[stateRow]

	mu    sync.Mutex // guards cache and epoch against the rebalance callback
	cache *stateCache
	// epoch changes on every assignment; a batch that straddles one does not cache its result,
	// because what it loaded may predate another member's writes.
	epoch uint64
}

// NewSessionSink returns the sink; seenPerBrowser below the default is raised to it.
func NewSessionSink(conn SessionConn, m *SessionMetrics, seenPerBrowser int) *SessionSink {
	return &SessionSink{
		conn: conn, metrics: m, seenCap: max(seenPerBrowser, defaultSeenPerBrowser),
		events:   &TableSink[schemas.BrowserEvent]{Conn: conn, Insert: insertBrowserEvents, Row: browserEventRow},
		sessions: &TableSink[sessionRow]{Conn: conn, Insert: insertSessions, Row: sessionRowValues},
		states:   &TableSink[stateRow]{Conn: conn, Insert: insertSessionState, Row: stateRowValues},
		cache:    newStateCache(cacheMaxBrowsers, cacheMaxHashes),
	}
}

// ConsumerOpts are the options the sessionize consumer client needs: the assignment hook.
func (s *SessionSink) ConsumerOpts() []kgo.Opt {
	return []kgo.Opt{kgo.OnPartitionsAssigned(s.partitionsAssigned)}
}

func (s *SessionSink) partitionsAssigned(_ context.Context, _ *kgo.Client, assigned map[string][]int32) {
	ps := map[int32]bool{}
	for _, parts := range assigned { // one topic per consumer
		for _, p := range parts {
			ps[p] = true
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.epoch++
	s.cache.dropPartitions(ps)
	s.metrics.cached.Set(float64(s.cache.len()))
}

// Write sessionizes and lands one batch; see SessionSink.
func (s *SessionSink) Write(ctx context.Context, batch []sessionEvent) error {
	s.mu.Lock()
	epoch := s.epoch
	known := map[browserKey]*browserState{}
	var missing []browserKey
	for _, e := range batch {
		k := browserKey{e.SourceID, e.AcquisitionID}
		if _, seen := known[k]; seen {
			continue
		}
		st, ok := s.cache.get(k)
		known[k] = st
		if !ok {
			missing = append(missing, k)
		}
	}
	s.mu.Unlock()

	loaded, err := s.load(ctx, missing)
	if err != nil {
		return err
	}
	for k, st := range loaded {
		known[k] = st
	}
	res := sessionize(func(k browserKey) *browserState { return known[k] }, batch, s.seenCap)

	states := make([]stateRow, 0, len(res.States))
	for k, st := range res.States {
		states = append(states, stateRow{k, st})
	}
	for _, w := range []func() error{
		func() error { return writeIfAny(ctx, s.events, res.Events) },
		func() error { return writeIfAny(ctx, s.sessions, res.Sessions) },
		func() error { return writeIfAny(ctx, s.states, states) },
	} {
		if err := w(); err != nil {
			return err
		}
	}

	s.mu.Lock()
	if s.epoch == epoch {
		for k, st := range known {
			if next := res.States[k]; next != nil {
				st = next
			}
			if st != nil {
				s.cache.put(k, res.Partitions[k], st)
			}
		}
	}
	s.metrics.cached.Set(float64(s.cache.len()))
	s.mu.Unlock()
	s.metrics.stateLookups.Add(float64(len(missing)))
	s.metrics.started.Add(float64(res.Started))
	s.metrics.sessionized.Add(float64(len(res.Events)))
	s.metrics.duplicates.Add(float64(res.Duplicates))
	s.metrics.late.Add(float64(res.Late))
	return nil
}

func writeIfAny[T any](ctx context.Context, sink *TableSink[T], rows []T) error {
	if len(rows) == 0 {
		return nil
	}
	return sink.Write(ctx, rows)
}

// load reads the latest committed state of the given browsers. Failures are transient: the loop
// retries the batch.
func (s *SessionSink) load(ctx context.Context, keys []browserKey) (map[browserKey]*browserState, error) {
	out := map[browserKey]*browserState{}
	for start := 0; start < len(keys); start += stateLookupChunk {
		part := keys[start:min(start+stateLookupChunk, len(keys))]
		set := make([]clickhouse.GroupSet, len(part))
		for i, k := range part {
			set[i] = clickhouse.GroupSet{Value: []any{k.SourceID, k.AcquisitionID}}
		}
		if err := s.loadChunk(ctx, set, out); err != nil {
			return nil, fmt.Errorf("load session state: %w", err)
		}
	}
	return out, nil
}

func (s *SessionSink) loadChunk(ctx context.Context, set []clickhouse.GroupSet, out map[browserKey]*browserState) error {
	rows, err := s.conn.Query(ctx, selectSessionStates, set)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			st                browserState
			started, last     time.Time
			startMs, lastMs   uint16
			returning         uint8
			sourceID, acqID   string
			eventCount, views uint32
		)
		if err := rows.Scan(&sourceID, &acqID, &st.WorkspaceID, &st.SessionID, &started, &startMs, &last, &lastMs,
			&eventCount, &views, &st.EntryURL, &st.ExitURL, &st.Referrer, &returning, &st.SessionOrdinal,
			&st.Seen, &st.Version); err != nil {
			return err
		}
		st.SourceID, st.AcquisitionID = sourceID, acqID
		st.StartedAt = started.UTC().Add(time.Duration(startMs) * time.Millisecond)
		st.LastEventAt = last.UTC().Add(time.Duration(lastMs) * time.Millisecond)
		st.EventCount, st.PageViewCount, st.Returning = eventCount, views, returning == 1
		out[browserKey{sourceID, acqID}] = &st
	}
	return rows.Err()
}

// stateRow is one row of session_state.
type stateRow struct {
	key browserKey
	st  *browserState
}

func sessionRowValues(r sessionRow) []any {
	started, _ := utc(r.StartedAt)
	last, _ := utc(r.LastEventAt)
	return []any{r.SessionID, r.SourceID, r.WorkspaceID, r.AcquisitionID, started, last, r.EventCount,
		r.PageViewCount, r.EntryURL, r.ExitURL, r.Referrer, boolByte(r.Returning), r.Version}
}

func stateRowValues(r stateRow) []any {
	st := r.st
	started, startMs := utc(st.StartedAt)
	last, lastMs := utc(st.LastEventAt)
	seen := st.Seen
	if seen == nil {
		seen = []uint64{}
	}
	return []any{r.key.SourceID, r.key.AcquisitionID, st.WorkspaceID, st.SessionID, started, startMs, last, lastMs,
		st.EventCount, st.PageViewCount, st.EntryURL, st.ExitURL, st.Referrer, boolByte(st.Returning),
		st.SessionOrdinal, seen, st.Version}
}
