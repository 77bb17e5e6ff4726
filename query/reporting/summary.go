package reporting

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// Source values of the responses.
const (
	SourceSummary  = "service_synced_partner_data"
	SourceList     = "customers"
	SourceDetail   = "customer_detail"
	basisNRR       = "subscription_mrr"
	basisTotalMRR  = "total_mrr"
	concentrationN = 10
)

// Request is a summary or metric request, validated by the query edge.
type Request struct {
	Scope         Scope  // the covered apps
	AppID         string // the appId parameter; "" when every selected app is covered
	Range         Range
	Currency      string // "" for every currency
	CustomerScope CustomerScope
}

// UsageBlock is a currency's usage figures (METRICS 3.2, 3.10, 3.11).
type UsageBlock struct {
	UsageMRRCents        int64         `json:"usageMrrCents"`
	BilledUsage          BilledUsage   `json:"billedUsage"`
	ObservedUsageCharges ObservedUsage `json:"observedUsageCharges"`
}

// CurrencyBlock is one currency's metrics (METRICS 3).
type CurrencyBlock struct {
	MRRCents                int64      `json:"mrrCents"`
	SubscriptionMRRCents    int64      `json:"subscriptionMrrCents"`
	UsageMRRCents           int64      `json:"usageMrrCents"`
	ARRCents                int64      `json:"arrCents"`
	PayingCustomers         int64      `json:"payingCustomers"`
	ARPUCents               int64      `json:"arpuCents"`
	NetRevenueRetentionRate *Ratio     `json:"netRevenueRetentionRate"`
	LargestCustomerShare    *Ratio     `json:"largestCustomerShare"`
	TopFiveCustomerShare    *Ratio     `json:"topFiveCustomerShare"`
	TopTenCustomerShare     *Ratio     `json:"topTenCustomerShare"`
	Usage                   UsageBlock `json:"usage"`
}

// MetricBases names the MRR each relative metric is computed on.
type MetricBases struct {
	NetRevenueRetention   string `json:"netRevenueRetention"`
	CustomerConcentration string `json:"customerConcentration"`
}

// Envelope is what every summary and metric response carries.
type Envelope struct {
	Range            Range         `json:"range"`
	AsOf             Date          `json:"asOf"`
	GeneratedAt      Timestamp     `json:"generatedAt"`
	AppID            *string       `json:"appId"`
	CustomerScope    CustomerScope `json:"customerScope"`
	Currencies       []string      `json:"currencies"`
	MixedCurrencies  bool          `json:"mixedCurrencies"`
	Source           string        `json:"source"`
	StaleDataWarning *string       `json:"staleDataWarning"`
	Coverage         Coverage      `json:"coverage"`
}

// Summary is GET /api/v1/summary.
type Summary struct {
	Envelope
	ByCurrency    map[string]CurrencyBlock `json:"byCurrency"`
	MetricBases   MetricBases              `json:"metricBases"`
	UsageActivity UsageActivity            `json:"usageActivity"`
}

// Summary computes the workspace summary. Its slices are shared with kept responses (cache.go):
// the caller must not modify them.
func (s *Store) Summary(ctx context.Context, req Request) (Summary, error) {
	generatedAt := s.now().UTC()
	r, err := s.summaryResult(ctx, req, allNeeds)
	if err != nil {
		return Summary{}, err
	}
	return r.summary(s, req, generatedAt), nil
}

// summary is the response to req built at generatedAt.
func (r *summaryResult) summary(s *Store, req Request, generatedAt time.Time) Summary {
	out := Summary{
		Envelope:      s.envelope(req, generatedAt, r.sync, r.coverage),
		ByCurrency:    map[string]CurrencyBlock{},
		MetricBases:   MetricBases{NetRevenueRetention: basisNRR, CustomerConcentration: basisTotalMRR},
		UsageActivity: r.activity,
	}
	for cur, b := range r.blocks {
		if req.Currency == "" || req.Currency == cur {
			b.Usage.BilledUsage.Complete = r.coverage.Transactions.Complete
			out.ByCurrency[cur] = b
		}
	}
	out.Currencies = sortedKeys(out.ByCurrency)
	out.MixedCurrencies = len(out.Currencies) > 1
	return out
}

