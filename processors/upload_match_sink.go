package processors

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/schemas"
)

// clickLookupChunk acquisition IDs per lookup keep the bound list well under ClickHouse's
// max_query_size (256 KiB by default).
const clickLookupChunk = 1000

// UploadMatchConn is the part of a ClickHouse connection the matcher needs: it only reads.
type UploadMatchConn interface {
	Query(ctx context.Context, query string, args ...any) (driver.Rows, error)
}

var _ UploadMatchConn = (driver.Conn)(nil)

// LateClickWait bounds how long the matcher waits for browser events that have not landed yet.
//
// The server event and the browser events of its acquisition travel on different topics through
// different consumers (upload-match and sessionize), so a server event sent right after the visit
// can be matched before its click is in `acquisitions`. When an acquisition of the batch has no row
// at all and its event was received less than Grace ago, the lookup of those acquisitions is
// repeated up to Attempts times, Delay apart; then the jobs are produced with what was found. A
// batch thus waits at most Attempts×Delay, once, and only while the matcher keeps up with the
// topic. Attempts = 0 turns the wait off.
type LateClickWait struct {
	Grace    time.Duration
	Attempts int
	Delay    time.Duration
}

// DefaultLateClickWait waits up to 3 s for events received in the last 2 minutes: the sessionizer
// lands a browser batch within a second or two when it keeps up.
func DefaultLateClickWait() LateClickWait {
	return LateClickWait{Grace: 2 * time.Minute, Attempts: 3, Delay: time.Second}
}

// UploadMatchSink turns a batch of server events into upload jobs (rules in upload_match.go). Per
// batch it reads the mappings of the batch's workspaces (one query), the click evidence of the
// matched events' acquisitions, then produces every job and waits for the broker's
// acknowledgement before returning, so the loop commits the events only once their jobs are
// durable. A failure anywhere is transient: the loop retries the batch, and the retry produces
// jobs with the same row IDs, which the uploader files once.
type UploadMatchSink struct {
	Conn     UploadMatchConn
	Producer SyncProducer
	// Topic is the upload-jobs topic name, with the deployment's suffix.
	Topic   string
	Wait    LateClickWait
	Metrics *UploadMatchMetrics
	Log     *slog.Logger
	// Now is the clock the grace period is measured on (time.Now when nil).
	Now func() time.Time
}

// Write matches and produces one batch; see UploadMatchSink.
func (s *UploadMatchSink) Write(ctx context.Context, batch []schemas.ServerEvent) error {
	var candidates []schemas.ServerEvent
	skipped := map[string]int{}
	for _, e := range batch {
		if isUploadMilestone(e.Name) {
			candidates = append(candidates, e)
		} else {
			skipped[skipNotMilestone]++
		}
	}
	var index map[mappingKey][]string
	if len(candidates) > 0 {
		ms, err := s.mappings(ctx, candidates)
		if err != nil {
			return err
		}
		index = mappingIndex(ms)
	}
	var matched []schemas.ServerEvent
	for _, e := range candidates {
		if len(index[mappingKeyOf(e)]) == 0 {
			skipped[skipNoMapping]++
			continue
		}
		matched = append(matched, e)
	}
	clicks, err := s.clicksWithGrace(ctx, matched)
	if err != nil {
		return err
	}
	var jobs []schemas.UploadJob
	for _, e := range matched {
		jobs = append(jobs, uploadJobsOf(e, index[mappingKeyOf(e)], clicks[acqKey{e.SourceID, e.AcquisitionID}])...)
	}
	if err := s.produce(ctx, jobs); err != nil {
		return err
	}
	for reason, n := range skipped {
		s.Metrics.skipped.WithLabelValues(reason).Add(float64(n))
	}
	for _, j := range jobs {
		s.Metrics.jobs.WithLabelValues(clickLabel(j.ClickIDType)).Inc()
	}
	return nil
}

