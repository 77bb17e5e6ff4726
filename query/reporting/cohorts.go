package reporting

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"
)

// Cohorts (docs/METRICS.md 3.15): customers grouped by the month of their first install or first
// payment, and for each later month, those still paying and their subscription MRR, per currency.

// Cohort bases.
const (
	CohortByInstall   = "install"
	CohortByFirstPaid = "first_paid"
)

// CohortCell is one currency's cohort customers paying on a month's last date and their MRR.
type CohortCell struct {
	PayingCustomers int64 `json:"payingCustomers"`
	MRRCents        int64 `json:"mrrCents"`
}

// CohortMonth is a cohort on one month's last date (the range's `to` for its last month).
type CohortMonth struct {
	Month      string                `json:"month"` // YYYY-MM
	Date       Date                  `json:"date"`
	ByCurrency map[string]CohortCell `json:"byCurrency"`
}

// Cohort is the customers whose first install (or payment) is in one month of the range.
type Cohort struct {
	Cohort    string        `json:"cohort"` // YYYY-MM
	Customers int64         `json:"customers"`
	Months    []CohortMonth `json:"months"`
}

// Cohorts is GET /api/v1/cohorts.
type Cohorts struct {
	Envelope
	By      string   `json:"by"`
	Basis   string   `json:"basis"`
	Cohorts []Cohort `json:"cohorts"`
}

// CohortsRequest is a cohorts request, validated by the query edge.
type CohortsRequest struct {
	Request
	By string
}

// Cohorts computes the cohorts of the range (METRICS 3.15) in one sweep of the timeline engine over
// the month ends.
func (s *Store) Cohorts(ctx context.Context, req CohortsRequest) (Cohorts, error) {
	if req.By != CohortByInstall && req.By != CohortByFirstPaid {
		return Cohorts{}, fmt.Errorf("%w: by must be one of install, first_paid", ErrInvalid)
	}
	months, err := Periods(req.Range, IntervalMonth)
	if err != nil {
		return Cohorts{}, err
	}
	generatedAt := s.now().UTC()
	points := make([]Date, len(months))
	for i, m := range months {
		points[i] = m.To
	}
	type facts struct {
		tl    *timelineFacts
		ex    *exclusions
		view  *syncView
		start map[customerHash]time.Time // the cohort instant of each customer
	}
	f, err := cachedAt(ctx, s, "", nil, func() (*facts, error) {
		f := &facts{}
		g, gctx := errgroup.WithContext(ctx)
		g.Go(func() (err error) { f.tl, err = s.loadTimeline(gctx, req.Scope, points, usageNone); return })
		g.Go(func() (err error) { f.ex, err = s.readExclusions(gctx, req.Scope); return })
		g.Go(func() (err error) { f.view, err = s.readSyncView(gctx, req.Scope); return })
		g.Go(func() (err error) {
			f.start, err = s.readCohortStarts(gctx, req.Scope, req.By, req.Range.To.End())
			return
		})
		return f, g.Wait()
	}, nil)
	if err != nil {
		return Cohorts{}, err
	}
	out := Cohorts{Envelope: s.envelope(req.Request, generatedAt, f.view, f.view.coverage(req.Range, false)), By: req.By, Basis: basisNRR}
	cohorts := make([]Cohort, len(months))
	for i, m := range months {
		cohorts[i] = Cohort{Cohort: monthOf(m.From)}
		for _, later := range months[i:] {
			cohorts[i].Months = append(cohorts[i].Months, CohortMonth{Month: monthOf(later.From), Date: later.To, ByCurrency: map[string]CohortCell{}})
		}
	}
	currencies := map[string]bool{}
	var buf sweepBuffers
	for k, at := range f.start {
		d := DateOf(at)
		if at.IsZero() || d.Before(req.Range.From) || d.After(req.Range.To) || !f.ex.admits(req.CustomerScope, k) {
			continue
		}
		ci := monthIndex(months, d)
		cohorts[ci].Customers++
		c := f.tl.index[k]
		if c == nil {
			continue // no charge, payment or usage: never paying
		}
		sweep(c, points, &buf, func(i int, st pointState) {
			if i < ci || !st.Paying || (req.Currency != "" && st.Currency != req.Currency) {
				return
			}
			cell := cohorts[ci].Months[i-ci].ByCurrency[st.Currency]
			cell.PayingCustomers++
			cell.MRRCents += st.AMR
			cohorts[ci].Months[i-ci].ByCurrency[st.Currency] = cell
			currencies[st.Currency] = true
		})
	}
	out.Currencies = sortedKeys(currencies)
	out.MixedCurrencies = len(out.Currencies) > 1
	for i := range cohorts { // every month lists every currency of the answer
		for j := range cohorts[i].Months {
			for cur := range currencies {
				if _, ok := cohorts[i].Months[j].ByCurrency[cur]; !ok {
					cohorts[i].Months[j].ByCurrency[cur] = CohortCell{}
				}
			}
		}
	}
	out.Cohorts = cohorts
	return out, nil
}

// monthOf is a date's month, YYYY-MM.
func monthOf(d Date) string { return d.String()[:7] }

// monthIndex is the index of the month of months that contains d.
func monthIndex(months []Range, d Date) int {
	for i, m := range months {
		if !d.After(m.To) {
			return i
		}
	}
	return len(months) - 1
}

// readCohortStarts reads each customer's cohort instant: its first install, or its first positive
// subscription payment before end (any currency).
func (s *Store) readCohortStarts(ctx context.Context, sc Scope, by string, end time.Time) (map[customerHash]time.Time, error) {
	query, args := selectCohortInstalls, []any{sc.WorkspaceID, sc.apps()}
	if by == CohortByFirstPaid {
		query, args = selectFirstPayments, []any{sc.WorkspaceID, sc.apps(), epoch(end)}
	}
	rows, err := s.conn.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("read cohorts: %w", err)
	}
	defer rows.Close()
	out := map[customerHash]time.Time{}
	for rows.Next() {
		var (
			k   customerHash
			cur string
			at  uint32
		)
		dest := []any{&k, &at}
		if by == CohortByFirstPaid {
			dest = []any{&k, &cur, &at}
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("read cohorts: %w", err)
		}
		if t := unix(at); !t.IsZero() {
			out[k] = earliest(out[k], t)
		}
	}
	return out, rows.Err()
}