// summaryResult is what a summary request computes from the data, whatever its currency filter and
// its instant: the summary and the five metrics are projections of it. It is kept while the data
// stays the same (cache.go), so it must not be changed once returned.
type summaryResult struct {
	blocks   map[string]CurrencyBlock
	activity UsageActivity
	sync     *syncView
	coverage Coverage
}

// summaryNeeds are the parts of a summary result a response shows beyond what decides which
// currencies have a block. A block exists for every currency with an in-scope row behind one of
// its fields (METRICS 3), so every response reads every fact at least that far; a metric that does
// not show observed usage charges or concentration is spared their costlier reads.
type summaryNeeds struct {
	observedSums    bool // the observed usage charges' sums, else which currencies have one
	usageByCustomer bool // each customer's usage (concentration), else the usage per currency
}

var allNeeds = summaryNeeds{observedSums: true, usageByCustomer: true}

// A summary result is assembled from three parts, each kept on its own (cache.go) with the version
// of the tables it reads, so that what lands often does not discard what is costly: received usage
// events (tracking, at any time) change only the usage activity, sync bookkeeping only the sync
// view, and the billing blocks (nearly all the work) change only when platform data lands or an
// exclusion changes.
var (
	billingTables = []string{"reporting_charges", "reporting_charge_facts_text", "reporting_events", "reporting_charge_payments", "reporting_customer_days",
		"reporting_usage_days", "reporting_observed_days_fine", "customer_exclusions", "reporting_customers"}
	activityTables = []string{"usage_events", "customer_exclusions", "reporting_customers"}
	syncTables     = []string{"sync_cursors", "sync_runs"}
)

// summaryBilling is the kept billing part: the currency blocks, without the billed usage's
// complete flag (a coverage fact, set per response).
type summaryBilling struct{ blocks map[string]CurrencyBlock }