// mappings reads the enabled mappings of connected workspaces among the events' workspaces.
func (s *UploadMatchSink) mappings(ctx context.Context, events []schemas.ServerEvent) ([]uploadMapping, error) {
	wss := map[string]bool{}
	for _, e := range events {
		wss[e.WorkspaceID] = true
	}
	set := valueSet(wss)
	rows, err := s.Conn.Query(ctx, selectUploadMappings, set, set)
	if err != nil {
		return nil, fmt.Errorf("read ad mappings: %w", err)
	}
	defer rows.Close()
	var out []uploadMapping
	for rows.Next() {
		var m uploadMapping
		if err := rows.Scan(&m.Key.WorkspaceID, &m.MappingID, &m.Key.SourceID, &m.Key.Milestone); err != nil {
			return nil, fmt.Errorf("read ad mappings: %w", err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read ad mappings: %w", err)
	}
	return out, nil
}

// clicksWithGrace looks up the click evidence of the events' acquisitions, waiting briefly (Wait)
// for acquisitions of recently received events that have no row yet. Acquisitions absent from the
// result have no row.
func (s *UploadMatchSink) clicksWithGrace(ctx context.Context, events []schemas.ServerEvent) (map[acqKey]clickEvidence, error) {
	want := map[acqKey]string{} // acquisition → its workspace
	for _, e := range events {
		if e.AcquisitionID != "" {
			want[acqKey{e.SourceID, e.AcquisitionID}] = e.WorkspaceID
		}
	}
	found, err := s.clicks(ctx, want)
	if err != nil {
		return nil, err
	}
	for attempt := 0; attempt < s.Wait.Attempts; attempt++ {
		missing := s.youngMissing(events, found)
		if len(missing) == 0 {
			break
		}
		s.Metrics.lateClickWaits.Inc()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(s.Wait.Delay):
		}
		more, err := s.clicks(ctx, missing)
		if err != nil {
			return nil, err
		}
		maps.Copy(found, more)
	}
	if missing := s.youngMissing(events, found); len(missing) > 0 && s.Log != nil {
		s.Log.Debug("acquisitions still without browser events; jobs produced without click evidence", "acquisitions", len(missing))
	}
	return found, nil
}

// youngMissing are the acquisitions without a row whose event was received inside the grace period.
func (s *UploadMatchSink) youngMissing(events []schemas.ServerEvent, found map[acqKey]clickEvidence) map[acqKey]string {
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	cutoff := now().Add(-s.Wait.Grace)
	out := map[acqKey]string{}
	for _, e := range events {
		k := acqKey{e.SourceID, e.AcquisitionID}
		if _, ok := found[k]; ok || e.AcquisitionID == "" {
			continue
		}
		received := e.ReceivedAt
		if received.IsZero() {
			received = e.OccurredAt
		}
		if received.After(cutoff) {
			out[k] = e.WorkspaceID
		}
	}
	return out
}

// clicks reads the click evidence of the given acquisitions, in chunks.
func (s *UploadMatchSink) clicks(ctx context.Context, want map[acqKey]string) (map[acqKey]clickEvidence, error) {
	out := map[acqKey]clickEvidence{}
	keys := slices.SortedFunc(maps.Keys(want), func(a, b acqKey) int {
		return cmp.Or(cmp.Compare(a.SourceID, b.SourceID), cmp.Compare(a.AcquisitionID, b.AcquisitionID))
	})
	for start := 0; start < len(keys); start += clickLookupChunk {
		part := keys[start:min(start+clickLookupChunk, len(keys))]
		wss, srcs, acqs := map[string]bool{}, map[string]bool{}, map[string]bool{}
		for _, k := range part {
			wss[want[k]], srcs[k.SourceID], acqs[k.AcquisitionID] = true, true, true
		}
		if err := s.clickChunk(ctx, []any{valueSet(wss), valueSet(srcs), valueSet(acqs)}, want, out); err != nil {
			return nil, fmt.Errorf("read click evidence: %w", err)
		}
	}
	return out, nil
}

func (s *UploadMatchSink) clickChunk(ctx context.Context, args []any, want map[acqKey]string, out map[acqKey]clickEvidence) error {
	rows, err := s.Conn.Query(ctx, selectClickEvidence, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			k acqKey
			c clickEvidence
		)
		if err := rows.Scan(&k.SourceID, &k.AcquisitionID, &c.Gclid, &c.Gbraid, &c.Wbraid); err != nil {
			return err
		}
		if _, asked := want[k]; asked {
			out[k] = c
		}
	}
	return rows.Err()
}

