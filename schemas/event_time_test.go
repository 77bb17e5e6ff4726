package schemas

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

var received = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func TestEventTimeRangeEnds(t *testing.T) {
	from, until := EventTimeRange(received, time.Hour)
	if !from.Equal(time.Date(2026, 6, 2, 12, 0, 0, 0, time.UTC)) || !until.Equal(received.Add(time.Hour)) {
		t.Fatalf("range %s to %s", from, until)
	}
	for at, ok := range map[time.Time]bool{
		from: true, from.Add(-time.Nanosecond): false, until: true, until.Add(time.Nanosecond): false, received: true,
		time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC): false, time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC): false,
		{}: false, time.Date(2106, 2, 7, 6, 28, 16, 0, time.UTC): false,
	} {
		if err := CheckEventTime(at, received, time.Hour); (err == nil) != ok {
			t.Errorf("%s: %v", at, err)
		}
	}

	// Ends are whole seconds, rounded outwards: the printed range is exactly the accepted one.
	frac := received.Add(300 * time.Millisecond)
	from, until = EventTimeRange(frac, time.Hour)
	if !from.Equal(time.Date(2026, 6, 2, 12, 0, 0, 0, time.UTC)) || !until.Equal(received.Add(time.Hour+time.Second)) {
		t.Fatalf("range of a fractional receipt %s to %s", from, until)
	}

	// Within what storage holds, whatever the receipt and the allowed skew.
	from, _ = EventTimeRange(EarliestStorableTime.Add(time.Hour), time.Hour)
	if !from.Equal(EarliestStorableTime) {
		t.Fatalf("from %s", from)
	}
	for _, ahead := range []time.Duration{200 * 365 * 24 * time.Hour, AnyTimeAhead} {
		if _, until = EventTimeRange(received, ahead); !until.Equal(LatestStorableTime) {
			t.Fatalf("until %s for %s ahead", until, ahead)
		}
	}
	if !LatestStorableTime.Equal(time.Date(2106, 2, 7, 6, 28, 15, 0, time.UTC)) || MaxEventAge != 172*24*time.Hour {
		t.Fatal("the documented constants changed: update docs/TRACKING.md and the message schemas")
	}
}

func TestEventTimeErrorNamesTheRange(t *testing.T) {
	err := CheckEventTime(time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC), received, 90*time.Minute)
	var te *EventTimeError
	if !errors.As(err, &te) || !errors.Is(err, ErrInvalidMessage) {
		t.Fatalf("%T %v", err, err)
	}
	want := "occurredAt 1900-01-01T00:00:00Z is outside the accepted range 2026-06-02T12:00:00Z to 2026-11-21T13:30:00Z " +
		"(at most 172 days before its receipt, because raw events are kept 180 days, and at most 90 minutes after it)"
	if err.Error() != want {
		t.Fatalf("message\n%s\nwant\n%s", err, want)
	}
	err = CheckEventTime(time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC), received, AnyTimeAhead)
	if err == nil || !strings.Contains(err.Error(), "to 2106-02-07T06:28:15Z") || !strings.Contains(err.Error(), "no later than storage holds") {
		t.Fatalf("%v", err)
	}
	// A receiver whose clock is outside what storage holds accepts nothing.
	for _, r := range []time.Time{EarliestStorableTime.Add(-time.Nanosecond), LatestStorableTime.Add(time.Nanosecond)} {
		if err := CheckEventTime(r, r, time.Hour); !errors.Is(err, ErrInvalidMessage) {
			t.Errorf("receipt at %s: %v", r, err)
		}
	}
}

