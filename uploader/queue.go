package uploader

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/schemas"
)

// queueConsumerName names the consumer in its group (<prefix>.upload-queue), dead letters and logs.
const queueConsumerName = "upload-queue"

// Consumer is the part of *kgo.Client the queue consumer needs.
type Consumer interface {
	PollRecords(ctx context.Context, maxPollRecords int) kgo.Fetches
	MarkCommitRecords(rs ...*kgo.Record)
	CommitMarkedOffsets(ctx context.Context) error
	AllowRebalance()
}

// SyncProducer is the part of *kgo.Client that writes dead letters.
type SyncProducer interface {
	ProduceSync(ctx context.Context, rs ...*kgo.Record) kgo.ProduceResults
}

var (
	_ Consumer     = (*kgo.Client)(nil)
	_ SyncProducer = (*kgo.Client)(nil)
)

// queueConsumer turns upload jobs into upload-queue rows: poll, decode, insert the rows that do not
// exist yet, and only then commit. It follows the processors' loop (processors/loop.go): a record
// that cannot be decoded, breaks the job contract or names an unknown mapping goes to the
// dead-letter topic and never blocks its partition; ClickHouse and control-plane failures are
// retried with backoff and nothing is committed until the rows are written.
type queueConsumer struct {
	consumer  Consumer
	producer  SyncProducer
	deadTopic string
	rows      rowStore
	mappings  Mappings
	maxAge    time.Duration
	maxPoll   int
	// backoff between attempts of a failed write; doubles up to maxBackoff.
	backoff, maxBackoff time.Duration
	now                 func() time.Time
	metrics             *Metrics
	log                 *slog.Logger
}

