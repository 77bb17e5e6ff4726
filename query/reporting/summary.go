package reporting

import (
	"cmp"
	"context"
	"slices"
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

// Summary computes the workspace summary.
func (s *Store) Summary(ctx context.Context, req Request) (Summary, error) {
	generatedAt := s.now().UTC()
	d := summaryDates{A: req.Range.To, B: req.Range.From.AddDays(-1)}
	from, to := req.Range.From.Start(), req.Range.To.End()
	sc := req.Scope
	var (
		facts    *summaryFacts
		observed map[string]ObservedUsage
		activity UsageActivity
		sync     *syncView
	)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { facts, err = s.loadSummaryFacts(gctx, sc, d, req.Range); return })
	g.Go(func() (err error) { observed, err = s.observedUsage(gctx, sc, req.CustomerScope, from, to); return })
	g.Go(func() error { activity = s.usageActivity(gctx, sc, req.CustomerScope, nil, from, to); return nil })
	g.Go(func() (err error) { sync, err = s.readSyncView(gctx, sc); return })
	if err := g.Wait(); err != nil {
		return Summary{}, err
	}
	cov := sync.coverage(req.Range, activity.Loaded)
	blocks := computeBlocks(facts, req.CustomerScope, d, observed, cov.Transactions.Complete)
	out := Summary{
		Envelope:      s.envelope(req, generatedAt, sync, cov),
		ByCurrency:    map[string]CurrencyBlock{},
		MetricBases:   MetricBases{NetRevenueRetention: basisNRR, CustomerConcentration: basisTotalMRR},
		UsageActivity: activity,
	}
	for cur, b := range blocks {
		if req.Currency == "" || req.Currency == cur {
			out.ByCurrency[cur] = b
		}
	}
	out.Currencies = sortedKeys(out.ByCurrency)
	out.MixedCurrencies = len(out.Currencies) > 1
	return out, nil
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
// of its fields.
func computeBlocks(f *summaryFacts, cs CustomerScope, d summaryDates, observed map[string]ObservedUsage, complete bool) map[string]CurrencyBlock {
	type acc struct {
		sub, usage, paying int64
		nrrStart, nrrEnd   int64
		billed             BilledUsage
		totals             []int64 // per customer: amrCents in this currency + its usage (METRICS 3.9)
	}
	accs := map[string]*acc{}
	get := func(cur string) *acc {
		a := accs[cur]
		if a == nil {
			a = &acc{}
			accs[cur] = a
		}
		return a
	}
	for _, c := range f.join() {
		if !cs.admits(c.excluded) {
			continue
		}
		var evA, evB Evaluation
		if len(c.charges) > 0 {
			evA, evB = evaluate(d.A, c.onA(), false), evaluate(d.B, c.onB(), false)
		}
		if evA.Paying {
			a := get(evA.Currency)
			a.sub += evA.AMRCents
			a.paying++
		}
		if evB.Paying {
			a := get(evB.Currency)
			a.nrrStart += evB.AMRCents
			if evA.Paying && evA.Currency == evB.Currency {
				a.nrrEnd += evA.AMRCents
			}
		}
		amrCounted := false
		for _, r := range c.usage {
			cur, u := r.currency, r.usage
			a := get(cur)
			a.usage += u.TrailingGross
			a.billed.GrossCents += u.RangeGross
			a.billed.NetCents += u.RangeNet
			a.billed.TransactionCount += u.RangeCount
			total := u.TrailingGross
			if evA.Paying && evA.Currency == cur {
				total, amrCounted = total+evA.AMRCents, true
			}
			a.totals = append(a.totals, total)
		}
		if evA.Paying && !amrCounted {
			a := get(evA.Currency)
			a.totals = append(a.totals, evA.AMRCents)
		}
	}
	for cur, o := range observed {
		if o.Count > 0 {
			get(cur)
		}
	}
	blocks := map[string]CurrencyBlock{}
	for cur, a := range accs {
		b := CurrencyBlock{SubscriptionMRRCents: a.sub, UsageMRRCents: a.usage, PayingCustomers: a.paying}
		b.MRRCents = a.sub + a.usage
		b.ARRCents = b.MRRCents * 12
		if a.paying > 0 {
			b.ARPUCents = roundHalfUp(a.sub, a.paying)
		}
		b.NetRevenueRetentionRate = ratio(a.nrrEnd, a.nrrStart)
		b.LargestCustomerShare, b.TopFiveCustomerShare, b.TopTenCustomerShare = concentration(a.totals)
		bu := a.billed
		bu.FeesCents, bu.Complete = bu.GrossCents-bu.NetCents, complete
		b.Usage = UsageBlock{UsageMRRCents: a.usage, BilledUsage: bu, ObservedUsageCharges: observed[cur]}
		blocks[cur] = b
	}
	return blocks
}

// concentration is METRICS 3.9: the shares of the largest 1, 5 and 10 positive totals; nil when
// their sum is 0.
func concentration(totals []int64) (top1, top5, top10 *Ratio) {
	vals := make([]int64, 0, len(totals))
	var sum int64
	for _, v := range totals {
		if v > 0 {
			vals = append(vals, v)
			sum += v
		}
	}
	slices.SortFunc(vals, func(a, b int64) int { return cmp.Compare(b, a) })
	topK := func(k int) int64 {
		var t int64
		for _, v := range vals[:min(k, len(vals))] {
			t += v
		}
		return t
	}
	return ratio(topK(1), sum), ratio(topK(5), sum), ratio(topK(concentrationN), sum)
}
