package reporting

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
)

// Attribution by acquisition channel (docs/METRICS.md 10): each customer's first touch through the
// identity join, with the tracking funnel's counts and the reporting figures of the customers per
// channel. The tracking side is read one table per query, each reduced by ClickHouse (customers,
// shops' first links, acquisitions' first touches and the count of those first seen in the range,
// funnel events per acquisition) and joined here by key (attribution_tracking.go); the billing side is the summary's facts evaluated once per customer on asOf (the usage MRR
// read with the net revenue, one read of the transactions), so MRR per channel adds up to the
// summary's MRR exactly.

// groupBy values (METRICS 10.1).
const (
	GroupUTMSource   = "utm_source"
	GroupUTMMedium   = "utm_medium"
	GroupUTMCampaign = "utm_campaign"
	GroupTrackerRef  = "tracker_ref"
	GroupClickIDType = "click_id_type"
	GroupLandingPath = "landing_path"
)

// AttributionGroups lists the groupBy values in the order the documentation gives them.
var AttributionGroups = []string{GroupUTMSource, GroupUTMMedium, GroupUTMCampaign, GroupTrackerRef, GroupClickIDType, GroupLandingPath}

// Row kinds (METRICS 10.2): a channel, or one of the rows of customers and events no tracked first
// touch can be credited with.
const (
	RowChannel          = "channel"
	RowUnattributed     = "unattributed"
	RowBeforeTracking   = "before_tracking"
	RowNoBrowserHistory = "no_browser_history"
	SourceAttribution   = "attribution"
)

// installSkew is how much later than a customer's first install its linked acquisition may have been
// first seen and still be credited with it: browser clocks run at most this far ahead of the
// server's (browser events further ahead are stamped with their receipt, docs/TRACKING.md 3).
const installSkew = time.Hour

// AttributionRequest is GET /api/v1/attribution, validated by the query edge.
type AttributionRequest struct {
	Scope    Scope  // the covered apps
	AppID    string // the appId parameter; "" when every selected app is covered
	Range    Range
	Currency string // "" for every currency
	GroupBy  string // one of AttributionGroups
}

// AttributionMoney is one currency's figures of a row's customers (METRICS 10.3).
type AttributionMoney struct {
	PayingCustomers      int64 `json:"payingCustomers"`
	MRRCents             int64 `json:"mrrCents"`
	SubscriptionMRRCents int64 `json:"subscriptionMrrCents"`
	UsageMRRCents        int64 `json:"usageMrrCents"`
	NetRevenueCents      int64 `json:"netRevenueCents"`
}

// AttributionRow is one channel, or one of the rows without a credited first touch.
type AttributionRow struct {
	Kind string `json:"kind"`
	// Key is the channel's value ("" for a first touch without one); null for the other kinds.
	Key                 *string                     `json:"key"`
	Acquisitions        int64                       `json:"acquisitions"`
	Installs            int64                       `json:"installs"`
	TrialsStarted       int64                       `json:"trialsStarted"`
	TrialsConverted     int64                       `json:"trialsConverted"`
	Customers           int64                       `json:"customers"`
	PayingCustomers     int64                       `json:"payingCustomers"`
	InstallRate         *Ratio                      `json:"installRate"`
	TrialStartRate      *Ratio                      `json:"trialStartRate"`
	TrialConversionRate *Ratio                      `json:"trialConversionRate"`
	PayingRate          *Ratio                      `json:"payingRate"`
	ByCurrency          map[string]AttributionMoney `json:"byCurrency"`

	acc map[string]*AttributionMoney // ByCurrency while the rows are added up
}

// money is the row's block of a currency, added up in place.
func (r *AttributionRow) money(cur string) *AttributionMoney {
	m, ok := r.acc[cur]
	if !ok {
		if r.acc == nil {
			r.acc = map[string]*AttributionMoney{}
		}
		m = &AttributionMoney{}
		r.acc[cur] = m
	}
	return m
}

// TrackingAppCoverage says since when an app's tracking sources have browser history stored.
type TrackingAppCoverage struct {
	AppID string `json:"appId"`
	// FirstBrowserEventAt is the earliest browser event still stored (null: none); the 180-day
	// retention moves it forward.
	FirstBrowserEventAt Timestamp `json:"firstBrowserEventAt"`
	// CoversRange is true when that event is at or before the range's first instant.
	CoversRange bool `json:"coversRange"`
}

