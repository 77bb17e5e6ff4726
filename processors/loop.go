// Package processors holds the Kafka consumers that turn topics into ClickHouse rows. Every consumer
// runs the same loop: poll, decode, write the batch to its sink, and only then mark the offsets for
// commit. A record that cannot be decoded or that the sink rejects goes to the dead-letter topic with
// its reason; it never blocks its partition and never disappears silently.
package processors

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Sink durably writes a batch. Write returns only after the store accepted every item. A
// *RejectedError says the store refused the data itself (retrying cannot help); any other error is
// treated as transient.
type Sink[T any] interface {
	Write(ctx context.Context, batch []T) error
}

// RejectedError is a permanent refusal of a batch by the store (bad data, not a bad connection).
type RejectedError struct{ Err error }

func (e *RejectedError) Error() string { return "rejected by sink: " + e.Err.Error() }
func (e *RejectedError) Unwrap() error { return e.Err }

// Consumer is the part of *kgo.Client the loop needs.
type Consumer interface {
	PollRecords(ctx context.Context, maxPollRecords int) kgo.Fetches
	MarkCommitRecords(rs ...*kgo.Record)
	CommitMarkedOffsets(ctx context.Context) error
	AllowRebalance()
}

var _ Consumer = (*kgo.Client)(nil)

// Loop consumes one topic set into one sink.
type Loop[T any] struct {
	Name        string
	Consumer    Consumer
	Decode      func(*kgo.Record) (T, error)
	Sink        Sink[T]
	DeadLetters *DeadLetterWriter
	Metrics     *LoopMetrics
	Log         *slog.Logger
	// MaxPoll bounds a batch: ClickHouse prefers few large inserts, memory prefers bounded ones.
	MaxPoll int
	// Backoff between attempts of a transient sink failure; doubles up to MaxBackoff.
	Backoff, MaxBackoff time.Duration
}

// Run consumes until ctx ends. On return every record whose batch reached the sink has been
// committed; records polled but not yet written are not committed and will be redelivered, which the
// idempotent sinks absorb.
func (l *Loop[T]) Run(ctx context.Context) error {
	// Leaving the group on shutdown waits for the last poll to be released.
	defer l.Consumer.AllowRebalance()
	for {
		fetches := l.Consumer.PollRecords(ctx, l.MaxPoll)
		if fetches.IsClientClosed() || ctx.Err() != nil {
			return nil
		}
		fetches.EachError(func(topic string, p int32, err error) {
			l.Log.Warn("fetch error", "topic", topic, "partition", p, "err", err)
		})
		recs := fetches.Records()
		if len(recs) == 0 {
			l.Consumer.AllowRebalance()
			continue
		}
		if err := l.handle(ctx, recs); err != nil {
			l.Consumer.AllowRebalance()
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		l.Consumer.MarkCommitRecords(recs...)
		// Committing here rather than on the autocommit timer keeps redelivery after a crash small.
		if err := l.Consumer.CommitMarkedOffsets(context.WithoutCancel(ctx)); err != nil {
			l.Log.Warn("commit failed; offsets stay marked and are committed next time", "err", err)
		}
		l.Consumer.AllowRebalance()
	}
}

// handle decodes and writes one polled batch, dead-lettering what cannot be processed.
func (l *Loop[T]) handle(ctx context.Context, recs []*kgo.Record) error {
	items := make([]T, 0, len(recs))
	origin := make([]*kgo.Record, 0, len(recs))
	var dead []DeadLetter
	for _, r := range recs {
		v, err := l.Decode(r)
		if err != nil {
			dead = append(dead, deadLetter(l.Name, r, reasonFor(err), err))
			continue
		}
		items = append(items, v)
		origin = append(origin, r)
	}
	l.Metrics.consumed.Add(float64(len(recs)))
	if len(items) > 0 {
		rejected, err := l.write(ctx, items)
		if err != nil {
			return err
		}
		for j, i := range rejected.idx {
			dead = append(dead, deadLetter(l.Name, origin[i], ReasonSinkRejected, rejected.err[j]))
		}
	}
	if len(dead) > 0 {
		if err := l.retry(ctx, func(ctx context.Context) error { return l.DeadLetters.Write(ctx, dead) }); err != nil {
			return err
		}
		for _, d := range dead {
			l.Metrics.deadLettered.WithLabelValues(d.Reason).Inc()
			l.Log.Warn("record dead-lettered", "topic", d.Topic, "partition", d.Partition, "offset", d.Offset, "reason", d.Reason, "err", d.Error)
		}
	}
	return nil
}

type rejections struct {
	idx []int
	err []error
}

// write sends items to the sink, retrying transient failures. When the sink refuses a batch as a
// whole, it is split in halves until the refused items are isolated, so a single bad record in a
// large batch costs a few extra inserts rather than one per record, and only it is dead-lettered.
func (l *Loop[T]) write(ctx context.Context, items []T) (rejections, error) {
	start := time.Now()
	var out rejections
	if err := l.writeSplit(ctx, items, 0, &out); err != nil {
		return rejections{}, err
	}
	l.Metrics.written.Add(float64(len(items) - len(out.idx)))
	l.Metrics.batchSeconds.Observe(time.Since(start).Seconds())
	return out, nil
}

func (l *Loop[T]) writeSplit(ctx context.Context, items []T, offset int, out *rejections) error {
	err := l.retry(ctx, func(ctx context.Context) error { return l.Sink.Write(ctx, items) })
	var rej *RejectedError
	switch {
	case err == nil:
		return nil
	case !errors.As(err, &rej):
		return err
	case len(items) == 1:
		out.idx = append(out.idx, offset)
		out.err = append(out.err, err)
		return nil
	}
	mid := len(items) / 2
	if err := l.writeSplit(ctx, items[:mid], offset, out); err != nil {
		return err
	}
	return l.writeSplit(ctx, items[mid:], offset+mid, out)
}

// retry runs f until it succeeds, fails permanently, or ctx ends.
func (l *Loop[T]) retry(ctx context.Context, f func(context.Context) error) error {
	wait := l.Backoff
	for {
		err := f(ctx)
		var rej *RejectedError
		if err == nil || errors.As(err, &rej) {
			return err
		}
		l.Metrics.sinkErrors.Inc()
		l.Log.Warn("sink write failed; retrying", "err", err, "in", wait)
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: giving up on shutdown: %w", l.Name, err)
		case <-time.After(wait):
		}
		wait = min(wait*2, l.MaxBackoff)
	}
}
