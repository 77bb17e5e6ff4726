package processors

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/revtrack/revtrack/internal/kafkax"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas"
)

// The sessionize consumer on the real Kafka and ClickHouse.

var s0 = time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)

func pageView(id, acq string, at time.Duration, url string) schemas.BrowserEvent {
	ts := s0.Add(at)
	return schemas.BrowserEvent{EventID: id, SourceID: "src", WorkspaceID: "ws", AppID: "app", AcquisitionID: acq,
		SessionID: "client-" + id, Name: "page_view", OccurredAt: ts, ReceivedAt: ts.Add(time.Second), URL: url,
		Referrer: "https://search.example/", FirstTouch: schemas.FirstTouch{UTMSource: "news"}}
}

func (e env) produceBrowser(t *testing.T, evs ...schemas.BrowserEvent) {
	t.Helper()
	for _, ev := range evs {
		e.produce(t, schemas.TopicBrowserEvents, ev.SourceID+":"+ev.AcquisitionID, mustJSON(t, ev))
	}
}

type sessionRecord struct {
	ID, Acquisition, Entry, Exit, Referrer string
	Started, Last                          time.Time
	Events, PageViews                      uint32
	Returning                              uint8
}

// storedSessions reads the sessions table as readers do (FINAL), oldest first per browser.
func storedSessions(t *testing.T, e env) []sessionRecord {
	t.Helper()
	rows, err := e.ch.Query(testenv.Ctx(t), `SELECT session_id, acquisition_id, entry_url, exit_url, referrer, started_at,
last_event_at, event_count, page_view_count, returning FROM sessions FINAL ORDER BY acquisition_id, started_at`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []sessionRecord
	for rows.Next() {
		var s sessionRecord
		if err := rows.Scan(&s.ID, &s.Acquisition, &s.Entry, &s.Exit, &s.Referrer, &s.Started, &s.Last, &s.Events,
			&s.PageViews, &s.Returning); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// eventSessions maps each landed event ID to its session ID.
func eventSessions(t *testing.T, e env) map[string]string {
	t.Helper()
	rows, err := e.ch.Query(testenv.Ctx(t), "SELECT event_id, session_id FROM browser_events FINAL")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var ev, s string
		if err := rows.Scan(&ev, &s); err != nil {
			t.Fatal(err)
		}
		out[ev] = s
	}
	return out
}

func totalEvents(sessions []sessionRecord) (n uint32) {
	for _, s := range sessions {
		n += s.Events
	}
	return n
}

// TestSessionizeSplitsCountsAndDeadLetters: a 31-minute gap starts a second, returning session; a
// 29-minute gap does not; a duplicate counts once; poison records are dead-lettered.
func TestSessionizeSplitsCountsAndDeadLetters(t *testing.T) {
	e := setup(t)
	signup := pageView("a4", "acq-a", 40*time.Minute, "https://app.example/docs/start")
	signup.Name = "signup_click"
	e.produceBrowser(t,
		pageView("a1", "acq-a", 0, "https://app.example/"),
		pageView("b1", "acq-b", 0, "https://app.example/b"),
		pageView("a2", "acq-a", 5*time.Minute, "https://app.example/pricing"),
		pageView("a3", "acq-a", 36*time.Minute, "https://app.example/docs"), // 31 minutes after a2
		signup,
		pageView("b2", "acq-b", 29*time.Minute, "https://app.example/b/pricing"), // 29 minutes after b1
		pageView("b2", "acq-b", 29*time.Minute, "https://app.example/b/pricing"), // client retry
	)
	e.produce(t, schemas.TopicBrowserEvents, "src:acq-c", []byte(`{"eventId":`)) // not JSON
	tooOld := pageView("c1", "acq-c", 0, "/")
	tooOld.OccurredAt = time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC) // DateTime cannot hold it
	e.produceBrowser(t, tooOld)

	stop := startService(t, e)
	defer stop()
	var got []sessionRecord
	eventually(t, "six events in three sessions", func() bool {
		got = storedSessions(t, e)
		return len(got) == 3 && totalEvents(got) == 6
	})
	a1, a3, b1 := got[0], got[1], got[2]
	if a1.ID != sessionID("src", "acq-a", s0.UnixMilli(), "a1") || a3.ID != sessionID("src", "acq-a", s0.Add(36*time.Minute).UnixMilli(), "a3") ||
		b1.ID != sessionID("src", "acq-b", s0.UnixMilli(), "b1") {
		t.Fatalf("session IDs %s %s %s", a1.ID, a3.ID, b1.ID)
	}
	if a1.Events != 2 || a1.PageViews != 2 || a1.Entry != "https://app.example/" || a1.Exit != "https://app.example/pricing" ||
		a1.Returning != 0 || !a1.Started.Equal(s0) || !a1.Last.Equal(s0.Add(5*time.Minute)) || a1.Referrer != "https://search.example/" {
		t.Fatalf("first session of a: %+v", a1)
	}
	if a3.Events != 2 || a3.PageViews != 1 || a3.Entry != "https://app.example/docs" || a3.Exit != "https://app.example/docs/start" ||
		a3.Returning != 1 {
		t.Fatalf("second session of a: %+v", a3)
	}
	if b1.Events != 2 || b1.PageViews != 2 || b1.Returning != 0 || b1.Exit != "https://app.example/b/pricing" {
		t.Fatalf("session of b: %+v", b1)
	}
	want := map[string]string{"a1": a1.ID, "a2": a1.ID, "a3": a3.ID, "a4": a3.ID, "b1": b1.ID, "b2": b1.ID}
	if got := eventSessions(t, e); !reflect.DeepEqual(got, want) {
		t.Fatalf("events landed with sessions %v, want %v (the client's session IDs are replaced)", got, want)
	}

	assertPoisonAndDrained(t, e, "sessionize")
}

// TestSessionizeResumesAfterRestart stops the consumer between two batches: the new process has
// nothing in memory, loads the state from ClickHouse, and the session continues with the same ID;
// a retry of an event from before the restart is still recognised.
func TestSessionizeResumesAfterRestart(t *testing.T) {
	e := setup(t)
	e.produceBrowser(t, pageView("r1", "acq", 0, "/1"), pageView("r2", "acq", 10*time.Minute, "/2"))
	stop := startService(t, e)
	eventually(t, "the first batch", func() bool { s := storedSessions(t, e); return len(s) == 1 && s[0].Events == 2 })
	stop()
	first := storedSessions(t, e)[0]

	e.produceBrowser(t,
		pageView("r2", "acq", 10*time.Minute, "/2"), // retried by the client after the restart
		pageView("r3", "acq", 35*time.Minute, "/3"), // 25 minutes later: same session
		pageView("r4", "acq", 70*time.Minute, "/4"), // 35 minutes later: a new, returning session
	)
	stop = startService(t, e)
	defer stop()
	var got []sessionRecord
	eventually(t, "the second batch", func() bool { got = storedSessions(t, e); return len(got) == 2 && totalEvents(got) == 4 })
	if got[0].ID != first.ID || got[0].Events != 3 || got[0].Exit != "/3" || got[1].Events != 1 || got[1].Returning != 1 {
		t.Fatalf("sessions after restart %+v (first was %s)", got, first.ID)
	}
}

// TestSessionizeReplayIsDeterministic processes the same events in two fresh databases, once as
// one backlog and once as they trickle in (other batch boundaries): every event gets the same
// session and every session the same row.
func TestSessionizeReplayIsDeterministic(t *testing.T) {
	var evs []schemas.BrowserEvent
	for i, at := range []time.Duration{0, 4, 40, 41, 39, 100, 60, 101, 135} {
		for _, acq := range []string{"x", "y"} {
			evs = append(evs, pageView(acq+string(rune('0'+i)), acq, at*time.Minute, "/"+acq))
		}
	}
	backlog := setup(t)
	backlog.produceBrowser(t, evs...)
	stop := startService(t, backlog)
	// Events and their sessions land in separate inserts of one batch: wait for both.
	eventually(t, "the backlog", func() bool {
		return len(eventSessions(t, backlog)) == len(evs) && int(totalEvents(storedSessions(t, backlog))) == len(evs)
	})
	stop()

	trickle := setup(t)
	stop = startService(t, trickle)
	for i, ev := range evs {
		trickle.produceBrowser(t, ev)
		eventually(t, "the event", func() bool {
			return len(eventSessions(t, trickle)) == i+1 && int(totalEvents(storedSessions(t, trickle))) == i+1
		})
	}
	stop()

	if a, b := eventSessions(t, backlog), eventSessions(t, trickle); !reflect.DeepEqual(a, b) {
		t.Fatalf("replay assigned other sessions:\n%v\n%v", a, b)
	}
	if a, b := storedSessions(t, backlog), storedSessions(t, trickle); !reflect.DeepEqual(a, b) {
		t.Fatalf("replay wrote other sessions:\n%+v\n%+v", a, b)
	}
}

// faultyConn passes everything to the real ClickHouse, except that it fails the Send of the next
// insert into a chosen table (after or before really sending it), and refuses to append a chosen
// event: the failures the loop retries and bisects.
type faultyConn struct {
	SessionConn
	mu         sync.Mutex
	failTable  string // "INSERT INTO <table> (" prefix whose next Send fails
	afterWrite bool   // fail after the rows reached the server
	poison     string // event ID whose browser_events row is refused
}

func (c *faultyConn) PrepareBatch(ctx context.Context, q string, opts ...driver.PrepareBatchOption) (driver.Batch, error) {
	b, err := c.SessionConn.PrepareBatch(ctx, q, opts...)
	if err != nil {
		return nil, err
	}
	return &faultyBatch{Batch: b, conn: c, query: q}, nil
}

func (c *faultyConn) failNext(table string, afterWrite bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failTable, c.afterWrite = "INSERT INTO "+table+" (", afterWrite
}

type faultyBatch struct {
	driver.Batch
	conn  *faultyConn
	query string
}

func (b *faultyBatch) Append(v ...any) error {
	if b.conn.poison != "" && len(v) > 0 && v[0] == b.conn.poison && b.query == insertBrowserEvents {
		return errors.New("refused")
	}
	return b.Batch.Append(v...)
}

func (b *faultyBatch) Send() error {
	b.conn.mu.Lock()
	fail := b.conn.failTable != "" && len(b.query) >= len(b.conn.failTable) && b.query[:len(b.conn.failTable)] == b.conn.failTable
	after := b.conn.afterWrite
	if fail {
		b.conn.failTable = ""
	}
	b.conn.mu.Unlock()
	if !fail {
		return b.Batch.Send()
	}
	if after {
		if err := b.Batch.Send(); err != nil {
			return err
		}
	} else {
		_ = b.Batch.Abort()
	}
	return errors.New("read: connection reset by peer")
}

func asBatch(evs ...schemas.BrowserEvent) []sessionEvent {
	out := make([]sessionEvent, len(evs))
	for i, ev := range evs {
		out[i] = sessionEvent{BrowserEvent: ev}
	}
	return out
}

// TestSessionSinkRetriesApplyEachEventOnce calls Write again after transient failures at each step,
// including failures after the rows reached ClickHouse, and after a "crash" (a new sink with no
// memory) with the same batch redelivered: the counts never double.
func TestSessionSinkRetriesApplyEachEventOnce(t *testing.T) {
	e := setup(t)
	ctx := testenv.Ctx(t)
	conn := &faultyConn{SessionConn: e.ch}
	reg := prometheus.NewRegistry()
	sink := NewSessionSink(conn, NewSessionMetrics(reg, "sink-test"), 0)
	count := func() uint32 { return totalEvents(storedSessions(t, e)) }

	first := asBatch(pageView("x1", "acq", 0, "/1"), pageView("x2", "acq", time.Minute, "/2"))
	conn.failNext("session_state", true) // everything written, but the client saw an error
	if err := sink.Write(ctx, first); err == nil {
		t.Fatal("injected failure not returned")
	}
	if err := sink.Write(ctx, first); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 2 {
		t.Fatalf("%d events counted after a retried batch, want 2", n)
	}

	second := asBatch(pageView("x3", "acq", 2*time.Minute, "/3"))
	for _, table := range []string{"browser_events", "sessions", "session_state"} {
		conn.failNext(table, table == "sessions")
		if err := sink.Write(ctx, second); err == nil {
			t.Fatalf("injected failure on %s not returned", table)
		}
	}
	if err := sink.Write(ctx, second); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 3 {
		t.Fatalf("%d events counted, want 3", n)
	}
	// Metrics move only on a successful Write: the first batch's rows reached ClickHouse on the
	// attempt that "failed", so its retry found both events already counted.
	sessionized, duplicates := counter(t, reg, "revtrack_sessionizer_events_sessionized_total"), counter(t, reg, "revtrack_sessionizer_duplicate_events_total")
	if sessionized != 1 || duplicates != 2 || counter(t, reg, "revtrack_sessionizer_sessions_started_total") != 0 {
		t.Fatalf("metrics: %v sessionized, %v duplicates", sessionized, duplicates)
	}

	reg = prometheus.NewRegistry()
	restarted := NewSessionSink(e.ch, NewSessionMetrics(reg, "sink-test"), 0)
	if err := restarted.Write(ctx, second); err != nil { // redelivered: its offsets were not committed
		t.Fatal(err)
	}
	if err := restarted.Write(ctx, asBatch(pageView("x4", "acq", 3*time.Minute, "/4"))); err != nil {
		t.Fatal(err)
	}
	got := storedSessions(t, e)
	if d := counter(t, reg, "revtrack_sessionizer_duplicate_events_total"); len(got) != 1 || got[0].Events != 4 || got[0].Exit != "/4" || d != 1 {
		t.Fatalf("after restart: %+v, %v duplicates", got, d)
	}
}

// counter reads a counter's value from a registry.
func counter(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// TestSessionizeIsolatesRefusedEvent runs the loop on the real broker with a sink whose store refuses
// one event: the loop bisects, the event is dead-lettered alone, and the halves written around it
// apply every other event exactly once.
func TestSessionizeIsolatesRefusedEvent(t *testing.T) {
	e := setup(t)
	e.produceBrowser(t, pageView("p1", "acq", 0, "/1"), pageView("p2", "acq", time.Minute, "/2"),
		pageView("poison", "acq", 2*time.Minute, "/x"), pageView("p3", "acq", 3*time.Minute, "/3"),
		pageView("q1", "other", 0, "/q"))
	sink := NewSessionSink(&faultyConn{SessionConn: e.ch, poison: "poison"}, NewSessionMetrics(prometheus.NewRegistry(), "refuse"), 0)
	cl, err := kafkax.NewConsumer(e.kc, "refuse", "refuse"+e.kc.TopicSuffix, []string{e.kc.Topic(schemas.TopicBrowserEvents)}, nil, sink.ConsumerOpts()...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	loop := &Loop[sessionEvent]{Name: "refuse", Consumer: cl, Decode: decodeSessionEvent, Sink: sink,
		DeadLetters: &DeadLetterWriter{Producer: e.producer, Topic: e.kc.Topic(schemas.TopicDeadLetters)},
		Metrics:     NewLoopMetrics(prometheus.NewRegistry(), "refuse"), Log: quiet, MaxPoll: 100,
		Backoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- loop.Run(ctx) }()

	dead := readDeadLetterRecords(t, e, "refuse", 1)
	if dead[0].Reason != ReasonSinkRejected || dead[0].Offset != 2 {
		t.Fatalf("dead letter %+v", dead[0])
	}
	var got []sessionRecord
	eventually(t, "four events in two sessions", func() bool { got = storedSessions(t, e); return len(got) == 2 && totalEvents(got) == 4 })
	if got[0].ID != sessionID("src", "acq", s0.UnixMilli(), "p1") || got[0].Events != 3 || got[0].Exit != "/3" {
		t.Fatalf("sessions %+v", got)
	}
	if evs := eventSessions(t, e); len(evs) != 4 || evs["poison"] != "" {
		t.Fatalf("landed %v", evs)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
