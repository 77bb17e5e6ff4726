package processors

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kgo"
)

// RecordCheck is one consumer's decode and validation of a record of its topic: what a record must
// pass not to be dead-lettered before its write.
type RecordCheck struct {
	Consumer string
	// Topic is the logical topic name (schemas.Topic…), without the deployment's suffix.
	Topic string
	Check func(*kgo.Record) error
}

// RecordChecks lists the decode-and-validate step of every consume loop the service runs, taken
// from the loops themselves, so a consumer added later is covered without a list to keep up to date.
// The ingest edge's contract test feeds every event the edge accepts through them.
func (s *Service) RecordChecks() []RecordCheck { return slices.Clone(s.checks) }

func (l *Loop[T]) checkRecord(r *kgo.Record) error {
	_, err := l.Decode(r)
	return err
}
