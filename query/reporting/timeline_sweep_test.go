package reporting

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestSweepEqualsEvaluatingEveryPoint: the sweep evaluates a customer only at the points where one
// of its breaks passed (customerBreaks, which leaves out the evidence-window ends that cannot change
// anything). For random customers, on daily and on monthly points, every point's state equals
// evaluating the customer there from scratch, with the facts as of that point's end.
func TestSweepEqualsEvaluatingEveryPoint(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 17))
	start := MustDate("2025-01-01")
	daily := make([]Date, 0, 420)
	for d := start; d.Before(MustDate("2026-02-25")); d = d.AddDays(1) {
		daily = append(daily, d)
	}
	var monthly []Date
	for m := 1; m <= 14; m++ {
		monthly = append(monthly, Date{time.Date(2025, time.Month(m), 1, 0, 0, 0, 0, time.UTC)}.AddDays(-1))
	}
	paying, changes := 0, 0
	for n := range 3000 {
		c := randomTimelineCustomer(rng, start.Start())
		for _, points := range [][]Date{daily, monthly} {
			var buf sweepBuffers
			got := make([]pointState, len(points))
			sweep(c, points, &buf, func(i int, st pointState) { got[i] = st })
			for i, d := range points {
				want := evaluateFromScratch(c, d)
				if got[i] != want {
					t.Fatalf("customer %d, point %s: sweep %+v, evaluated %+v\n%s", n, d, got[i], want, describeTimelineCustomer(c))
				}
				if want.Paying {
					paying++
				}
				if i > 0 && got[i] != got[i-1] {
					changes++
				}
			}
		}
	}
	// Not vacuous: many paying points, and states that change along the way.
	if paying < 100000 || changes < 5000 {
		t.Fatalf("only %d paying points and %d changes", paying, changes)
	}
}

// evaluateFromScratch evaluates c on d with its facts as of end(d), as the summary does.
func evaluateFromScratch(c *tlCustomer, d Date) pointState {
	end := d.End()
	b := CustomerBilling{}
	for i := range c.charges {
		ch := &c.charges[i]
		f := ChargeFacts{Charge: &ch.charge, FirstActivated: ch.first, Ended: ch.ended}
		for _, e := range ch.events {
			if e.At.Before(end) {
				f.LastOwn = e
			}
		}
		b.Charges = append(b.Charges, f)
	}
	for _, u := range c.uninstalls {
		if u.Before(end) {
			b.LastUninstall = u
		}
	}
	for _, p := range c.payments {
		for _, at := range p.at {
			if at.Before(end) {
				b.Paid = b.Paid.with(p.charge, p.currency, at)
			}
		}
	}
	ev := evaluate(d, b, false, nil)
	return pointState{Paying: ev.Paying, AMR: ev.AMRCents, Currency: ev.Currency}
}

// randomTimelineCustomer is one to three subscription charges over about a year from t0, with state
// events, trials, billing dates, plan changes, an uninstall now and then, and payments at the plan's
// interval with irregular gaps (late, missed, early, twice in a day) in one or two currencies.
func randomTimelineCustomer(rng *rand.Rand, t0 time.Time) *tlCustomer {
	at := func(lo, hi int) time.Time { // a random instant lo to hi days after t0
		return t0.Add(time.Duration(lo)*dayLength + time.Duration(rng.Int64N(int64(hi-lo)*int64(dayLength))))
	}
	c := &tlCustomer{}
	if rng.IntN(4) == 0 {
		c.uninstalls = []time.Time{at(60, 400)}
		if rng.IntN(3) == 0 {
			c.uninstalls = append(c.uninstalls, at(200, 420))
			slices.SortFunc(c.uninstalls, time.Time.Compare)
		}
	}
	currencies := []string{"USD", "EUR"}
	for k := range 1 + rng.IntN(3) {
		ch := tlCharge{charge: Charge{ID: fmt.Sprintf("c%d", k), Kind: "subscription", AmountCents: int64(rng.IntN(5)) * 1000,
			Currency: currencies[rng.IntN(4)/3], Test: rng.IntN(20) == 0}}
		if rng.IntN(4) == 0 {
			ch.charge.Interval = Annual
		} else if rng.IntN(2) == 0 {
			ch.charge.Interval = Every30Days
		}
		if rng.IntN(3) == 0 {
			ch.charge.TrialDays = []int{7, 14, 30}[rng.IntN(3)]
		}
		accepted := at(k*90, k*90+60)
		ch.charge.AcceptedAt = accepted
		ch.events = append(ch.events, Event{Kind: EventAccepted, At: accepted})
		if rng.IntN(8) != 0 {
			activated := accepted.Add(time.Duration(rng.IntN(3600)) * time.Second)
			ch.charge.ActivatedAt, ch.first = activated, activated
			ch.events = append(ch.events, Event{Kind: EventActivated, At: activated})
			if rng.IntN(3) == 0 {
				ch.charge.BillingOn = activated.Add(time.Duration(ch.charge.TrialDays+rng.IntN(10)) * dayLength).Truncate(dayLength)
			}
			last := activated
			for range rng.IntN(4) {
				last = last.Add(time.Duration(1+rng.IntN(120)) * dayLength)
				kind := []EventKind{EventFrozen, EventUnfrozen, EventCanceled, EventExpired, EventDeclined, EventActivated}[rng.IntN(6)]
				ch.events = append(ch.events, Event{Kind: kind, At: last})
				if kind >= EventCanceled && ch.ended.IsZero() {
					ch.ended = last
				}
			}
		}
		for _, u := range c.uninstalls {
			if !ch.first.IsZero() && !u.Before(ch.first) && (ch.ended.IsZero() || u.Before(ch.ended)) {
				ch.ended = u
			}
		}
		c.charges = append(c.charges, ch)
		if ch.first.IsZero() || rng.IntN(6) == 0 {
			continue
		}
		step := 30 * dayLength
		if ch.charge.Interval == Annual {
			step = 365 * dayLength
		}
		for _, cur := range []string{ch.charge.Currency, "EUR"}[:1+rng.IntN(5)/4] {
			p := tlPayments{charge: ch.charge.ID, currency: cur}
			for t := ch.first.Add(time.Duration(rng.IntN(40)) * dayLength); t.Before(t0.Add(430 * dayLength)); {
				if rng.IntN(10) != 0 { // one in ten is missed
					p.at = append(p.at, t)
				}
				switch rng.IntN(10) {
				case 0: // late: the window may lapse
					t = t.Add(step + time.Duration(10+rng.IntN(40))*dayLength)
				case 1: // paid again the same day
					t = t.Add(time.Duration(rng.IntN(3600)) * time.Second)
				default:
					t = t.Add(step + time.Duration(rng.IntN(5)-2)*dayLength)
				}
			}
			if len(p.at) > 0 {
				c.payments = append(c.payments, p)
			}
		}
	}
	return c
}

func describeTimelineCustomer(c *tlCustomer) string {
	s := fmt.Sprintf("uninstalls %v\n", c.uninstalls)
	for _, ch := range c.charges {
		s += fmt.Sprintf("charge %+v first %v ended %v events %v\n", ch.charge, ch.first, ch.ended, ch.events)
	}
	for _, p := range c.payments {
		s += fmt.Sprintf("payments %s %s %v\n", p.charge, p.currency, p.at)
	}
	return s
}
