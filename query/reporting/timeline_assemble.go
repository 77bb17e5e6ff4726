package reporting

import (
	"iter"
	"slices"
	"time"
)

// assembleTimeline groups the rows by customer and derives each charge's event facts as the summary
// does (ChargeFacts: first activation, end for good).
func assembleTimeline(chargeParts [][]tlRawCharge, fallback []tlFallbackRow, paymentParts [][]tlPaymentRow, usage []tlUsageRow) *timelineFacts {
	// The parts are read concurrently (readTimelineFactParts) and taken as they are: copying tens of
	// thousands of rows into one slice cost as much as assembling them.
	nCharges := 0
	for _, p := range chargeParts {
		nCharges += len(p)
	}
	f := &timelineFacts{index: make(map[customerHash]*tlCustomer, nCharges), customers: make([]*tlCustomer, 0, nCharges),
		slab: make([]tlCustomer, 0, nCharges)}
	type ref struct {
		customer customerHash
		charge   string
	}
	evented := map[ref][]uint64{}
	fallbackUninstalls := map[customerHash][]time.Time{}
	for _, r := range fallback {
		if r.charge == "" {
			for _, k := range r.keys {
				fallbackUninstalls[r.customer] = append(fallbackUninstalls[r.customer], eventFromKey(k).At)
			}
			continue
		}
		evented[ref{r.customer, r.charge}] = append(evented[ref{r.customer, r.charge}], r.keys...)
	}
	// Every customer's charges, events and instants are windows of a few shared arrays, sized by a
	// first pass: tens of thousands of small slices grown one append at a time cost more than the
	// sweep that reads them.
	nKeys, nTimes := 0, 0
	for _, charges := range chargeParts {
		for i := range charges {
			r := &charges[i]
			f.get(r.customer).pending++
			nKeys, nTimes = nKeys+len(r.keys), nTimes+len(r.uninstalls)
		}
	}
	chargeArena := make([]tlCharge, nCharges)
	off := 0
	for _, c := range f.customers {
		n := int(c.pending)
		c.charges, off = chargeArena[off:off:off+n], off+n
	}
	events, times := make([]Event, 0, nKeys), make([]time.Time, 0, nTimes)
	for _, r := range all(chargeParts) {
		c := f.index[r.customer]
		keys := r.keys
		var uninstalls []time.Time
		if r.derived {
			n := len(times)
			for _, t := range r.uninstalls {
				times = append(times, unix(t))
			}
			uninstalls = times[n:len(times):len(times)]
		} else {
			keys, uninstalls = evented[ref{r.customer, r.charge.ID}], fallbackUninstalls[r.customer]
		}
		slices.Sort(keys)
		keys = slices.Compact(keys)
		c.charges = append(c.charges, tlCharge{charge: r.charge, uninstalls: sortedTimes(uninstalls)}) // in place, as read
		ch := &c.charges[len(c.charges)-1]
		var ownEnd time.Time
		n := len(events)
		for _, k := range keys {
			e := eventFromKey(k)
			events = append(events, e)
			switch e.Kind {
			case EventActivated:
				ch.first = earliest(ch.first, e.At)
			case EventCanceled, EventDeclined, EventExpired:
				ownEnd = earliest(ownEnd, e.At)
			}
		}
		if len(events) > n {
			ch.events = events[n:len(events):len(events)]
		}
		ch.ended = endedAt(ownEnd, ch.first, ch.uninstalls, r.charge.EndedAt, len(keys) > 0)
		c.uninstalls = append(c.uninstalls, ch.uninstalls...)
	}
	for k, us := range fallbackUninstalls {
		if c := f.index[k]; c != nil {
			c.uninstalls = append(c.uninstalls, us...)
		}
	}
	for _, c := range f.customers {
		c.uninstalls = sortedTimes(c.uninstalls)
	}
	nPaid := 0
	for _, r := range all(paymentParts) {
		nPaid += len(r.at)
	}
	paidTimes := make([]time.Time, 0, nPaid)
	for _, r := range all(paymentParts) {
		if len(r.at) == 0 { // read for its first payment only
			continue
		}
		c := f.get(r.customer)
		n := len(paidTimes)
		for _, t := range r.at {
			paidTimes = append(paidTimes, unix(t))
		}
		at := sortedTimes(paidTimes[n:len(paidTimes):len(paidTimes)])
		c.payments = append(c.payments, tlPayments{charge: r.charge, currency: r.currency, at: at})
	}
	setUsage(f, usage)
	return f
}

// all yields a pointer to every row of the parts, in order.
func all[T any](parts [][]T) iter.Seq2[int, *T] {
	return func(yield func(int, *T) bool) {
		n := 0
		for _, p := range parts {
			for i := range p {
				if !yield(n, &p[i]) {
					return
				}
				n++
			}
		}
	}
}
