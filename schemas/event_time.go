package schemas

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// The one rule for event times, applied by the ingest edge before it acknowledges an event and by
// every consumer when it decodes one (through ServerEvent.Validate and BrowserEvent.Validate). It is
// measured from the receipt time the edge stamps into the message, not from the reader's clock, so a
// consumer that reads a record days later judges it exactly as the edge did: an event the edge
// acknowledged is never dead-lettered for its time.

// RetentionPeriod is how long raw tracking rows are kept (docs/TRACKING.md, "Event times"); the
// retention job (processors/retention.go) applies it.
const RetentionPeriod = 180 * 24 * time.Hour

// retentionSlack keeps an accepted event out of the next retention pass. The pass drops a monthly
// partition only once the whole month is older than RetentionPeriod, and runs daily; a consumer may
// land an event up to the event topics' retention (a week) after its receipt, since later it is
// gone from Kafka anyway. So an event at most RetentionPeriod-retentionSlack old at receipt lands in
// a month that the first pass after its landing keeps.
const retentionSlack = week + 24*time.Hour

// MaxEventAge is how long before its receipt an event may have occurred: 172 days.
const MaxEventAge = RetentionPeriod - retentionSlack

// The first and last second a ClickHouse DateTime (UInt32 seconds since 1970, UTC) holds. Outside
// them ClickHouse 18.16 wraps the value silently (1900 is stored as 2036).
var (
	EarliestStorableTime = time.Unix(0, 0).UTC()
	LatestStorableTime   = time.Unix(math.MaxUint32, 0).UTC()
)

// AnyTimeAhead bounds the future by storage alone. Consumers use it: how far ahead of the edge's clock
// a sender may be is the edge's policy (--ingest-max-future-skew), and whatever the edge allowed
// must still decode.
const AnyTimeAhead = time.Duration(math.MaxInt64)

// EventTimeRange is the range, both ends included, in which an event received at receivedAt may
// have occurred: from MaxEventAge before its receipt up to ahead after it, within what storage
// holds. The ends are whole seconds, rounded outwards, so the range a message prints is exact.
func EventTimeRange(receivedAt time.Time, ahead time.Duration) (from, until time.Time) {
	receivedAt = receivedAt.UTC()
	from = receivedAt.Add(-MaxEventAge).Truncate(time.Second)
	if from.Before(EarliestStorableTime) {
		from = EarliestStorableTime
	}
	until = LatestStorableTime
	if ahead < LatestStorableTime.Sub(receivedAt) {
		until = receivedAt.Add(ahead)
		if t := until.Truncate(time.Second); !t.Equal(until) {
			until = t.Add(time.Second)
		}
	}
	return from, until
}

// EventTimeError is an occurredAt outside its accepted range. Its message names the range, so the
// sender can act on it; it matches ErrInvalidMessage.
type EventTimeError struct {
	OccurredAt, From, Until time.Time
	// Ahead is how far after receipt an event may be (AnyTimeAhead: up to what storage holds).
	Ahead time.Duration
}

func (e *EventTimeError) Error() string {
	future := "no later than storage holds"
	if e.Ahead != AnyTimeAhead {
		future = "at most " + humanDuration(e.Ahead) + " after it"
	}
	return fmt.Sprintf("occurredAt %s is outside the accepted range %s to %s (at most %s before its receipt, "+
		"because raw events are kept %s, and %s)", formatTime(e.OccurredAt), formatTime(e.From), formatTime(e.Until),
		humanDuration(MaxEventAge), humanDuration(RetentionPeriod), future)
}

func (e *EventTimeError) Unwrap() error { return ErrInvalidMessage }

// CheckEventTime applies the rule to an event received at receivedAt that claims occurredAt, with
// the sender's clock allowed to run up to ahead in front of the receiver's.
func CheckEventTime(occurredAt, receivedAt time.Time, ahead time.Duration) error {
	if receivedAt.Before(EarliestStorableTime) || receivedAt.After(LatestStorableTime) {
		// Only a receiver with a broken clock gets here; the range would be meaningless.
		return invalid("receivedAt %s is outside %s to %s, what storage holds", formatTime(receivedAt),
			formatTime(EarliestStorableTime), formatTime(LatestStorableTime))
	}
	from, until := EventTimeRange(receivedAt, ahead)
	if occurredAt.Before(from) || occurredAt.After(until) {
		return &EventTimeError{OccurredAt: occurredAt, From: from, Until: until, Ahead: ahead}
	}
	return nil
}

// checkEventTimes is the consume-path check of a message's two times.
func checkEventTimes(occurredAt, receivedAt time.Time) error {
	switch {
	case occurredAt.IsZero():
		return invalid("occurredAt is required")
	case receivedAt.IsZero():
		return invalid("receivedAt is required")
	}
	return CheckEventTime(occurredAt, receivedAt, AnyTimeAhead)
}

func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// humanDuration writes whole days and hours as such ("172 days", "1 hour"); anything else as Go does.
func humanDuration(d time.Duration) string {
	unit := func(n int64, name string) string {
		if n == 1 {
			return "1 " + name
		}
		return strconv.FormatInt(n, 10) + " " + name + "s"
	}
	switch {
	case d > 0 && d%(24*time.Hour) == 0:
		return unit(int64(d/(24*time.Hour)), "day")
	case d > 0 && d%time.Hour == 0:
		return unit(int64(d/time.Hour), "hour")
	case d > 0 && d%time.Minute == 0:
		return unit(int64(d/time.Minute), "minute")
	}
	return d.String()
}
