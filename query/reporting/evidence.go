package reporting

import (
	"cmp"
	"slices"
	"strings"
	"time"
)

// Payment evidence (METRICS 2.3): a payment is evidence for the charge it paid for, and for the
// charges that replaced that one in the same installation (a plan change bills the new charge at the
// next billing date, so until then the old charge's payment is what the customer paid for the
// period). A payment for any other charge of the customer is not: a charge the customer canceled or
// an uninstall ended paid for nothing after its end.

// chargeEvidence is what the payments say of one charge on a date D.
type chargeEvidence struct {
	// own is the charge's latest payment of its own before end(D); zero when it was never billed.
	own time.Time
	// latest is the latest payment before end(D) for the charge or a charge it replaced.
	latest time.Time
	// fresh is the latest of those within the evidence window of the charge it paid for (the
	// evidence); zero when none.
	fresh time.Time
}

// evidenceOf reads the payments of c and of the charges it replaced (lineage) on the date whose
// end is end, in c's currency.
func evidenceOf(b CustomerBilling, c *ChargeFacts, end time.Time) chargeEvidence {
	var (
		ev  chargeEvidence
		buf [4]*ChargeFacts
	)
	for _, f := range lineage(b.Charges, c, buf[:0]) {
		at := b.Paid.of(f.ID, c.Currency)
		if at.IsZero() || !at.Before(end) {
			continue
		}
		if f == c {
			ev.own = at
		}
		ev.latest = latest(ev.latest, at)
		if !at.Before(end.Add(-time.Duration(f.window()) * dayLength)) { // end is a UTC midnight (Date.End)
			ev.fresh = latest(ev.fresh, at)
		}
	}
	return ev
}

// beforeFirstBill says whether c is in trial on the date whose end is end by its billing date
// (METRICS 2.2): it reported a billing date after D, it was never billed, and no payment of a charge
// it replaced covers D (a plan change whose new charge is billed later is not a trial).
func (ev chargeEvidence) beforeFirstBill(c *ChargeFacts, end time.Time) bool {
	return !c.BillingOn.IsZero() && !c.BillingOn.Before(end) && ev.own.IsZero() && ev.fresh.IsZero()
}

// lineage returns c and the charges it replaced, transitively, into out. A charge p was replaced by
// n when p is another non-test charge of the customer that took effect before n (an earlier
// activation; the smaller ID on equal instants) and had not ended when the merchant approved n: the
// platform keeps one subscription per app and shop, and cancels the one a new subscription
// replaces when the new one is approved. An uninstall ends every charge of the installation
// (ChargeFacts.Ended), so no charge is replaced across a reinstall.
func lineage(charges []ChargeFacts, c *ChargeFacts, out []*ChargeFacts) []*ChargeFacts {
	out = append(out, c)
	for i := 0; i < len(out); i++ {
		n := out[i]
		for j := range charges {
			if p := &charges[j]; replaced(p, n) && !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// replaced says whether n replaced p.
func replaced(p, n *ChargeFacts) bool {
	took, nTook := p.tookEffect(), n.tookEffect()
	if p == n || p.Test || took.IsZero() || nTook.IsZero() || cmp.Or(took.Compare(nTook), strings.Compare(p.ID, n.ID)) >= 0 {
		return false
	}
	approved := nTook
	if !n.AcceptedAt.IsZero() && n.AcceptedAt.Before(approved) {
		approved = n.AcceptedAt
	}
	return p.Ended.IsZero() || !p.Ended.Before(approved)
}

// tookEffect is when a charge was first activated (its row's activated_at, else its first
// activation event); zero for a charge never activated.
func (f *ChargeFacts) tookEffect() time.Time {
	if !f.ActivatedAt.IsZero() {
		return f.ActivatedAt
	}
	return f.FirstActivated
}

// endedAt is ChargeFacts.Ended from what the customer views and the summary's fallback read: the
// charge's first own ending event (ownEnd), its customer's uninstalls, and its row's ended_at when
// the charge has no event at all (hasEvents false).
func endedAt(ownEnd, firstActivated time.Time, uninstalls []time.Time, rowEnded time.Time, hasEvents bool) time.Time {
	if !hasEvents {
		return rowEnded
	}
	end := ownEnd
	if !firstActivated.IsZero() {
		for _, u := range uninstalls {
			if !u.Before(firstActivated) && (end.IsZero() || u.Before(end)) {
				end = u
			}
		}
	}
	return end
}
