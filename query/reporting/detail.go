package reporting

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/revtrack/revtrack/query/budget"
)

// Timeline limits (docs/METRICS.md 6.1).
const (
	DefaultTimelineLimit = 20
	MaxTimelineLimit     = 50
)

// Timeline entry sources.
const (
	TimelineLifecycleEvent = "lifecycle_event"
	TimelineTransaction    = "transaction"
)

// DetailRequest is a customer-detail request, validated by the query edge.
type DetailRequest struct {
	Scope         Scope
	Ref           string // a customer ID, or a shop domain unique among the covered apps
	Range         Range  // Range.To is the reporting date
	TimelineLimit int
}

// PayingState is the detail's paying verdict (METRICS 2.4).
type PayingState struct {
	Paying bool   `json:"paying"`
	Reason string `json:"reason"`
}

// Current is the customer's MRR on the reporting date.
type Current struct {
	AsOf       Date                `json:"asOf"`
	ByCurrency map[string]MRRBlock `json:"byCurrency"`
}

// ObservedUsageDetail is a customer's observed usage charges over its last 30 days.
type ObservedUsageDetail struct {
	GrossCents     int64     `json:"grossCents"`
	Count          int64     `json:"count"`
	LastOccurredAt Timestamp `json:"lastOccurredAt"`
}

// Last30Block is one currency of last30Days (METRICS 6).
type Last30Block struct {
	GrossCents           int64               `json:"grossCents"`
	FeeCents             int64               `json:"feeCents"`
	NetCents             int64               `json:"netCents"`
	TotalDeductionsCents int64               `json:"totalDeductionsCents"`
	SubscriptionCents    int64               `json:"subscriptionCents"`
	UsageCents           int64               `json:"usageCents"`
	OneTimeCents         int64               `json:"oneTimeCents"`
	RefundCents          int64               `json:"refundCents"`
	TransactionCount     int64               `json:"transactionCount"`
	ObservedUsageCharges ObservedUsageDetail `json:"observedUsageCharges"`
}

// Last30Days is the customer's 30 dates ending on the reporting date.
type Last30Days struct {
	Range         Range                  `json:"range"`
	ByCurrency    map[string]Last30Block `json:"byCurrency"`
	UsageActivity UsageActivity          `json:"usageActivity"`
}

// Analytics is the detail's analytics object (METRICS 6).
type Analytics struct {
	AsOf       Timestamp      `json:"asOf"`
	Paying     PayingState    `json:"paying"`
	Currencies []string       `json:"currencies"`
	Current    Current        `json:"current"`
	Last30Days Last30Days     `json:"last30Days"`
	Coverage   CoverageBlocks `json:"coverage"`
}

// TimelineEntry is one lifecycle event or transaction of the customer (METRICS 6.1).
type TimelineEntry struct {
	ID          string `json:"id"`
	OccurredAt  string `json:"occurredAt"`
	Source      string `json:"source"`
	Type        string `json:"type"`
	ChargeName  string `json:"chargeName,omitempty"`
	AmountCents *int64 `json:"amountCents,omitempty"`
	GrossCents  *int64 `json:"grossCents,omitempty"`
	NetCents    *int64 `json:"netCents,omitempty"`
	Currency    string `json:"currency,omitempty"`
	Reason      string `json:"reason,omitempty"`
	Description string `json:"description,omitempty"`

	at time.Time
}

// CustomerDetail is GET /api/v1/customers/{customerId}.
type CustomerDetail struct {
	Customer  Customer        `json:"customer"`
	Analytics Analytics       `json:"analytics"`
	Timeline  []TimelineEntry `json:"timeline"`
	Range     Range           `json:"range"`
	Source    string          `json:"source"`
}