// AttributionCoverage is the summary's coverage of the platform data the customers' figures come
// from (METRICS 7: transactions for net revenue and payment evidence, lifecycle for charges), and the
// tracking coverage of every covered app.
type AttributionCoverage struct {
	Transactions TransactionCoverage   `json:"transactions"`
	Lifecycle    StreamCoverage        `json:"lifecycle"`
	Apps         []AppCoverage         `json:"apps,omitempty"`
	Tracking     []TrackingAppCoverage `json:"tracking"`
}

// Attribution is GET /api/v1/attribution: the summary's envelope (without customerScope: excluded
// customers are always left out) and the rows.
type Attribution struct {
	Range            Range               `json:"range"`
	AsOf             Date                `json:"asOf"`
	GeneratedAt      Timestamp           `json:"generatedAt"`
	AppID            *string             `json:"appId"`
	GroupBy          string              `json:"groupBy"`
	Currencies       []string            `json:"currencies"`
	MixedCurrencies  bool                `json:"mixedCurrencies"`
	Source           string              `json:"source"`
	StaleDataWarning *string             `json:"staleDataWarning"`
	Coverage         AttributionCoverage `json:"coverage"`
	Rows             []AttributionRow    `json:"rows"`
}

// attributionTables are the tables an attribution response reads; a change in any of them discards
// a kept one (cache.go).
var attributionTables = slices.Concat(billingTables, syncTables,
	[]string{"acquisition_touches", "shop_attribution", "funnel_events"})

// attributionResult is what an attribution request computes from the data, whatever its currency
// filter and its instant; it is kept while the data stays the same (cache.go), so it must not be
// changed once returned.
type attributionResult struct {
	rows     []AttributionRow // every currency
	view     *syncView
	tracking []TrackingAppCoverage
}

// Attribution computes attribution by channel (METRICS 10), or serves a kept result while every
// table it read is unchanged, as the summary does.
func (s *Store) Attribution(ctx context.Context, req AttributionRequest) (Attribution, error) {
	group, ok := attributionGroups[req.GroupBy]
	if !ok {
		return Attribution{}, fmt.Errorf("%w: groupBy must be one of %s", ErrInvalid, strings.Join(AttributionGroups, ", "))
	}
	generatedAt := s.now().UTC()
	key := cacheKey("attribution", req.Scope, req.Range.From.String(), req.Range.To.String(), req.GroupBy)
	r, err := cached(ctx, s, []string{key}, attributionTables,
		func() (*attributionResult, error) { return s.computeAttribution(ctx, req, group) },
		func(*attributionResult) bool { return true })
	if err != nil {
		return Attribution{}, err
	}
	cov := r.view.coverage(req.Range, false)
	out := Attribution{Range: req.Range, AsOf: req.Range.To, GeneratedAt: Timestamp(generatedAt), GroupBy: req.GroupBy,
		Source: SourceAttribution, StaleDataWarning: r.view.staleDataWarning(generatedAt, req.Range),
		Coverage: AttributionCoverage{Transactions: cov.Transactions, Lifecycle: cov.Lifecycle, Apps: cov.Apps, Tracking: r.tracking},
		Rows:     make([]AttributionRow, len(r.rows))}
	if req.AppID != "" {
		id := req.AppID
		out.AppID = &id
	}
	currencies := map[string]bool{}
	for i, row := range r.rows {
		row.ByCurrency = map[string]AttributionMoney{}
		for cur, m := range r.rows[i].ByCurrency {
			if req.Currency == "" || cur == req.Currency {
				row.ByCurrency[cur] = m
				currencies[cur] = true
			}
		}
		out.Rows[i] = row
	}
	out.Currencies = sortedKeys(currencies)
	out.MixedCurrencies = len(out.Currencies) > 1
	return out, nil
}

// computeAttribution reads the facts concurrently and adds up the rows.
func (s *Store) computeAttribution(ctx context.Context, req AttributionRequest, group string) (*attributionResult, error) {
	d := summaryDates{A: req.Range.To, B: req.Range.To} // only asOf is evaluated
	sc := req.Scope
	var (
		facts *summaryFacts
		ex    *exclusions
		view  *syncView
		track *trackingFacts
		rev   []revenueRow
	)
	g, gctx := errgroup.WithContext(ctx)
	// The customers' usage comes with their net revenue (readRevenue), one read of the transactions.
	g.Go(func() (err error) { facts, err = s.loadSummaryFacts(gctx, sc, d, req.Range, false); return })
	g.Go(func() (err error) { ex, err = s.readExclusions(gctx, sc); return })
	g.Go(func() (err error) { view, err = s.readSyncView(gctx, sc); return })
	g.Go(func() (err error) { track, err = s.readTracking(gctx, sc, group, req.Range); return })
	g.Go(func() (err error) { rev, err = s.readRevenue(gctx, sc, req.Range); return })
	if err := g.Wait(); err != nil {
		return nil, err
	}

	since := track.since
	t := newAttributionTable()
	for grp, n := range track.acquisitions {
		t.channel(grp).Acquisitions += n
	}
	for _, f := range track.funnel {
		r := t.funnelRow(f, track.touches)
		r.Installs += f.installs
		r.TrialsStarted += f.trials
		r.TrialsConverted += f.converted
	}
	t.addCustomers(facts, ex, d.A, track, sc.appList(), rev)
	return &attributionResult{rows: t.rows(), view: view, tracking: trackingCoverage(sc, since, req.Range)}, nil
}

