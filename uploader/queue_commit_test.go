package uploader

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/internal/kafkax"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/internal/testenv/pipeline"
	"github.com/revtrack/revtrack/schemas"
)

// flakyConn fails every insert while failing is set, as an unreachable ClickHouse would.
type flakyConn struct {
	RowsConn
	failing  atomic.Bool
	failures atomic.Int32
}

func (c *flakyConn) PrepareBatch(ctx context.Context, q string, opts ...driver.PrepareBatchOption) (driver.Batch, error) {
	if c.failing.Load() {
		c.failures.Add(1)
		return nil, errors.New("dial tcp: connection refused")
	}
	return c.RowsConn.PrepareBatch(ctx, q, opts...)
}

// oneMapping is the mapping store of a workspace with a single mapping.
type oneMapping controlplane.AdMapping

func (m oneMapping) Get(_ context.Context, ws, id string) (controlplane.AdMapping, error) {
	if ws != m.WorkspaceID || id != m.MappingID {
		return controlplane.AdMapping{}, controlplane.ErrNotFound
	}
	return controlplane.AdMapping(m), nil
}

// TestQueueCommitsOnlyWrittenJobs: while ClickHouse refuses the insert the consumer retries and
// commits nothing, so a consumer taking over after a shutdown receives the job again; once the
// row is written the offset is committed.
func TestQueueCommitsOnlyWrittenJobs(t *testing.T) {
	t.Parallel()
	db := pipeline.Migrated(t)
	kc, producer := pipeline.Topics(t)
	ctx := testenv.Ctx(t)
	m := oneMapping{MappingID: "m-1", WorkspaceID: "ws-1", CreatedAt: time.Now().Add(-time.Hour)}
	j := testJob("m-1", "evt-commit", "gclid", "Cj0-commit", time.Now().Add(-time.Minute))
	b, _ := json.Marshal(j)
	if err := producer.ProduceSync(ctx, &kgo.Record{Topic: kc.Topic(schemas.TopicUploadJobs), Key: []byte("ws-1:m-1"), Value: b}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	conn := &flakyConn{RowsConn: db.Conn}
	group := "upload-queue-test" + kc.TopicSuffix
	run := func() (context.CancelFunc, chan error) {
		cl, err := kafkax.NewConsumer(kc, queueConsumerName, group, []string{kc.Topic(schemas.TopicUploadJobs)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		q := &queueConsumer{consumer: cl, producer: producer, deadTopic: kc.Topic(schemas.TopicDeadLetters),
			rows: rowStore{conn: conn}, mappings: m, maxAge: 90 * 24 * time.Hour, maxPoll: 100,
			backoff: 10 * time.Millisecond, maxBackoff: 50 * time.Millisecond, now: time.Now, log: pipeline.Quiet}
		cctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { err := q.Run(cctx); cl.Close(); done <- err }()
		return cancel, done
	}
	store := rowStore{conn: db.Conn}

	conn.failing.Store(true)
	cancel, done := run()
	testenv.Eventually(t, "failed inserts", func() bool { return conn.failures.Load() >= 3 })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	conn.failing.Store(false)
	cancel, done = run()
	testenv.Eventually(t, "row written by the next consumer", func() bool {
		_, ok, err := store.get(ctx, "ws-1", j.RowID)
		return err == nil && ok
	})
	testenv.Eventually(t, "offset committed", func() bool {
		offs, err := kadm.NewClient(producer).FetchOffsets(ctx, group)
		if err != nil {
			return false
		}
		var sum int64
		offs.Each(func(o kadm.OffsetResponse) { sum += max(o.At, 0) })
		return sum == 1
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