// produce writes the jobs and waits until the broker acknowledged every one.
func (s *UploadMatchSink) produce(ctx context.Context, jobs []schemas.UploadJob) error {
	if len(jobs) == 0 {
		return nil
	}
	recs := make([]*kgo.Record, len(jobs))
	for i, j := range jobs {
		b, err := json.Marshal(j)
		if err != nil {
			return &RejectedError{Err: fmt.Errorf("encode upload job: %w", err)}
		}
		recs[i] = &kgo.Record{Topic: s.Topic, Key: uploadJobKey(j), Value: b}
	}
	if err := s.Producer.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return fmt.Errorf("produce upload jobs: %w", err)
	}
	return nil
}

// Reasons a server event yields no upload job, the values of the skipped metric's label.
const (
	skipNotMilestone = "not_milestone" // identified, canceled, churned, refunded
	skipNoMapping    = "no_mapping"    // no enabled mapping of a connected workspace
)

// UploadMatchMetrics counts what the matcher did.
type UploadMatchMetrics struct {
	jobs           *prometheus.CounterVec
	skipped        *prometheus.CounterVec
	lateClickWaits prometheus.Counter
}

// NewUploadMatchMetrics registers the matcher's metrics, labelled with the consumer name.
func NewUploadMatchMetrics(reg prometheus.Registerer, consumer string) *UploadMatchMetrics {
	r := prometheus.WrapRegistererWith(prometheus.Labels{"consumer": consumer}, reg)
	m := &UploadMatchMetrics{
		jobs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "revtrack_upload_match_jobs_total",
			Help: "Upload jobs produced, by whether the event's acquisition had click evidence (present or absent)."},
			[]string{"click_evidence"}),
		skipped: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "revtrack_upload_match_events_skipped_total",
			Help: "Server events that produced no upload job, by reason (not_milestone, no_mapping)."},
			[]string{"reason"}),
		lateClickWaits: prometheus.NewCounter(prometheus.CounterOpts{Name: "revtrack_upload_match_late_click_waits_total",
			Help: "Click lookups repeated because a recently received event's acquisition had no browser events yet."}),
	}
	r.MustRegister(m.jobs, m.skipped, m.lateClickWaits)
	return m
}

func clickLabel(kind string) string {
	if kind == "" {
		return "absent"
	}
	return "present"
}

// uploadMatchLoop builds the upload-match consumer: server events in, upload jobs out.
func uploadMatchLoop(cfg Config, d Deps, dlq *DeadLetterWriter, cl *kgo.Client, m *LoopMetrics, log *slog.Logger) runner {
	sink := &UploadMatchSink{Conn: d.ClickHouse, Producer: d.Producer, Topic: d.Kafka.Topic(schemas.TopicUploadJobs),
		Wait: DefaultLateClickWait(), Metrics: NewUploadMatchMetrics(d.Registry, "upload-match"), Log: log}
	return &Loop[schemas.ServerEvent]{Name: "upload-match", Consumer: cl, Decode: decodeUploadMatchEvent, Sink: sink,
		DeadLetters: dlq, Metrics: m, Log: log, MaxPoll: cfg.MaxPoll, Backoff: cfg.Backoff, MaxBackoff: cfg.MaxBackoff}
}