// Run consumes until ctx ends. Records whose rows were written are committed; a redelivery of the
// others is harmless because existing rows are never written again.
func (q *queueConsumer) Run(ctx context.Context) error {
	defer q.consumer.AllowRebalance()
	for {
		fetches := q.consumer.PollRecords(ctx, q.maxPoll)
		if fetches.IsClientClosed() || ctx.Err() != nil {
			return nil
		}
		fetches.EachError(func(topic string, p int32, err error) {
			q.log.Warn("fetch error", "topic", topic, "partition", p, "err", err)
		})
		recs := fetches.Records()
		if len(recs) == 0 {
			q.consumer.AllowRebalance()
			continue
		}
		if err := q.handle(ctx, recs); err != nil {
			q.consumer.AllowRebalance()
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		q.consumer.MarkCommitRecords(recs...)
		if err := q.consumer.CommitMarkedOffsets(context.WithoutCancel(ctx)); err != nil {
			q.log.Warn("commit failed; offsets stay marked and are committed next time", "err", err)
		}
		q.consumer.AllowRebalance()
	}
}

// handle decodes one polled batch, writes its new rows and dead-letters what cannot be processed.
func (q *queueConsumer) handle(ctx context.Context, recs []*kgo.Record) error {
	var (
		jobs   []schemas.UploadJob
		origin []*kgo.Record
		dead   []schemas.DeadLetter
	)
	for _, r := range recs {
		j, err := decodeJob(r)
		if err != nil {
			reason := reasonDecodeError
			if errors.Is(err, schemas.ErrInvalidMessage) {
				reason = reasonInvalidMessage
			}
			dead = append(dead, deadLetter(r, reason, err))
			continue
		}
		jobs = append(jobs, j)
		origin = append(origin, r)
	}
	if len(jobs) > 0 {
		var unknown []int
		err := q.retry(ctx, func(ctx context.Context) error {
			var err error
			unknown, err = q.insert(ctx, jobs)
			return err
		})
		if err != nil {
			return err
		}
		for _, i := range unknown {
			dead = append(dead, deadLetter(origin[i], reasonUnknownMapping,
				fmt.Errorf("mapping %s of workspace %s not found", jobs[i].MappingID, jobs[i].WorkspaceID)))
		}
	}
	if len(dead) == 0 {
		return nil
	}
	if err := q.retry(ctx, func(ctx context.Context) error { return q.writeDeadLetters(ctx, dead) }); err != nil {
		return err
	}
	for _, d := range dead {
		q.metrics.deadLetter(d.Reason)
		q.log.Warn("upload job dead-lettered", "topic", d.Topic, "partition", d.Partition, "offset", d.Offset,
			"reason", d.Reason, "err", d.Error)
	}
	q.metrics.record(recordDead, len(dead))
	return nil
}

// insert writes the rows of jobs that do not exist yet. It returns the indexes of jobs whose
// mapping does not exist (to dead-letter); any error is transient and the whole call is retried.
func (q *queueConsumer) insert(ctx context.Context, jobs []schemas.UploadJob) ([]int, error) {
	now := q.now()
	type key struct{ ws, mapping string }
	mappings := map[key]*controlplane.AdMapping{}
	var unknown []int
	byWorkspace := map[string][]int{}
	seen := map[string]bool{}
	for i, j := range jobs {
		k := key{j.WorkspaceID, j.MappingID}
		if _, ok := mappings[k]; !ok {
			m, err := q.mappings.Get(ctx, j.WorkspaceID, j.MappingID)
			switch {
			case errors.Is(err, controlplane.ErrNotFound):
				mappings[k] = nil
			case err != nil:
				return nil, fmt.Errorf("read mapping %s: %w", j.MappingID, err)
			default:
				mappings[k] = &m
			}
		}
		if mappings[k] == nil {
			unknown = append(unknown, i)
			continue
		}
		// A job redelivered within one batch names the same row: the first one counts.
		if seen[j.RowID] {
			continue
		}
		seen[j.RowID] = true
		byWorkspace[j.WorkspaceID] = append(byWorkspace[j.WorkspaceID], i)
	}
	var changes []change
	for ws, idx := range byWorkspace {
		ids := make([]string, len(idx))
		for n, i := range idx {
			ids[n] = jobs[i].RowID
		}
		exists, err := q.rows.existing(ctx, ws, ids)
		if err != nil {
			return nil, err
		}
		for _, i := range idx {
			if exists[jobs[i].RowID] {
				continue
			}
			m := mappings[key{ws, jobs[i].MappingID}]
			changes = append(changes, change{from: statusNew, row: newRow(jobs[i], *m, now, q.maxAge)})
		}
	}
	if err := q.rows.apply(ctx, q.metrics, changes); err != nil {
		return nil, err
	}
	q.metrics.record(recordInserted, len(changes))
	q.metrics.record(recordDuplicate, len(jobs)-len(unknown)-len(changes))
	return unknown, nil
}

// retry runs f until it succeeds or ctx ends.
func (q *queueConsumer) retry(ctx context.Context, f func(context.Context) error) error {
	wait := q.backoff
	for {
		err := f(ctx)
		if err == nil {
			return nil
		}
		q.log.Warn("upload queue write failed; retrying", "err", err, "in", wait)
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: giving up on shutdown: %w", queueConsumerName, err)
		case <-time.After(wait):
		}
		wait = min(wait*2, q.maxBackoff)
	}
}

func deadLetter(r *kgo.Record, reason string, err error) schemas.DeadLetter {
	return schemas.DeadLetter{Consumer: queueConsumerName, Topic: r.Topic, Partition: r.Partition, Offset: r.Offset,
		Key: r.Key, Value: r.Value, Reason: reason, Error: err.Error(), At: time.Now().UTC()}
}

// writeDeadLetters produces the dead letters and waits for the broker, because the original
// records are committed right after.
func (q *queueConsumer) writeDeadLetters(ctx context.Context, dead []schemas.DeadLetter) error {
	recs := make([]*kgo.Record, 0, len(dead))
	for _, d := range dead {
		b, err := json.Marshal(d)
		if err != nil {
			return fmt.Errorf("encode dead letter: %w", err)
		}
		recs = append(recs, &kgo.Record{Topic: q.deadTopic, Key: []byte(d.Consumer), Value: b})
	}
	if err := q.producer.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return fmt.Errorf("produce dead letters: %w", err)
	}
	return nil
}
