package processors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/schemas"
)

// DeadLetter is re-exported for brevity in this package.
type DeadLetter = schemas.DeadLetter

// Dead-letter reasons: a closed vocabulary used as metric label, log field and message field.
const (
	ReasonDecodeError    = "decode_error"
	ReasonInvalidMessage = "invalid_message"
	ReasonSinkRejected   = "sink_rejected"
)

func reasonFor(err error) string {
	if errors.Is(err, schemas.ErrInvalidMessage) {
		return ReasonInvalidMessage
	}
	return ReasonDecodeError
}

func deadLetter(consumer string, r *kgo.Record, reason string, err error) DeadLetter {
	return DeadLetter{
		Consumer: consumer, Topic: r.Topic, Partition: r.Partition, Offset: r.Offset,
		Key: r.Key, Value: r.Value, Reason: reason, Error: err.Error(), At: time.Now().UTC(),
	}
}

// SyncProducer is the part of *kgo.Client the dead-letter writer needs.
type SyncProducer interface {
	ProduceSync(ctx context.Context, rs ...*kgo.Record) kgo.ProduceResults
}

var _ SyncProducer = (*kgo.Client)(nil)

// DeadLetterWriter produces dead letters and waits for the broker's acknowledgement, because the
// original records are committed right after.
type DeadLetterWriter struct {
	Producer SyncProducer
	Topic    string
}

// Write produces every dead letter, keyed by consumer name.
func (w *DeadLetterWriter) Write(ctx context.Context, dead []DeadLetter) error {
	recs := make([]*kgo.Record, 0, len(dead))
	for _, d := range dead {
		b, err := json.Marshal(d)
		if err != nil {
			return fmt.Errorf("encode dead letter: %w", err)
		}
		recs = append(recs, &kgo.Record{Topic: w.Topic, Key: []byte(d.Consumer), Value: b})
	}
	if err := w.Producer.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return fmt.Errorf("produce dead letters: %w", err)
	}
	return nil
}
