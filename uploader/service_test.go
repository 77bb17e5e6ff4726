package uploader_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/goleak"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/devtools/googlefake"
	"github.com/revtrack/revtrack/internal/kafkax"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/internal/testenv/pipeline"
	"github.com/revtrack/revtrack/schemas"
	"github.com/revtrack/revtrack/uploader"
)

// The uploader starts a goroutine per loop; every one must end when its context does. (The one
// TestMain of the package's tests.)
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// uploadEnv is a connected workspace (setupEnv: real control plane, the fake Google), the Kafka
// topics, and the uploader service under a clock the test can move forward.
type uploadEnv struct {
	*setupEnv
	kc       kafkax.Config
	producer *kgo.Client
	m        controlplane.AdMapping
	ucfg     uploader.Config
	offset   atomic.Int64
	rows     *uploader.Rows
	registry *prometheus.Registry
}

// newUploadEnv connects the workspace through the fake's manager account and maps "paid" to the
// fake's default action (Validation only on, as a new mapping is).
func newUploadEnv(t *testing.T, fakeCfg googlefake.Config, tune func(*uploader.Config)) *uploadEnv {
	t.Helper()
	e := &uploadEnv{setupEnv: newSetupEnv(t, fakeCfg, nil), registry: prometheus.NewRegistry()}
	e.ready()
	e.m = e.mapping("paid", googlefake.DefaultActionID)
	e.kc, e.producer = pipeline.Topics(t)
	cfg := uploader.DefaultConfig()
	cfg.ConnectConfig = e.cfg
	cfg.DispatchInterval = 100 * time.Millisecond
	cfg.DiagnosticsDelay = time.Minute
	cfg.RetryMax = 2 * time.Second
	cfg.QuotaWait = time.Second
	if tune != nil {
		tune(&cfg)
	}
	e.ucfg = cfg
	return e
}

func (e *uploadEnv) now() time.Time { return time.Now().Add(time.Duration(e.offset.Load())) }

// advance moves the uploader's clock forward.
func (e *uploadEnv) advance(d time.Duration) { e.offset.Add(int64(d)) }

// start runs the uploader until the test ends.
func (e *uploadEnv) start() { e.startInstance(e.registry) }

// startInstance runs one more uploader instance (its own metrics) beside the others.
func (e *uploadEnv) startInstance(reg *prometheus.Registry) {
	e.t.Helper()
	svc, err := uploader.New(e.ucfg, uploader.Deps{ClickHouse: e.db.Conn, Redis: e.db.Redis, RedisPrefix: e.db.RedisC.KeyPrefix,
		Kafka: e.kc, Producer: e.producer, Credentials: e.tenant.Store.AdConnections(e.keys), Mappings: e.tenant.Store.AdMappings(),
		Registry: reg, Log: pipeline.Quiet, Now: e.now})
	if err != nil {
		e.t.Fatal(err)
	}
	if e.rows == nil {
		e.rows = svc.Rows()
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx) }()
	e.t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			e.t.Errorf("uploader run: %v", err)
		}
	})
}

// job is the upload job the matcher would produce for eventID of the workspace's source.
func (e *uploadEnv) job(m controlplane.AdMapping, eventID, clickType, clickID string, at time.Time) schemas.UploadJob {
	hash := schemas.EventIDHash(m.SourceID, eventID)
	return schemas.UploadJob{RowID: schemas.UploadRowID(m.MappingID, hash), WorkspaceID: e.ws, MappingID: m.MappingID,
		SourceID: m.SourceID, EventIDHash: hash, TransactionID: schemas.UploadTransactionID(m.MappingID, hash), Milestone: m.Milestone,
		AcquisitionID: "acq-" + eventID, ClickIDType: clickType, ClickID: clickID, EventTime: at}
}

// eventTime is a time just after the mapping's creation, inside every window.
func (e *uploadEnv) eventTime() time.Time { return e.m.CreatedAt.Add(time.Second) }

func (e *uploadEnv) produce(jobs ...schemas.UploadJob) {
	e.t.Helper()
	recs := make([]*kgo.Record, len(jobs))
	for i, j := range jobs {
		b, err := json.Marshal(j)
		if err != nil {
			e.t.Fatal(err)
		}
		recs[i] = &kgo.Record{Topic: e.kc.Topic(schemas.TopicUploadJobs), Key: []byte(j.WorkspaceID + ":" + j.MappingID), Value: b}
	}
	e.produceRaw(recs...)
}