// trackingCoverage is the tracking coverage of the covered apps, by appId.
func trackingCoverage(sc Scope, since map[string]time.Time, r Range) []TrackingAppCoverage {
	out := []TrackingAppCoverage{}
	for _, app := range slices.Sorted(slices.Values(sc.AppIDs)) {
		first := since[app]
		out = append(out, TrackingAppCoverage{AppID: app, FirstBrowserEventAt: Timestamp(first),
			CoversRange: !first.IsZero() && !first.After(r.From.Start())})
	}
	return out
}

// attributionTable accumulates the rows.
type attributionTable struct {
	channels map[string]*AttributionRow
	special  map[string]*AttributionRow
}

func newAttributionTable() *attributionTable {
	t := &attributionTable{channels: map[string]*AttributionRow{}, special: map[string]*AttributionRow{}}
	for _, k := range []string{RowUnattributed, RowBeforeTracking, RowNoBrowserHistory} {
		t.special[k] = &AttributionRow{Kind: k}
	}
	return t
}

func (t *attributionTable) channel(key string) *AttributionRow {
	r, ok := t.channels[key]
	if !ok {
		k := key
		r = &AttributionRow{Kind: RowChannel, Key: &k}
		t.channels[key] = r
	}
	return r
}

// funnelRow is the row the funnel events of one acquisition count in.
func (t *attributionTable) funnelRow(f funnelCount, touches map[pairKey]touch) *AttributionRow {
	if !f.attributed {
		return t.special[RowUnattributed]
	}
	tc, ok := touches[f.acquisition]
	if !ok {
		return t.special[RowNoBrowserHistory]
	}
	return t.channel(tc.grp)
}

// customerRow is the row a customer with a customer row counts in (METRICS 10.2, rules 2–5; one
// without, rule 1, is unattributed: nothing says which shop it is): its shop's first link in its
// app, that acquisition's first touch, its first install.
func (t *attributionTable) customerRow(c *attributedCustomer, track *trackingFacts, apps []string) *AttributionRow {
	installed := unix(c.installed)
	if ref, linked := track.links[c.shop]; linked {
		tc, touched := track.touches[ref]
		switch {
		case !touched:
			return t.special[RowNoBrowserHistory]
		case installed.IsZero() || !tc.firstSeen.After(installed.Add(installSkew)):
			return t.channel(tc.grp)
		}
		// The browser arrived after the shop had installed: it was linked to an existing customer.
	}
	var app string
	if c.app > 0 && int(c.app) <= len(apps) {
		app = apps[c.app-1]
	}
	start, tracked := track.since[app]
	if !tracked || (!installed.IsZero() && installed.Before(start)) {
		return t.special[RowBeforeTracking]
	}
	return t.special[RowUnattributed]
}

// rows returns the rows in order (channels by key, then the other kinds) with their rates and their
// currency blocks.
func (t *attributionTable) rows() []AttributionRow {
	keys := slices.Sorted(maps.Keys(t.channels))
	out := make([]AttributionRow, 0, len(keys)+len(t.special))
	for _, k := range keys {
		out = append(out, *t.channels[k])
	}
	for _, k := range []string{RowUnattributed, RowBeforeTracking, RowNoBrowserHistory} {
		out = append(out, *t.special[k])
	}
	for i := range out {
		r := &out[i]
		r.ByCurrency = make(map[string]AttributionMoney, len(r.acc))
		for cur, m := range r.acc {
			r.ByCurrency[cur] = *m
		}
		r.acc = nil
		r.InstallRate = ratio(r.Installs, r.Acquisitions)
		r.TrialStartRate = ratio(r.TrialsStarted, r.Installs)
		r.TrialConversionRate = ratio(r.TrialsConverted, r.TrialsStarted)
		r.PayingRate = ratio(r.PayingCustomers, r.Customers)
	}
	return out
}
