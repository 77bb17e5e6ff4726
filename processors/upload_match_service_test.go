package processors

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas"
)

// The upload matcher on the real Kafka and ClickHouse. Mappings and connections are written with
// plain SQL, as the control plane writes them: one row per version of a ReplacingMergeTree.

func putAdConnection(t *testing.T, e env, ws, conn, state string, version uint64) {
	t.Helper()
	insertRows(t, e, `INSERT INTO ad_connections (connection_id, workspace_id, provider, state, version)`,
		[]any{conn, ws, "google", state, version})
}

type testMapping struct {
	ID, WS, Conn, Source, Milestone string
	Enabled                         bool
}

func putAdMapping(t *testing.T, e env, m testMapping, version uint64) {
	t.Helper()
	insertRows(t, e, `INSERT INTO ad_mappings (mapping_id, workspace_id, connection_id, source_id, milestone,
conversion_action_id, enabled, version)`, []any{m.ID, m.WS, m.Conn, m.Source, m.Milestone, "123456", boolByte(m.Enabled), version})
}

// landBrowser writes browser events straight into browser_events; acquisitions follows through
// its materialized view.
func landBrowser(t *testing.T, e env, evs ...schemas.BrowserEvent) {
	t.Helper()
	rows := make([][]any, len(evs))
	for i, ev := range evs {
		rows[i] = browserEventRow(ev)
	}
	insertRows(t, e, insertBrowserEvents, rows...)
}

func clickView(id, acq string, at time.Duration, ft schemas.FirstTouch) schemas.BrowserEvent {
	ev := pageView(id, acq, at, "/pricing")
	ev.FirstTouch = ft
	return ev
}

// readUploadJobs reads every record of the upload-jobs topic, up to its end offsets as they are
// when called.
func readUploadJobs(t *testing.T, e env) []*kgo.Record {
	t.Helper()
	return testenv.ReadToEnd(t, e.kc.Brokers, e.producer, e.kc.Topic(schemas.TopicUploadJobs))
}

// drained waits until the consumer's group committed to the end of the server-events topic: the
// matcher produces a batch's jobs before committing it, so every job is then in its topic.
func drained(t *testing.T, e env, consumer string) {
	t.Helper()
	group := "revtrack." + consumer + e.kc.TopicSuffix
	eventually(t, consumer+" committed to the end of its topic", func() bool {
		lag, err := kadm.NewClient(e.producer).Lag(testenv.Ctx(t), group)
		if err != nil {
			return false
		}
		l := lag[group]
		return l.Error() == nil && len(l.Lag) > 0 && l.Lag.Total() == 0
	})
}

func decodeJobs(t *testing.T, recs []*kgo.Record) []schemas.UploadJob {
	t.Helper()
	jobs := make([]schemas.UploadJob, len(recs))
	for i, r := range recs {
		if err := json.Unmarshal(r.Value, &jobs[i]); err != nil {
			t.Fatal(err)
		}
		if key := jobs[i].WorkspaceID + ":" + jobs[i].MappingID; string(r.Key) != key {
			t.Fatalf("job keyed %q, want %q", r.Key, key)
		}
	}
	return jobs
}

