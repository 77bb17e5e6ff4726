package uploader_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/devtools/googlefake"
	"github.com/revtrack/revtrack/internal/kafkax"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas"
	"github.com/revtrack/revtrack/uploader"
)

// readDeadLetters reads n dead letters from the test's dead-letter topic.
func readDeadLetters(t *testing.T, kc kafkax.Config, n int) []schemas.DeadLetter {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(kc.Brokers...), kgo.ConsumeTopics(kc.Topic(schemas.TopicDeadLetters)),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var out []schemas.DeadLetter
	ctx := testenv.Ctx(t)
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d dead letters", len(out), n)
		}
		fs.EachRecord(func(r *kgo.Record) {
			var d schemas.DeadLetter
			if err := json.Unmarshal(r.Value, &d); err != nil {
				t.Fatal(err)
			}
			out = append(out, d)
		})
	}
	return out
}

// firstStatus is the state a row was created in (its oldest version).
func (e *uploadEnv) firstStatus(rowID string) string {
	e.t.Helper()
	var vs []string
	testenv.Eventually(e.t, rowID+" inserted", func() bool { vs = e.versions(rowID); return len(vs) > 0 })
	return vs[0]
}

// TestQueueInitialStates covers every "(new)" row of the state table through Kafka, and the dead
// letters of undecodable jobs, jobs breaking the contract and jobs of unknown mappings.
func TestQueueInitialStates(t *testing.T) {
	t.Parallel()
	e := newUploadEnv(t, googlefake.DefaultConfig(), nil)
	e.start()
	at := e.eventTime()
	queued := e.job(e.m, "evt-queued", "gbraid", "0AAAA-gbraid", at)
	unattributed := e.job(e.m, "evt-unattributed", "", "", at)
	before := e.job(e.m, "evt-before", "gclid", "Cj0-before", e.m.CreatedAt.Add(-time.Hour))
	future := e.job(e.m, "evt-future", "wbraid", "Ck-future", e.now().Add(10*time.Minute))
	bad := e.job(e.m, "evt-bad", "gclid", "Cj0-bad", at)
	bad.RowID = "uq_made_up"
	unknown := e.job(e.m, "evt-unknown", "gclid", "Cj0-unknown", at)
	unknown.MappingID = "0190-no-such-mapping"
	unknown.RowID = schemas.UploadRowID(unknown.MappingID, unknown.EventIDHash)
	unknown.TransactionID = schemas.UploadTransactionID(unknown.MappingID, unknown.EventIDHash)
	e.produce(queued, unattributed, before, future, bad, unknown)
	e.produceRaw(&kgo.Record{Topic: e.kc.Topic(schemas.TopicUploadJobs), Key: []byte("x"), Value: []byte("{not json")})

	if st := e.firstStatus(queued.RowID); st != "queued" {
		t.Fatalf("click inside the window: created %s", st)
	}
	e.waitStatus(queued.RowID, uploader.StatusValidated)
	for _, c := range []struct {
		job    schemas.UploadJob
		status uploader.Status
		reason string
	}{
		{unattributed, uploader.StatusUnattributed, ""},
		{before, uploader.StatusRejected, uploader.ReasonEventBeforeMapping},
		{future, uploader.StatusRejected, uploader.ReasonEventOutsideWindow},
	} {
		r := e.row(c.job.RowID)
		if r.Status != c.status || strings.Join(r.ReasonCodes, ",") != c.reason || r.Message == "" || r.Attempts != 0 {
			t.Fatalf("%s: %+v", c.job.RowID, r)
		}
		if vs := e.versions(c.job.RowID); len(vs) != 1 {
			t.Fatalf("%s: a row that is not uploaded changed: %v", c.job.RowID, vs)
		}
	}
	dead := readDeadLetters(t, e.kc, 3)
	reasons := map[string]bool{}
	for _, d := range dead {
		if d.Consumer != "upload-queue" || d.Topic != e.kc.Topic(schemas.TopicUploadJobs) {
			t.Fatalf("dead letter %+v", d)
		}
		reasons[d.Reason] = true
	}
	if !reasons["invalid_message"] || !reasons["unknown_mapping"] || !reasons["decode_error"] {
		t.Fatalf("dead letters %+v", dead)
	}

	// An event older than the platform's window (the clock has moved 91 days since it occurred).
	e.advance(91 * 24 * time.Hour)
	old := e.job(e.m, "evt-old", "gclid", "Cj0-old", at)
	e.produce(old)
	if st := e.firstStatus(old.RowID); st != "rejected" {
		t.Fatalf("old event: %s", st)
	}
	if r := e.row(old.RowID); strings.Join(r.ReasonCodes, ",") != uploader.ReasonEventOutsideWindow {
		t.Fatalf("old event: %+v", r)
	}
	if n := len(e.calls(ingestPath)); n != 1 {
		t.Fatalf("%d ingest requests; only the queued row is uploaded", n)
	}
}

// TestRedeliveredJobDoesNotResetRow: a job delivered again after its row moved on (and twice in one
// batch) leaves the row as it is.
func TestRedeliveredJobDoesNotResetRow(t *testing.T) {
	t.Parallel()
	e := newUploadEnv(t, googlefake.DefaultConfig(), nil)
	e.start()
	j := e.job(e.m, "evt-1", "gclid", "Cj0-redelivered", e.eventTime())
	e.produce(j, j)
	e.waitStatus(j.RowID, uploader.StatusValidated)
	// Same key, same partition: once the marker's row exists, the redelivery was consumed.
	marker := e.job(e.m, "evt-marker", "", "", e.eventTime())
	e.produce(j, marker)
	e.firstStatus(marker.RowID)
	if vs := strings.Join(e.versions(j.RowID), ","); vs != "queued,validated" {
		t.Fatalf("versions after redelivery: %s", vs)
	}
	if r := e.row(j.RowID); r.Status != uploader.StatusValidated || r.Attempts != 1 {
		t.Fatalf("row %+v", r)
	}
	if n := len(e.calls(ingestPath)); n != 1 {
		t.Fatalf("%d ingest requests", n)
	}
	if e.metric("revtrack_upload_queue_records_total", map[string]string{"result": "duplicate"}) != 2 {
		t.Fatal("duplicates not counted")
	}
}

// TestEventIDStoredOnlyHashed: the source event ID is nowhere in the queue; its SHA-256 is.
func TestEventIDStoredOnlyHashed(t *testing.T) {
	t.Parallel()
	e := newUploadEnv(t, googlefake.DefaultConfig(), nil)
	e.start()
	const raw = "evt-raw-4242-secret"
	j := e.job(e.m, raw, "gclid", "Cj0-hashed", e.eventTime())
	j.AcquisitionID = "acq-hashed"
	e.produce(j)
	e.waitStatus(j.RowID, uploader.StatusValidated)
	var n uint64
	if err := e.db.Conn.QueryRow(e.ctx, `SELECT count() FROM upload_queue WHERE position(concat(row_id, workspace_id, mapping_id,
source_id, event_id_hash, transaction_id, milestone, acquisition_id, click_id, request_id, message, arrayStringConcat(reason_codes, ',')), ?) > 0`,
		raw).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("%d versions hold the raw event ID", n)
	}
	if r := e.row(j.RowID); r.EventIDHash != schemas.EventIDHash(e.m.SourceID, raw) || len(r.EventIDHash) != 64 {
		t.Fatalf("event ID hash %q", r.EventIDHash)
	}
}
