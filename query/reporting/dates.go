package reporting

import (
	"encoding/json"
	"fmt"
	"time"
)

// Date is a calendar date in UTC (docs/METRICS.md 1.2), held as its midnight. The zero Date is
// "no date" and marshals as null.
type Date struct{ t time.Time }

// ParseDate reads YYYY-MM-DD.
func ParseDate(s string) (Date, error) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return Date{}, fmt.Errorf("%q is not a date YYYY-MM-DD", s)
	}
	return Date{t}, nil
}

// MustDate is ParseDate for constants.
func MustDate(s string) Date {
	d, err := ParseDate(s)
	if err != nil {
		panic(err)
	}
	return d
}

// DateOf is the UTC date of an instant.
func DateOf(t time.Time) Date {
	y, m, d := t.UTC().Date()
	return Date{time.Date(y, m, d, 0, 0, 0, 0, time.UTC)}
}

// IsZero reports whether d is "no date".
func (d Date) IsZero() bool { return d.t.IsZero() }

// Start is the first instant of the date, D 00:00:00Z.
func (d Date) Start() time.Time { return d.t }

// End is end(D) = D+1 00:00:00Z: "on date D" means after everything that happened on D.
func (d Date) End() time.Time { return d.t.Add(dayLength) }

// AddDays moves by whole days. A date is a UTC midnight, where every day has 24 hours, so adding
// them gives what AddDate gives, without its calendar arithmetic (the aggregates call this per
// customer and date).
func (d Date) AddDays(n int) Date { return Date{d.t.Add(time.Duration(n) * dayLength)} }

const dayLength = 24 * time.Hour

// Before, After compare dates.
func (d Date) Before(o Date) bool { return d.t.Before(o.t) }
func (d Date) After(o Date) bool  { return d.t.After(o.t) }

func (d Date) String() string {
	if d.IsZero() {
		return ""
	}
	return d.t.Format(time.DateOnly)
}

// MarshalJSON writes "YYYY-MM-DD", or null for the zero Date.
func (d Date) MarshalJSON() ([]byte, error) {
	if d.IsZero() {
		return []byte("null"), nil
	}
	return json.Marshal(d.String())
}

// Range is an inclusive range of dates; To is the reporting date (asOf).
type Range struct {
	From Date `json:"from"`
	To   Date `json:"to"`
}

// last30 is the 30 dates ending on d: [d − 29, d].
func last30(d Date) Range { return Range{From: d.AddDays(-29), To: d} }

// Timestamp is an instant that marshals as RFC 3339 UTC to the second, or null when zero.
type Timestamp time.Time

// MarshalJSON writes the instant, or null.
func (t Timestamp) MarshalJSON() ([]byte, error) {
	tt := time.Time(t)
	if tt.IsZero() {
		return []byte("null"), nil
	}
	return json.Marshal(tt.UTC().Truncate(time.Second).Format(time.RFC3339))
}

// stamp formats an instant as the API writes it.
func stamp(t time.Time) string { return t.UTC().Truncate(time.Second).Format(time.RFC3339) }
