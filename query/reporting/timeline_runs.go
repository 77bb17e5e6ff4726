package reporting

// sumRuns is sumTimeline without concentration: what a customer adds on a point depends only on its
// state there and on the previous point's, and a customer's state changes on a few points of a
// year (sweepRuns), so each run of equal states is added once, as differences between consecutive
// points per currency, instead of once per point: O(runs) per customer rather than O(points). The
// sums per point are then the running totals of the differences. The customers' own usage, when
// read (usageByCustomer), is added per point as sumTimeline adds it.
func sumRuns(customers []*tlCustomer, ex *exclusions, cs CustomerScope, points []Date) []currencySums {
	n := len(points)
	var (
		diffs []*runDiffs
		buf   sweepBuffers
	)
	get := func(cur string) *runDiffs {
		for _, d := range diffs {
			if d.cur == cur {
				return d
			}
		}
		d := &runDiffs{cur: cur, at: make([]runDiff, n+1)}
		diffs = append(diffs, d)
		return d
	}
	sums := make([]currencySums, n)
	for _, c := range customers {
		if !ex.admits(cs, c.key) {
			continue
		}
		var prev pointState
		sweepRuns(c, points, &buf, func(lo, hi int, st pointState) {
			if st.Paying {
				d := get(st.Currency)
				d.add(lo, hi, runDiff{sub: st.AMR, paying: 1, present: 1})
				// The NRR of the points after the run's first (METRICS 3.8: the same customer paying
				// on the previous point, in the same currency).
				d.add(lo+1, hi, runDiff{nrrStart: st.AMR, nrrEnd: st.AMR})
			}
			if lo > 0 && prev.Paying { // the run's first point, against the previous run's last
				d := get(prev.Currency)
				add := runDiff{nrrStart: prev.AMR, present: 1}
				if st.Paying && st.Currency == prev.Currency {
					add.nrrEnd = st.AMR
				}
				d.add(lo, lo+1, add)
			}
			prev = st
		})
		usageAt(c, points, &buf, func(i int, cur string, gross int64) { sums[i].get(cur).usage += gross })
		billedAt(c, points, &buf, func(i int, cur string, b BilledUsage) { sums[i].get(cur).addBilled(b) })
	}
	for _, d := range diffs {
		var run runDiff
		for i := range n {
			run = run.plus(d.at[i])
			if run.present == 0 {
				continue
			}
			a := sums[i].get(d.cur)
			a.sub, a.paying = a.sub+run.sub, a.paying+run.paying
			a.nrrStart, a.nrrEnd = a.nrrStart+run.nrrStart, a.nrrEnd+run.nrrEnd
		}
	}
	return sums
}

// runDiff is what the customers add on a point in one currency; present counts the customers whose
// state gives the currency a block there (paying in it, or paying in it on the previous point).
type runDiff struct{ sub, paying, nrrStart, nrrEnd, present int64 }

func (a runDiff) plus(b runDiff) runDiff {
	return runDiff{a.sub + b.sub, a.paying + b.paying, a.nrrStart + b.nrrStart, a.nrrEnd + b.nrrEnd, a.present + b.present}
}

func (a runDiff) minus(b runDiff) runDiff {
	return runDiff{a.sub - b.sub, a.paying - b.paying, a.nrrStart - b.nrrStart, a.nrrEnd - b.nrrEnd, a.present - b.present}
}

// runDiffs are one currency's differences between consecutive points: at[i] is what the points
// from i on add beyond point i − 1.
type runDiffs struct {
	cur string
	at  []runDiff
}

// add adds v to the points [lo, hi).
func (d *runDiffs) add(lo, hi int, v runDiff) {
	if lo >= hi {
		return
	}
	d.at[lo] = d.at[lo].plus(v)
	d.at[hi] = d.at[hi].minus(v)
}