func (e *uploadEnv) produceRaw(recs ...*kgo.Record) {
	e.t.Helper()
	if err := e.producer.ProduceSync(e.ctx, recs...).FirstErr(); err != nil {
		e.t.Fatal(err)
	}
}

func (e *uploadEnv) row(rowID string) uploader.Row {
	e.t.Helper()
	r, err := e.rows.Get(e.ctx, e.ws, rowID)
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

// waitRow waits until the row exists and cond holds, returning it.
func (e *uploadEnv) waitRow(rowID, what string, cond func(uploader.Row) bool) uploader.Row {
	e.t.Helper()
	var last uploader.Row
	testenv.Eventually(e.t, rowID+" "+what, func() bool {
		r, err := e.rows.Get(e.ctx, e.ws, rowID)
		if err != nil {
			return false
		}
		last = r
		return cond(r)
	})
	return last
}

func (e *uploadEnv) waitStatus(rowID string, st uploader.Status) uploader.Row {
	e.t.Helper()
	return e.waitRow(rowID, string(st), func(r uploader.Row) bool { return r.Status == st })
}

// calls returns the fake's recorded requests to path ("/v1/events:ingest", "/v1/requestStatus:retrieve").
func (e *uploadEnv) calls(path string) []googlefake.RecordedRequest {
	var out []googlefake.RecordedRequest
	for _, r := range e.fake.Requests() {
		if r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

const (
	ingestPath   = "/v1/events:ingest"
	retrievePath = "/v1/requestStatus:retrieve"
)

// sentEvents decodes the events of one recorded ingest request.
type sentRequest struct {
	Events []struct {
		TransactionID string `json:"transactionId"`
	} `json:"events"`
	ValidateOnly bool `json:"validateOnly"`
}

func decodeSent(t *testing.T, r googlefake.RecordedRequest) sentRequest {
	t.Helper()
	var s sentRequest
	if err := json.Unmarshal(r.Body, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// versions lists a row's stored statuses, oldest first.
func (e *uploadEnv) versions(rowID string) []string {
	e.t.Helper()
	rows, err := e.db.Conn.Query(e.ctx, `SELECT toString(status) FROM upload_queue WHERE row_id = ? ORDER BY version`, rowID)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// metric returns the value of a counter with labels.
func (e *uploadEnv) metric(name string, labels map[string]string) float64 {
	e.t.Helper()
	mfs, err := e.registry.Gather()
	if err != nil {
		e.t.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if v, ok := labels[lp.GetName()]; ok && v != lp.GetValue() {
					continue next
				}
			}
			sum += m.GetCounter().GetValue()
		}
	}
	return sum
}

// TestServiceValidationOnlyEndToEnd is the recommended verification order (docs/ADS_UPLOAD.md,
// "Surfaces") up to "validated": a job becomes a queued row, is sent with validateOnly, ends
// validated and is never polled. The request carries click ID, time, action, transaction ID and
// consent only.
func TestServiceValidationOnlyEndToEnd(t *testing.T) {
	e := newUploadEnv(t, googlefake.DefaultConfig(), nil)
	e.start()
	j := e.job(e.m, "evt-1", "gclid", "Cj0KCQ-test-1", e.eventTime())
	v := int64(1999)
	j.ValueCents, j.Currency = &v, "EUR"
	e.produce(j)
	r := e.waitStatus(j.RowID, uploader.StatusValidated)
	if !r.ValidationOnly || r.Attempts != 1 || r.NextAttemptAt != nil || r.ClickIDType != "gclid" || r.ClickID != "Cj0KCQ-test-1" ||
		r.ConversionCustomerID != googlefake.DefaultCustomerID || r.LoginCustomerID != googlefake.DefaultManagerID ||
		r.ConversionActionID != googlefake.DefaultActionID || r.RequestEvents != 1 || len(r.ReasonCodes) != 0 {
		t.Fatalf("validated row %+v", r)
	}
	if got := strings.Join(e.versions(j.RowID), ","); got != "queued,validated" {
		t.Fatalf("versions %s", got)
	}
	sent := e.calls(ingestPath)
	if len(sent) != 1 || !decodeSent(t, sent[0]).ValidateOnly {
		t.Fatalf("%d ingest requests", len(sent))
	}
	var body map[string]any
	if err := json.Unmarshal(sent[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	ev := body["events"].([]any)[0].(map[string]any)
	if ev["conversionValue"] != 19.99 || ev["currency"] != "EUR" || ev["eventSource"] != "IN_STORE" ||
		ev["transactionId"] != j.TransactionID || ev["eventTimestamp"] != j.EventTime.UTC().Format(time.RFC3339) {
		t.Fatalf("event %v", ev)
	}

	// Validate-only requests are never polled, however long one waits.
	e.advance(24 * time.Hour)
	time.Sleep(500 * time.Millisecond)
	if n := len(e.calls(retrievePath)); n != 0 {
		t.Fatalf("%d diagnostics polls of a validate-only request", n)
	}
	if e.metric("revtrack_upload_ingest_requests_total", map[string]string{"outcome": "validated"}) != 1 ||
		e.metric("revtrack_upload_row_transitions_total", map[string]string{"from": "queued", "to": "validated"}) != 1 {
		t.Fatal("metrics do not count the request and the transition")
	}
}

// assertNoPrivateData checks every ingest body against identifiers that must never leave: the shop
// domain (the acquisition IDs here are shop-like), e-mails, the source, the workspace and the
// (hashed or raw) event IDs; and that events carry only the allowed fields.
func assertNoPrivateData(t *testing.T, e *uploadEnv, forbidden ...string) {
	t.Helper()
	forbidden = append(forbidden, "myshopify", "@", e.ws, e.tenant.Source.ID, "acme")
	allowed := map[string]bool{"eventTimestamp": true, "transactionId": true, "adIdentifiers": true,
		"conversionValue": true, "currency": true, "eventSource": true}
	for _, r := range e.calls(ingestPath) {
		for _, f := range forbidden {
			if strings.Contains(string(r.Body), f) {
				t.Fatalf("ingest body holds %q: %s", f, r.Body)
			}
		}
		var body struct {
			Events []map[string]json.RawMessage `json:"events"`
		}
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatal(err)
		}
		for _, ev := range body.Events {
			for k := range ev {
				if !allowed[k] {
					t.Fatalf("event field %q sent", k)
				}
			}
		}
	}
}

func TestPayloadNeverHoldsShopDomainOrEventID(t *testing.T) {
	e := newUploadEnv(t, googlefake.DefaultConfig(), nil)
	e.start()
	var forbidden []string
	for i := range 3 {
		raw := fmt.Sprintf("shop-%d.myshopify.com:order-%d", i, i)
		j := e.job(e.m, raw, "gclid", fmt.Sprintf("Cj0-payload-%d", i), e.eventTime())
		j.AcquisitionID = fmt.Sprintf("shop-%d.myshopify.com", i)
		forbidden = append(forbidden, raw, j.EventIDHash, j.AcquisitionID, j.RowID)
		e.produce(j)
		e.waitStatus(j.RowID, uploader.StatusValidated)
	}
	assertNoPrivateData(t, e, forbidden...)
}

// TestInstancesNeverSendARowTwice: two uploader instances share the queue; the per-workspace lease
// lets one of them send each round, so every row goes out in exactly one request.
func TestInstancesNeverSendARowTwice(t *testing.T) {
	t.Parallel()
	e := newUploadEnv(t, googlefake.DefaultConfig(), func(c *uploader.Config) { c.BatchSize = 3 })
	e.start()
	e.startInstance(prometheus.NewRegistry())
	var jobs []schemas.UploadJob
	for i := range 20 {
		j := e.job(e.m, fmt.Sprintf("evt-two-%d", i), "gclid", fmt.Sprintf("Cj0-two-%d", i), e.eventTime())
		jobs = append(jobs, j)
		e.produce(j)
	}
	for _, j := range jobs {
		e.waitStatus(j.RowID, uploader.StatusValidated)
	}
	seen := map[string]int{}
	for _, r := range e.calls(ingestPath) {
		for _, ev := range decodeSent(t, r).Events {
			seen[ev.TransactionID]++
		}
	}
	for _, j := range jobs {
		if seen[j.TransactionID] != 1 {
			t.Fatalf("row %s sent %d times", j.RowID, seen[j.TransactionID])
		}
	}
}
