package reporting

import (
	"runtime"
	"sync"
)

// curGross is one currency's usage of a customer on a point.
type curGross struct {
	cur   string
	gross int64
}

// timelineSums are the sums per currency at every point: points[0] is the opening point, whose
// NRR is not defined; the NRR of point i compares the cohort of point i − 1 with itself on point i
// (METRICS 3.8 with S = point i − 1 and E = point i).
type timelineSums struct {
	sums     []currencySums
	observed []map[string]ObservedUsage
}

// timelineNeeds is what a caller reads of the blocks beyond the sums every metric's currency set
// depends on. Concentration (the top ten customers per currency and point, METRICS 3.9) is the one
// part a series of another metric never reads, and the costliest per customer and point, so a
// series of one metric skips it; its blocks then carry no concentration shares.
type timelineNeeds struct {
	concentration bool
	// observedSums: the observed usage charges' sums (the usage metric), else only which
	// currencies have one on each interval (a block's presence), which ClickHouse answers without
	// de-duplicating a year of usage records (FINAL), as the summary's metrics do (summaryNeeds).
	observedSums bool
}

// needsAll is every field of the blocks: movements, cohorts, several metrics at once, the tests.
var needsAll = timelineNeeds{concentration: true, observedSums: true}

// needsOf is what a series of metric name reads (focus in metrics.go).
func needsOf(name string) timelineNeeds {
	return timelineNeeds{concentration: name == MetricCustomerConcentration, observedSums: name == MetricUsage}
}

// computeTimeline sweeps every in-scope customer across the points and sums per point and
// currency what the summary sums on its reporting date (computeBlocks): subscription MRR, paying
// customers, usage MRR, the NRR cohort since the previous point, and concentration. Customers are
// swept in parallel parts whose sums are then added.
func computeTimeline(f *timelineFacts, ex *exclusions, cs CustomerScope, points []Date, observed []observedDay) timelineSums {
	return computeTimelineFor(needsAll, f, ex, cs, points, observed)
}

// computeTimelineFor is computeTimeline computing only what need says is read: the blocks have the
// same currencies on every point either way (a currency's presence never depends on concentration).
func computeTimelineFor(need timelineNeeds, f *timelineFacts, ex *exclusions, cs CustomerScope, points []Date, observed []observedDay) timelineSums {
	customers := f.customers
	parts := make([][]currencySums, min(runtime.GOMAXPROCS(0), 1+len(customers)/minCustomersPerPart))
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := len(customers)*p/len(parts), len(customers)*(p+1)/len(parts)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if need.concentration {
				parts[p] = sumTimeline(need, customers[lo:hi], ex, cs, points)
			} else {
				parts[p] = sumRuns(customers[lo:hi], ex, cs, points)
			}
		}()
	}
	wg.Wait()
	out := timelineSums{sums: make([]currencySums, len(points)), observed: make([]map[string]ObservedUsage, len(points))}
	for p := range parts {
		for i := range out.sums {
			out.sums[i].merge(&parts[p][i])
		}
	}
	// Usage read per currency (timelineFacts.usageTotals), already scoped: what sumTimeline adds per
	// customer, added once.
	if len(f.usageTotals) > 0 {
		var buf sweepBuffers
		all := &tlCustomer{usage: f.usageTotals}
		usageAt(all, points, &buf, func(i int, cur string, gross int64) { out.sums[i].get(cur).usage += gross })
		billedAt(all, points, &buf, func(i int, cur string, b BilledUsage) { out.sums[i].get(cur).addBilled(b) })
	}
	out.addObserved(points, observed, need.observedSums)
	return out
}

// addObserved adds the observed usage charges of each interval, already scoped (METRICS 3.11): a
// currency with one has a block, as in the summary; their sums only when sums is set (else only
// the currencies' presence was read).
func (t *timelineSums) addObserved(points []Date, observed []observedDay, sums bool) {
	i := 1
	for _, o := range observed { // sorted by day
		for i < len(points) && o.day > usageDay(points[i]) {
			i++
		}
		if i == len(points) {
			break
		}
		if o.day <= usageDay(points[0]) || o.count == 0 {
			continue
		}
		t.sums[i].get(o.cur)
		if !sums {
			continue
		}
		if t.observed[i] == nil {
			t.observed[i] = map[string]ObservedUsage{}
		}
		b := t.observed[i][o.cur]
		b.GrossCents, b.Count = b.GrossCents+o.gross, b.Count+o.count
		t.observed[i][o.cur] = b
	}
}