// TestUploadMatchProducesOneJobPerMappedMilestone runs the whole consumer: mapped milestones become
// one job per enabled mapping with the click evidence of their own acquisition, everything else
// produces nothing, a redelivered event produces identical jobs, and poison is dead-lettered.
func TestUploadMatchProducesOneJobPerMappedMilestone(t *testing.T) {
	e := setup(t)
	putAdConnection(t, e, "ws", "conn-1", "connected", 1)
	putAdConnection(t, e, "ws-off", "conn-off", "connected", 1)
	putAdConnection(t, e, "ws-off", "conn-off", "disconnected", 2)
	for _, m := range []testMapping{
		{"m-install", "ws", "conn-1", "src", "install", true},
		{"m-paid-a", "ws", "conn-1", "src", "paid", true},
		{"m-paid-b", "ws", "conn-1", "src", "paid", true},
		{"m-trial", "ws", "conn-1", "src", "trial_started", true},
		{"m-other-source", "ws", "conn-1", "src-2", "qualified", true},
		{"m-off", "ws-off", "conn-off", "src", "install", true},
	} {
		putAdMapping(t, e, m, 1)
	}
	putAdMapping(t, e, testMapping{"m-trial", "ws", "conn-1", "src", "trial_started", false}, 2) // disabled later
	landBrowser(t, e,
		clickView("b-g", "acq-g", 0, schemas.FirstTouch{Gclid: "gclid-1", Gbraid: "gbraid-ignored"}),
		clickView("b-b", "acq-b", 0, schemas.FirstTouch{Gbraid: "gbraid-1"}),
		clickView("b-w", "acq-w", 0, schemas.FirstTouch{Wbraid: "wbraid-1"}),
		clickView("b-n", "acq-n", 0, schemas.FirstTouch{UTMSource: "news"}),
	)

	paid := serverEvent("paid-b", "paid", "acq-b", "shop.example", time.Hour)
	paid.AmountCents, paid.Currency = cents(4900), "USD"
	off := serverEvent("off-1", "install", "acq-g", "", 0)
	off.WorkspaceID = "ws-off"
	qualified := serverEvent("qual-g", "qualified", "acq-g", "", 0) // mapped for another source only
	e.produceServer(t,
		serverEvent("install-g", "install", "acq-g", "shop.example", 0),
		serverEvent("install-n", "install", "acq-n", "", time.Minute),
		serverEvent("install-none", "install", "", "shop.example", 2*time.Minute),
		serverEvent("install-w", "install", "acq-w", "", 3*time.Minute),
		serverEvent("install-unseen", "install", "acq-unseen", "", 4*time.Minute), // no browser events at all
		serverEvent("id-g", "identified", "acq-g", "shop.example", 0),
		serverEvent("trial-g", "trial_started", "acq-g", "", 0),
		serverEvent("conv-g", "trial_converted", "acq-g", "", 0),
		serverEvent("churn-g", "churned", "acq-g", "", 0),
		qualified, off, paid, paid, // paid twice: a redelivery
	)
	e.produce(t, schemas.TopicServerEvents, "src:", []byte(`{"eventId":`))
	e.produce(t, schemas.TopicServerEvents, "src:", []byte(`{"eventId":"x","name":"bought"}`))

	stop := startService(t, e)
	defer stop()
	drained(t, e, "upload-match")
	jobs := decodeJobs(t, readUploadJobs(t, e))

	distinct := map[string]schemas.UploadJob{}
	for _, j := range jobs {
		if prev, ok := distinct[j.RowID]; ok && !jobsEqual(prev, j) {
			t.Fatalf("a redelivered event changed its job\n%+v\n%+v", prev, j)
		}
		distinct[j.RowID] = j
	}
	if len(jobs) != 9 || len(distinct) != 7 {
		t.Fatalf("%d jobs, %d distinct rows; want 9 and 7: %+v", len(jobs), len(distinct), jobs)
	}
	byEvent := map[string][]schemas.UploadJob{}
	for _, j := range distinct {
		byEvent[j.MappingID+"/"+j.EventIDHash] = append(byEvent[j.MappingID+"/"+j.EventIDHash], j)
	}
	clickOf := func(mapping, event string) string {
		js := byEvent[mapping+"/"+schemas.EventIDHash("src", event)]
		if len(js) != 1 {
			t.Fatalf("%s of %s: %d jobs", mapping, event, len(js))
		}
		return js[0].ClickIDType + ":" + js[0].ClickID
	}
	for _, c := range [][3]string{
		{"m-install", "install-g", "gclid:gclid-1"}, {"m-install", "install-n", ":"}, {"m-install", "install-none", ":"},
		{"m-install", "install-w", "wbraid:wbraid-1"}, {"m-install", "install-unseen", ":"},
		{"m-paid-a", "paid-b", "gbraid:gbraid-1"}, {"m-paid-b", "paid-b", "gbraid:gbraid-1"},
	} {
		if got := clickOf(c[0], c[1]); got != c[2] {
			t.Errorf("%s of %s has click %s, want %s", c[0], c[1], got, c[2])
		}
	}

	// The job bodies are the contract with the uploader.
	sorted := slices.SortedFunc(func(yield func(schemas.UploadJob) bool) {
		for _, j := range distinct {
			if !yield(j) {
				return
			}
		}
	}, func(a, b schemas.UploadJob) int { return strings.Compare(a.MappingID+a.RowID, b.MappingID+b.RowID) })
	body, err := json.MarshalIndent(sorted, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	testenv.Golden(t, "testdata/upload_match_jobs.golden.json", append(body, '\n'))

	assertPoisonAndDrained(t, e, "upload-match")
}

func jobsEqual(a, b schemas.UploadJob) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// TestUploadMatchWaitsBrieflyForLateClicks: an event received just now whose acquisition has no
// browser events yet waits (bounded) for them; an old one does not wait; an acquisition that never
// lands costs the batch at most Attempts×Delay and yields a job without click evidence.
func TestUploadMatchWaitsBrieflyForLateClicks(t *testing.T) {
	e := setup(t)
	putAdConnection(t, e, "ws", "conn-1", "connected", 1)
	putAdMapping(t, e, testMapping{"m-install", "ws", "conn-1", "src", "install", true}, 1)
	reg := prometheus.NewRegistry()
	m := NewUploadMatchMetrics(reg, "upload-match")
	sink := &UploadMatchSink{Conn: e.ch, Producer: e.producer, Topic: e.kc.Topic(schemas.TopicUploadJobs),
		Wait: LateClickWait{Grace: time.Minute, Attempts: 50, Delay: 100 * time.Millisecond}, Metrics: m, Log: quiet}
	ctx := testenv.Ctx(t)
	now := time.Now().UTC()
	recent := func(id, name, acq string) schemas.ServerEvent {
		ev := serverEvent(id, name, acq, "", 0)
		ev.OccurredAt, ev.ReceivedAt = now.Add(-time.Second), now
		return ev
	}

	// The browser event lands while the matcher waits.
	landed := make(chan error, 1)
	go func() {
		time.Sleep(400 * time.Millisecond)
		b, err := e.ch.PrepareBatch(ctx, insertBrowserEvents)
		if err == nil {
			err = b.Append(browserEventRow(clickView("b-late", "acq-late", 0, schemas.FirstTouch{Gclid: "gclid-late"}))...)
		}
		if err == nil {
			err = b.Send()
		}
		landed <- err
	}()
	if err := sink.Write(ctx, []schemas.ServerEvent{recent("late", "install", "acq-late")}); err != nil {
		t.Fatal(err)
	}
	if err := <-landed; err != nil {
		t.Fatal(err)
	}
	if waits := counter(t, reg, "revtrack_upload_match_late_click_waits_total"); waits < 1 {
		t.Fatalf("%v waits", waits)
	}

	// Never lands: bounded by Attempts×Delay.
	sink.Wait.Attempts = 3
	before := counter(t, reg, "revtrack_upload_match_late_click_waits_total")
	start := time.Now()
	old := serverEvent("old", "install", "acq-old", "", 0) // received yesterday: never waits
	if err := sink.Write(ctx, []schemas.ServerEvent{recent("never", "install", "acq-never"), old,
		recent("id", "identified", "acq-never"), recent("conv", "trial_converted", "acq-never")}); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("a batch waited %s for an acquisition that never landed", took)
	}
	if waits := counter(t, reg, "revtrack_upload_match_late_click_waits_total") - before; waits != 3 {
		t.Fatalf("%v waits, want 3", waits)
	}
	if err := sink.Write(ctx, []schemas.ServerEvent{old}); err != nil {
		t.Fatal(err)
	}
	if waits := counter(t, reg, "revtrack_upload_match_late_click_waits_total") - before; waits != 3 {
		t.Fatalf("an old event waited (%v waits)", waits)
	}

	clicks := map[string]string{}
	for _, j := range decodeJobs(t, readUploadJobs(t, e)) {
		clicks[j.EventIDHash] = j.ClickIDType + ":" + j.ClickID
	}
	want := map[string]string{
		schemas.EventIDHash("src", "late"): "gclid:gclid-late", schemas.EventIDHash("src", "never"): ":",
		schemas.EventIDHash("src", "old"): ":",
	}
	if len(clicks) != len(want) {
		t.Fatalf("jobs by event %v", clicks)
	}
	for k, v := range want {
		if clicks[k] != v {
			t.Errorf("job of %s has click %q, want %q", k, clicks[k], v)
		}
	}
	for label, n := range map[string]float64{"present": 1, "absent": 3} {
		if got := labelledCounter(t, reg, "revtrack_upload_match_jobs_total", label); got != n {
			t.Errorf("jobs with click evidence %s: %v, want %v", label, got, n)
		}
	}
	for reason, n := range map[string]float64{skipNotMilestone: 1, skipNoMapping: 1} {
		if got := labelledCounter(t, reg, "revtrack_upload_match_events_skipped_total", reason); got != n {
			t.Errorf("skipped %s: %v, want %v", reason, got, n)
		}
	}
}

// labelledCounter reads the counter of name whose labels include value (0 if none was counted).
func labelledCounter(t *testing.T, reg *prometheus.Registry, name, value string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetValue() == value {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}
