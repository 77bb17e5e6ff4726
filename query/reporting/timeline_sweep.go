package reporting

import (
	"slices"
	"time"
)

// pointState is one customer's subscription on one point (METRICS 2.4–2.5): paying, its amrCents
// and the qualifying subscription's currency.
type pointState struct {
	Paying   bool
	AMR      int64
	Currency string
}

// sweepBuffers are reused across customers.
type sweepBuffers struct {
	breaks  []int64 // epoch seconds: compared once per customer and point, so no time.Time
	charges []ChargeFacts
	paid    Payments
	scratch []ChargeOn
	evIdx   []int
	payIdx  []int
	// ends and days are end(D) and the day number of every point, computed once per request (a date's
	// end is a calendar computation, and every customer needs every point's).
	of      *Date
	ends    []time.Time
	endSecs []int64
	days    []int32
}

// prepare computes the points' ends and day numbers unless they are those of points already.
func (buf *sweepBuffers) prepare(points []Date) {
	if len(points) == 0 || (buf.of == &points[0] && len(buf.ends) == len(points)) {
		return
	}
	buf.of, buf.ends, buf.endSecs, buf.days = &points[0], make([]time.Time, len(points)), make([]int64, len(points)), make([]int32, len(points))
	for i, d := range points {
		buf.ends[i], buf.days[i] = d.End(), usageDay(d)
		buf.endSecs[i] = buf.ends[i].Unix()
	}
}

// sweep evaluates customer c on every point, in order, and calls visit with each point's state.
func sweep(c *tlCustomer, points []Date, buf *sweepBuffers, visit func(i int, st pointState)) {
	sweepRuns(c, points, buf, func(lo, hi int, st pointState) {
		for i := lo; i < hi; i++ {
			visit(i, st)
		}
	})
}

// sweepRuns evaluates customer c on the points, in order, and calls visit with each run of points
// [lo, hi) that share one state; consecutive runs differ (an evaluation at a break that changed
// nothing extends the run, so the callers add fewer runs). A customer's evaluation
// depends on its facts only through comparisons of instants with end(D) (an event or payment before
// end(D), a payment within the evidence window, the trial end, the row's activation and end), so it
// can only change at a point whose end passes one of those instants (breaks): after evaluating
// point i, the next evaluation is at the first point whose end is at or after the first break at or
// after end(i) − 1s, and the points before it keep point i's state.
func sweepRuns(c *tlCustomer, points []Date, buf *sweepBuffers, visit func(lo, hi int, st pointState)) {
	buf.prepare(points)
	n := len(points)
	if len(c.charges) == 0 {
		if n > 0 {
			visit(0, n, pointState{})
		}
		return
	}
	buf.breaks = customerBreaks(c, buf.breaks[:0])
	buf.charges = buf.charges[:0]
	for i := range c.charges {
		ch := &c.charges[i]
		buf.charges = append(buf.charges, ChargeFacts{Charge: &ch.charge, FirstActivated: ch.first, Ended: ch.ended})
	}
	buf.evIdx = resetIdx(buf.evIdx, len(c.charges))
	buf.payIdx = resetIdx(buf.payIdx, len(c.payments))
	unIdx, brIdx := 0, 0
	var (
		runLo int
		run   pointState
	)
	for i := 0; i < n; {
		end := buf.ends[i]
		for j := range c.charges {
			evs := c.charges[j].events
			for buf.evIdx[j] < len(evs) && evs[buf.evIdx[j]].At.Before(end) {
				buf.evIdx[j]++
			}
			buf.charges[j].LastOwn = Event{}
			if k := buf.evIdx[j]; k > 0 {
				buf.charges[j].LastOwn = evs[k-1]
			}
		}
		for unIdx < len(c.uninstalls) && c.uninstalls[unIdx].Before(end) {
			unIdx++
		}
		var lastUninstall time.Time
		if unIdx > 0 {
			lastUninstall = c.uninstalls[unIdx-1]
		}
		buf.paid = buf.paid[:0]
		for j := range c.payments {
			p := &c.payments[j]
			for buf.payIdx[j] < len(p.at) && p.at[buf.payIdx[j]].Before(end) {
				buf.payIdx[j]++
			}
			if k := buf.payIdx[j]; k > 0 {
				buf.paid = buf.paid.with(p.charge, p.currency, p.at[k-1])
			}
		}
		ev := evaluate(points[i], CustomerBilling{Charges: buf.charges, LastUninstall: lastUninstall, Paid: buf.paid}, false, buf.scratch)
		buf.scratch = ev.NonTest
		// The next point to evaluate: the first whose end reaches the first break in [end(i) − 1s, ∞).
		for brIdx < len(buf.breaks) && buf.breaks[brIdx] < buf.endSecs[i]-1 {
			brIdx++
		}
		next := n
		if brIdx < len(buf.breaks) {
			j, _ := slices.BinarySearch(buf.endSecs[i+1:], buf.breaks[brIdx])
			next = i + 1 + j
		}
		if st := (pointState{Paying: ev.Paying, AMR: ev.AMRCents, Currency: ev.Currency}); i == 0 || st != run {
			if i > 0 {
				visit(runLo, i, run)
			}
			runLo, run = i, st
		}
		i = next
	}
	visit(runLo, n, run)
}