// everywhere are the currencies with a block on every interval (points 1…): an observed usage
// charge in one of them adds no block.
func (t *timelineSums) everywhere() []string {
	if len(t.sums) < 2 {
		return nil
	}
	var out []string
	for _, ca := range t.sums[1] {
		every := true
		for i := 2; i < len(t.sums) && every; i++ {
			every = t.sums[i].has(ca.cur)
		}
		if every {
			out = append(out, ca.cur)
		}
	}
	return out
}

func (s currencySums) has(cur string) bool {
	for _, a := range s {
		if a.cur == cur {
			return true
		}
	}
	return false
}

// observedDay is one currency's observed usage charges on one day.
type observedDay struct {
	cur          string
	day          int32
	gross, count int64
}

// sumTimeline is computeTimeline for one part of the customers.
func sumTimeline(need timelineNeeds, customers []*tlCustomer, ex *exclusions, cs CustomerScope, points []Date) []currencySums {
	sums := make([]currencySums, len(points))
	states := make([]pointState, len(points))
	usage := make([][]curGross, len(points))
	var buf sweepBuffers
	for _, c := range customers {
		if !ex.admits(cs, c.key) {
			continue
		}
		sweep(c, points, &buf, func(i int, st pointState) { states[i] = st })
		for i := range usage {
			usage[i] = usage[i][:0]
		}
		usageAt(c, points, &buf, func(i int, cur string, gross int64) { usage[i] = append(usage[i], curGross{cur, gross}) })
		billedAt(c, points, &buf, func(i int, cur string, b BilledUsage) { sums[i].get(cur).addBilled(b) })
		for i := range points {
			// Nothing to add at a point where the customer is not paying, was not paying at the
			// previous one and has no usage.
			if !states[i].Paying && (i == 0 || !states[i-1].Paying) && len(usage[i]) == 0 {
				continue
			}
			s, st := &sums[i], states[i]
			if st.Paying {
				a := s.get(st.Currency)
				a.sub += st.AMR
				a.paying++
			}
			if i > 0 && states[i-1].Paying {
				prev := states[i-1]
				a := s.get(prev.Currency)
				a.nrrStart += prev.AMR
				if st.Paying && st.Currency == prev.Currency {
					a.nrrEnd += st.AMR
				}
			}
			amrCounted := false
			for _, u := range usage[i] {
				a := s.get(u.cur)
				a.usage += u.gross
				if !need.concentration {
					continue
				}
				total := u.gross
				if st.Paying && st.Currency == u.cur {
					total, amrCounted = total+st.AMR, true
				}
				a.top.add(total)
			}
			if need.concentration && st.Paying && !amrCounted {
				s.get(st.Currency).top.add(st.AMR)
			}
		}
	}
	return sums
}

// addBilled adds an interval's billed usage.
func (a *currencyAcc) addBilled(b BilledUsage) {
	a.billed.GrossCents += b.GrossCents
	a.billed.NetCents += b.NetCents
	a.billed.TransactionCount += b.TransactionCount
}

// blocks are each point's currency blocks (METRICS 3.1–3.11; the range sums over the interval
// ending on the point), without billed usage's complete flag (a coverage fact of the interval).
func (t timelineSums) blocks() []map[string]CurrencyBlock {
	out := make([]map[string]CurrencyBlock, len(t.sums))
	for i, s := range t.sums {
		out[i] = map[string]CurrencyBlock{}
		for _, ca := range s {
			b := ca.acc.block()
			bu := ca.acc.billed
			bu.FeesCents = bu.GrossCents - bu.NetCents
			b.Usage = UsageBlock{UsageMRRCents: ca.acc.usage, BilledUsage: bu, ObservedUsageCharges: t.observed[i][ca.cur]}
			out[i][ca.cur] = b
		}
	}
	return out
}