// TestValidateAppliesTheEventTimeRule: the consume path judges a message by its own receipt time,
// so a record read a week after the edge accepted it decodes as it did then.
func TestValidateAppliesTheEventTimeRule(t *testing.T) {
	amount := int64(100)
	srv := ServerEvent{EventID: "e", SourceID: "s", WorkspaceID: "w", AppID: "a", Name: "paid", AmountCents: &amount, Currency: "USD",
		OccurredAt: received.Add(-MaxEventAge), ReceivedAt: received}
	brw := BrowserEvent{EventID: "e", SourceID: "s", WorkspaceID: "w", AppID: "a", AcquisitionID: "acq", Name: "page_view",
		OccurredAt: received.Add(-MaxEventAge), ReceivedAt: received}
	if err := srv.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := brw.Validate(); err != nil {
		t.Fatal(err)
	}
	cases := map[string]func(*time.Time, *time.Time){
		"1900":                   func(o, _ *time.Time) { *o = time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC) },
		"1969":                   func(o, _ *time.Time) { *o = time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC) },
		"no occurredAt":          func(o, _ *time.Time) { *o = time.Time{} },
		"past retention":         func(o, _ *time.Time) { *o = received.Add(-MaxEventAge - time.Nanosecond) },
		"beyond DateTime":        func(o, _ *time.Time) { *o = LatestStorableTime.Add(time.Second) },
		"no receivedAt":          func(_, r *time.Time) { *r = time.Time{} },
		"receivedAt unstorable":  func(o, r *time.Time) { *o, *r = EarliestStorableTime, EarliestStorableTime.Add(-time.Second) },
		"receivedAt after 2106":  func(o, r *time.Time) { *o, *r = LatestStorableTime, LatestStorableTime.Add(time.Second) },
		"occurredAt before 1970": func(o, r *time.Time) { *o, *r = EarliestStorableTime.Add(-time.Second), EarliestStorableTime },
	}
	for name, breakIt := range cases {
		s, b := srv, brw
		breakIt(&s.OccurredAt, &s.ReceivedAt)
		breakIt(&b.OccurredAt, &b.ReceivedAt)
		if err := s.Validate(); !errors.Is(err, ErrInvalidMessage) {
			t.Errorf("server event, %s: %v", name, err)
		}
		if err := b.Validate(); !errors.Is(err, ErrInvalidMessage) {
			t.Errorf("browser event, %s: %v", name, err)
		}
	}
}

// FuzzEventTimeRule: whatever the receipt time and the edge's skew, a time the edge's check accepts
// is accepted by the consumers' check after the message's JSON round trip, and it is storable.
func FuzzEventTimeRule(f *testing.F) {
	for _, r := range []time.Time{received, EarliestStorableTime, LatestStorableTime, received.Add(123456789)} {
		from, until := EventTimeRange(r, time.Hour)
		for _, at := range []time.Time{from, until, from.Add(-1), until.Add(1), r} {
			f.Add(r.UnixNano(), at.UnixNano(), int64(time.Hour))
		}
	}
	f.Add(received.UnixNano(), received.UnixNano(), int64(-time.Hour))
	f.Fuzz(func(t *testing.T, receivedNanos, occurredNanos, ahead int64) {
		r, at := time.Unix(0, receivedNanos).UTC(), time.Unix(0, occurredNanos).UTC()
		if CheckEventTime(at, r, time.Duration(ahead)) != nil {
			return
		}
		if at.Before(EarliestStorableTime) || at.After(LatestStorableTime) || r.Before(EarliestStorableTime) || r.After(LatestStorableTime) {
			t.Fatalf("accepted %s received %s: not storable", at, r)
		}
		b, err := json.Marshal(BrowserEvent{EventID: "e", SourceID: "s", WorkspaceID: "w", AppID: "a", AcquisitionID: "acq",
			Name: "x", OccurredAt: at, ReceivedAt: r})
		if err != nil {
			t.Fatal(err)
		}
		var back BrowserEvent
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if err := back.Validate(); err != nil {
			t.Fatalf("the edge's check accepted %s received %s (%s ahead); the consumers' refuses it: %v", at, r, time.Duration(ahead), err)
		}
	})
}