func resetIdx(idx []int, n int) []int {
	if cap(idx) < n {
		return make([]int, n)
	}
	idx = idx[:n]
	clear(idx)
	return idx
}

// customerBreaks are the instants at which c's evaluation can change, sorted (duplicates do no
// harm): its events and uninstalls, its charges' activation, end and trial end, its payments and
// the ends of their evidence windows (METRICS 2.1–2.3) that can change it.
func customerBreaks(c *tlCustomer, out []int64) []int64 {
	for i := range c.charges {
		ch := &c.charges[i]
		f := ChargeFacts{Charge: &ch.charge}
		for _, e := range ch.events {
			out = append(out, e.At.Unix())
		}
		for _, t := range []time.Time{ch.charge.ActivatedAt, ch.charge.EndedAt, ch.charge.AcceptedAt} {
			if !t.IsZero() {
				out = append(out, t.Unix())
			}
		}
		if ch.charge.TrialDays > 0 {
			out = append(out, f.trialEnd().Unix())
		}
	}
	for _, t := range c.uninstalls {
		out = append(out, t.Unix())
	}
	for _, p := range c.payments {
		// A customer has a few charges: a search costs less than a map per customer.
		j := 0
		for j < len(c.charges) && c.charges[j].charge.ID != p.charge {
			j++
		}
		if j == len(c.charges) {
			continue // a payment for no charge read (a test charge) is evidence for none
		}
		w := int64(ChargeFacts{Charge: &c.charges[j].charge}.window()) * 86400 // whole UTC days: AddDate(0, 0, w)
		for k, t := range p.at {
			out = append(out, t.Unix())
			// A payment's window ends while it is the latest of its entry only when the next one
			// comes later than that: before then the next is the latest, and fresh, so passing the
			// end changes nothing (a monthly subscriber's every end but the last).
			if k+1 == len(p.at) || p.at[k+1].Unix() > t.Unix()+w {
				out = append(out, t.Unix()+w)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// usageDay is the day number (days since the epoch) of a date.
func usageDay(d Date) int32 { return int32(d.Start().Unix() / 86400) }

// usageAt calls visit with c's usage gross in each currency over the 30 dates ending on each point
// (METRICS 3.2), for the currencies with a sale in that window.
func usageAt(c *tlCustomer, points []Date, buf *sweepBuffers, visit func(i int, cur string, gross int64)) {
	buf.prepare(points)
	for ui := range c.usage {
		u := &c.usage[ui]
		lo, hi := 0, 0 // the window's rows are [lo, hi)
		var sum int64
		for i := range points {
			last := buf.days[i]
			for hi < len(u.days) && u.days[hi] <= last {
				sum += u.gross[hi]
				hi++
			}
			for lo < hi && u.days[lo] < last-29 {
				sum -= u.gross[lo]
				lo++
			}
			if lo < hi {
				visit(i, u.currency, sum)
			}
		}
	}
}

// billedAt calls visit with c's usage sales in each currency over each interval (the dates after
// points[i−1] through points[i], i ≥ 1: the interval's billed usage, METRICS 3.10), for the
// currencies with a sale in it.
func billedAt(c *tlCustomer, points []Date, buf *sweepBuffers, visit func(i int, cur string, b BilledUsage)) {
	buf.prepare(points)
	for ui := range c.usage {
		u := &c.usage[ui]
		j := 0
		for j < len(u.days) && u.days[j] <= buf.days[0] {
			j++
		}
		for i := 1; i < len(points); i++ {
			var b BilledUsage
			for last := buf.days[i]; j < len(u.days) && u.days[j] <= last; j++ {
				b.GrossCents += u.gross[j]
				b.NetCents += u.net[j]
				b.TransactionCount += u.count[j]
			}
			if b.TransactionCount > 0 {
				visit(i, u.currency, b)
			}
		}
	}
}