// summaryResult assembles the result from its parts, each kept or computed: a whole summary's
// billing serves every need; a failed usage-activity read is not kept, so that the next request
// reads it again. The excluded customers are read at most once per request, for whichever parts
// are computed.
func (s *Store) summaryResult(ctx context.Context, req Request, needs summaryNeeds) (*summaryResult, error) {
	versions := s.readVersions(ctx, summaryTables)
	parts := []string{req.Range.From.String(), req.Range.To.String(), string(req.CustomerScope)}
	billingKeys := []string{cacheKey("summary-billing", req.Scope, parts...)}
	if needs != allNeeds {
		billingKeys = append(billingKeys, cacheKey(fmt.Sprintf("summary-billing%+v", needs), req.Scope, parts...))
	}
	exclusionsOnce := sync.OnceValues(func() (*exclusions, error) { return s.readExclusions(ctx, req.Scope) })
	from, to := req.Range.From.Start(), req.Range.To.End()
	var (
		billing  *summaryBilling
		activity UsageActivity
		view     *syncView
	)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		billing, err = cachedAt(gctx, s, versions.of(billingTables), billingKeys,
			func() (*summaryBilling, error) { return s.computeBilling(gctx, req, needs, exclusionsOnce) },
			func(*summaryBilling) bool { return true })
		return
	})
	g.Go(func() (err error) {
		activity, err = cachedAt(gctx, s, versions.of(activityTables), []string{cacheKey("summary-activity", req.Scope, parts...)},
			func() (UsageActivity, error) {
				ex, err := exclusionsOnce()
				if err != nil {
					return UsageActivity{}, err
				}
				return s.usageActivity(gctx, req.Scope, req.CustomerScope, ex, from, to), nil
			},
			func(a UsageActivity) bool { return a.Loaded })
		return
	})
	g.Go(func() (err error) {
		view, err = cachedAt(gctx, s, versions.of(syncTables), []string{cacheKey("summary-sync", req.Scope)},
			func() (*syncView, error) { return s.readSyncView(gctx, req.Scope) },
			func(*syncView) bool { return true })
		return
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return &summaryResult{blocks: billing.blocks, activity: activity, sync: view, coverage: view.coverage(req.Range, activity.Loaded)}, nil
}

// computeBilling computes the billing part of a summary result.
func (s *Store) computeBilling(ctx context.Context, req Request, needs summaryNeeds, readExclusions func() (*exclusions, error)) (*summaryBilling, error) {
	d := summaryDates{A: req.Range.To, B: req.Range.From.AddDays(-1)}
	from, to := req.Range.From.Start(), req.Range.To.End()
	sc := req.Scope
	var (
		facts    *summaryFacts
		totals   []usageRow
		ex       *exclusions
		observed map[string]ObservedUsage
	)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		facts, err = s.loadSummaryFacts(gctx, sc, d, req.Range, needs.usageByCustomer)
		return
	})
	// The aggregates that are not per customer need the excluded customers as a condition; the
	// facts are per customer, and are scoped in Go.
	g.Go(func() (err error) {
		if ex, err = readExclusions(); err != nil {
			return err
		}
		h, hctx := errgroup.WithContext(gctx)
		h.Go(func() (err error) {
			observed, err = s.observedUsage(hctx, sc, req.CustomerScope, ex, from, to, needs.observedSums)
			return
		})
		if !needs.usageByCustomer {
			h.Go(func() error { return s.readUsageTotals(hctx, sc, req.CustomerScope, ex, d, req.Range, &totals) })
		}
		return h.Wait()
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	facts.usageTotals = totals
	return &summaryBilling{blocks: computeBlocks(facts, ex, req.CustomerScope, d, observed)}, nil
}

func (s *Store) envelope(req Request, generatedAt time.Time, sync *syncView, cov Coverage) Envelope {
	e := Envelope{Range: req.Range, AsOf: req.Range.To, GeneratedAt: Timestamp(generatedAt), CustomerScope: req.CustomerScope,
		Source: SourceSummary, StaleDataWarning: sync.staleDataWarning(generatedAt, req.Range), Coverage: cov}
	if req.AppID != "" {
		id := req.AppID
		e.AppID = &id
	}
	return e
}

// computeBlocks evaluates every customer of the facts on A and B and sums the in-scope ones per
// currency (METRICS 3.1–3.11). A block exists for every currency with an in-scope row behind one
// of its fields. The customers are evaluated in parallel parts whose sums are then added: by then
// ClickHouse has answered, and the machine's cores are free for this.
func computeBlocks(f *summaryFacts, ex *exclusions, cs CustomerScope, d summaryDates, observed map[string]ObservedUsage) map[string]CurrencyBlock {
	customers := f.join()
	parts := make([]currencySums, min(runtime.GOMAXPROCS(0), 1+len(customers)/minCustomersPerPart))
	var wg sync.WaitGroup
	for i := range parts {
		lo, hi := len(customers)*i/len(parts), len(customers)*(i+1)/len(parts)
		wg.Add(1)
		go func() {
			defer wg.Done()
			parts[i].add(f, customers[lo:hi], ex, cs, d)
		}()
	}
	wg.Wait()
	var sums currencySums
	for i := range parts {
		sums.merge(&parts[i])
	}
	for _, r := range f.usageTotals { // already scoped, and with no customer's total (concentration)
		a := sums.get(r.currency)
		a.usage += r.usage.TrailingGross
		a.billed.GrossCents += r.usage.RangeGross
		a.billed.NetCents += r.usage.RangeNet
		a.billed.TransactionCount += r.usage.RangeCount
	}
	for cur, o := range observed {
		if o.Count > 0 {
			sums.get(cur)
		}
	}
	blocks := map[string]CurrencyBlock{}
	for _, ca := range sums {
		cur, a := ca.cur, ca.acc
		b := a.block()
		bu := a.billed
		bu.FeesCents = bu.GrossCents - bu.NetCents
		b.Usage = UsageBlock{UsageMRRCents: a.usage, BilledUsage: bu, ObservedUsageCharges: observed[cur]}
		blocks[cur] = b
	}
	return blocks
}

// block is the point-in-time fields of a currency's block (METRICS 3.1–3.9) from its sums; the
// summary adds the usage block, the timeline engine (timeline_series.go) uses it as it is.
func (a *currencyAcc) block() CurrencyBlock {
	b := CurrencyBlock{SubscriptionMRRCents: a.sub, UsageMRRCents: a.usage, PayingCustomers: a.paying}
	b.MRRCents = a.sub + a.usage
	b.ARRCents = b.MRRCents * 12
	if a.paying > 0 {
		b.ARPUCents = roundHalfUp(a.sub, a.paying)
	}
	b.NetRevenueRetentionRate = ratio(a.nrrEnd, a.nrrStart)
	b.LargestCustomerShare, b.TopFiveCustomerShare, b.TopTenCustomerShare = a.top.shares()
	return b
}

// minCustomersPerPart: below this, a goroutine costs more than it saves.
const minCustomersPerPart = 4096

// currencyAcc is one currency's sums.
type currencyAcc struct {
	sub, usage, paying int64
	nrrStart, nrrEnd   int64
	billed             BilledUsage
	top                topTotals // per customer: amrCents in this currency + its usage (METRICS 3.9)
}

// currencySums are the sums per currency: a handful, so a slice searched in order beats hashing
// each customer's currency.
type currencySums []struct {
	cur string
	acc *currencyAcc
}

func (s *currencySums) get(cur string) *currencyAcc {
	for _, a := range *s {
		if a.cur == cur {
			return a.acc
		}
	}
	a := &currencyAcc{}
	*s = append(*s, struct {
		cur string
		acc *currencyAcc
	}{cur, a})
	return a
}

// add evaluates the customers and adds the in-scope ones.
func (s *currencySums) add(f *summaryFacts, customers []summaryCustomer, ex *exclusions, cs CustomerScope, d summaryDates) {
	var buf billingBuffers
	for i := range customers {
		c := &customers[i]
		if !ex.admits(cs, c.key) {
			continue
		}
		var evA, evB Evaluation
		if c.charges != 0 {
			onA, onB := f.billing(c, &buf)
			evA, evB = evaluate(d.A, onA, false, buf.scratchA), evaluate(d.B, onB, false, buf.scratchB)
			buf.scratchA, buf.scratchB = evA.NonTest, evB.NonTest
		}
		if evA.Paying {
			a := s.get(evA.Currency)
			a.sub += evA.AMRCents
			a.paying++
		}
		if evB.Paying {
			a := s.get(evB.Currency)
			a.nrrStart += evB.AMRCents
			if evA.Paying && evA.Currency == evB.Currency {
				a.nrrEnd += evA.AMRCents
			}
		}
		amrCounted := false
		for ref := c.usage; ref != 0; {
			r := f.usage.at(ref)
			ref = r.next
			cur, u := r.currency, r.usage
			a := s.get(cur)
			a.usage += u.TrailingGross
			a.billed.GrossCents += u.RangeGross
			a.billed.NetCents += u.RangeNet
			a.billed.TransactionCount += u.RangeCount
			total := u.TrailingGross
			if evA.Paying && evA.Currency == cur {
				total, amrCounted = total+evA.AMRCents, true
			}
			a.top.add(total)
		}
		if evA.Paying && !amrCounted {
			s.get(evA.Currency).top.add(evA.AMRCents)
		}
	}
}

// merge adds another part's sums.
func (s *currencySums) merge(o *currencySums) {
	for _, ca := range *o {
		a, b := s.get(ca.cur), ca.acc
		a.sub, a.usage, a.paying = a.sub+b.sub, a.usage+b.usage, a.paying+b.paying
		a.nrrStart, a.nrrEnd = a.nrrStart+b.nrrStart, a.nrrEnd+b.nrrEnd
		a.billed.GrossCents += b.billed.GrossCents
		a.billed.NetCents += b.billed.NetCents
		a.billed.TransactionCount += b.billed.TransactionCount
		a.top.merge(&b.top)
	}
}

// topTotals keeps what METRICS 3.9 needs of a currency's customer totals: the sum of the positive
// ones and the largest concentrationN, in descending order.
type topTotals struct {
	sum int64
	top []int64
}

func (t *topTotals) add(v int64) {
	if v <= 0 {
		return
	}
	t.sum += v
	if len(t.top) == concentrationN && v <= t.top[concentrationN-1] {
		return
	}
	i, _ := slices.BinarySearchFunc(t.top, v, func(e, v int64) int { return cmp.Compare(v, e) })
	if len(t.top) < concentrationN {
		t.top = append(t.top, 0)
	}
	copy(t.top[i+1:], t.top[i:])
	t.top[i] = v
}

// merge adds another set of totals.
func (t *topTotals) merge(o *topTotals) {
	sum := t.sum + o.sum
	for _, v := range o.top {
		t.add(v)
	}
	t.sum = sum
}

// shares are the shares of the largest 1, 5 and 10 totals; nil when their sum is 0.
func (t *topTotals) shares() (top1, top5, top10 *Ratio) {
	topK := func(k int) int64 {
		var s int64
		for _, v := range t.top[:min(k, len(t.top))] {
			s += v
		}
		return s
	}
	return ratio(topK(1), t.sum), ratio(topK(5), t.sum), ratio(topK(concentrationN), t.sum)
}