// Customer answers for one customer of the covered apps, excluded ones too (docs/METRICS.md
// section 6).
func (s *Store) Customer(ctx context.Context, req DetailRequest) (CustomerDetail, error) {
	// Nothing of a detail is kept: every request computes.
	if err := budget.Compute(ctx); err != nil {
		return CustomerDetail{}, err
	}
	generatedAt := s.now().UTC()
	// The covered apps' sync state is read while the customer is found; the customer's app is then
	// picked from it.
	var (
		r       customerRow
		allSync *syncView
	)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { r, err = s.resolveCustomer(gctx, req.Scope, req.Ref); return })
	g.Go(func() (err error) { allSync, err = s.readSyncView(gctx, req.Scope); return })
	if err := g.Wait(); err != nil {
		return CustomerDetail{}, err
	}
	limit := req.TimelineLimit
	if limit <= 0 {
		limit = DefaultTimelineLimit
	}
	d := req.Range.To
	window := last30(d)
	app := Scope{WorkspaceID: req.Scope.WorkspaceID, AppIDs: []string{r.AppID}}
	var (
		facts    *customerFacts
		activity UsageActivity
	)
	sync := allSync.only(r.AppID)
	g, gctx = errgroup.WithContext(ctx)
	g.Go(func() (err error) { facts, err = s.loadCustomerFacts(gctx, app, []string{r.PublicID}, d); return })
	g.Go(func() error {
		activity = s.customerUsageActivity(gctx, app, r.PublicID, window.From.Start(), window.To.End())
		return nil
	})
	if err := g.Wait(); err != nil {
		return CustomerDetail{}, err
	}
	timeline := facts.timeline(r.key(), d.End(), limit)
	c, ev := facts.customer(r, d)
	out := CustomerDetail{Customer: c, Timeline: timeline, Range: req.Range, Source: SourceDetail}
	a := &out.Analytics
	a.AsOf = Timestamp(d.End())
	if DateOf(generatedAt) == d {
		a.AsOf = Timestamp(generatedAt)
	}
	a.Paying = PayingState{Paying: ev.Paying, Reason: ev.Reason}
	a.Current = Current{AsOf: d, ByCurrency: map[string]MRRBlock{}}
	a.Last30Days = Last30Days{Range: window, ByCurrency: map[string]Last30Block{}, UsageActivity: activity}
	k := r.key()
	for cur, t := range facts.tx[k] {
		m := MRRBlock{UsageMRRCents: t.Usage30}
		if ev.Paying && ev.Currency == cur {
			m.SubscriptionMRRCents = ev.AMRCents
		}
		m.MRRCents = m.SubscriptionMRRCents + m.UsageMRRCents
		if m.MRRCents != 0 || m.SubscriptionMRRCents != 0 || m.UsageMRRCents != 0 {
			a.Current.ByCurrency[cur] = m
		}
		if t.Count30 > 0 {
			a.Last30Days.ByCurrency[cur] = Last30Block{GrossCents: t.Gross30, FeeCents: t.Fee30, NetCents: t.Net30,
				TotalDeductionsCents: t.Gross30 - t.Net30, SubscriptionCents: t.Subscription30, UsageCents: t.Usage30,
				OneTimeCents: t.OneTime30, RefundCents: -t.GiveBack30, TransactionCount: t.Count30}
		}
	}
	if ev.Paying {
		if _, ok := a.Current.ByCurrency[ev.Currency]; !ok {
			a.Current.ByCurrency[ev.Currency] = MRRBlock{MRRCents: ev.AMRCents, SubscriptionMRRCents: ev.AMRCents}
		}
	}
	for cur, u := range facts.usageCharges[k] {
		if u.Count30 == 0 {
			continue
		}
		b := a.Last30Days.ByCurrency[cur]
		b.ObservedUsageCharges = ObservedUsageDetail{GrossCents: u.Gross30, Count: u.Count30, LastOccurredAt: Timestamp(u.LastAt30)}
		a.Last30Days.ByCurrency[cur] = b
	}
	currencies := map[string]bool{}
	for cur := range a.Current.ByCurrency {
		currencies[cur] = true
	}
	for cur := range a.Last30Days.ByCurrency {
		currencies[cur] = true
	}
	a.Currencies = sortedKeys(currencies)
	a.Coverage = sync.coverage(window, activity.Loaded).CoverageBlocks
	return out, nil
}

// resolveCustomer finds the customer a reference names: its ID, else its shop domain when that is
// unique among the covered apps (several: AmbiguousError; none: ErrNotFound).
func (s *Store) resolveCustomer(ctx context.Context, sc Scope, ref string) (customerRow, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return customerRow{}, fmt.Errorf("%w: customer %q", ErrNotFound, ref)
	}
	ws := sc.WorkspaceID
	q := new(stmt).add(customersFinalHead, ws, ws, ws, sc.apps())
	if customerIDPattern.MatchString(ref) {
		q.add(byPublicID, ref).add(customersFinalTail)
	} else {
		domain := strings.ToLower(ref)
		q.add(byDomain, ws, sc.apps(), domain).add(customersFinalTail).add(whereDomainIs, domain)
	}
	text, args := q.add(orderByPublicID).query()
	rows, err := s.readCustomerRows(ctx, text, args...)
	if err != nil {
		return customerRow{}, err
	}
	var byDomain []customerRow
	for _, r := range rows {
		if r.PublicID == ref {
			return r, nil
		}
		byDomain = append(byDomain, r)
	}
	switch len(byDomain) {
	case 0:
		return customerRow{}, fmt.Errorf("%w: customer %q", ErrNotFound, ref)
	case 1:
		return byDomain[0], nil
	}
	ids := make([]string, len(byDomain))
	for i, r := range byDomain {
		ids[i] = r.PublicID
	}
	slices.Sort(ids)
	return customerRow{}, &AmbiguousError{Domain: ref, CustomerIDs: ids}
}

// timeline is the customer's lifecycle events and transactions before end, newest first, at most
// limit. Ties at one instant: lifecycle events before transactions; charge events in reverse replay
// order (METRICS 2.1), so an activation is listed before its acceptance; then by ID descending.
func (f *customerFacts) timeline(k string, end time.Time, limit int) []TimelineEntry {
	out := []TimelineEntry{}
	for _, e := range f.events[k] {
		if e.At.Before(end) {
			out = append(out, TimelineEntry{ID: e.Key, Source: TimelineLifecycleEvent, Type: e.Type, ChargeName: e.ChargeName,
				AmountCents: e.Amount, Currency: e.Currency, Reason: e.Reason, Description: e.Description, at: e.At})
		}
	}
	for _, t := range f.txs[k] {
		if t.At.Before(end) {
			gross, net := t.Gross, t.Net
			out = append(out, TimelineEntry{ID: t.ID, Source: TimelineTransaction, Type: t.Type, GrossCents: &gross, NetCents: &net,
				Currency: t.Currency, at: t.At})
		}
	}
	slices.SortFunc(out, func(a, b TimelineEntry) int {
		return cmp.Or(b.at.Compare(a.at), strings.Compare(a.Source, b.Source), cmp.Compare(chargeEventKinds[b.Type], chargeEventKinds[a.Type]),
			strings.Compare(b.ID, a.ID))
	})
	out = out[:min(limit, len(out))]
	for i := range out {
		out[i].OccurredAt = stamp(out[i].at)
	}
	return out
}
