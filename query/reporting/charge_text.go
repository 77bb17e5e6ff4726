package reporting

import "strings"

// chargeArrays are the arrays of one charge facts row, parsed from its text copy (migration 0030,
// reporting_charge_facts_text), with what the reports used to compute from them in ClickHouse
// (sql.go, selectChargeFacts). Each method gives what its SQL expression gave, 0 standing for
// "none" as arrayReduce gives it over an empty array. The buffers are reused from row to row.
type chargeArrays struct {
	events     []uint64 // state event keys, toUInt64(occurred_at) * 16 + kind (eventKeyBase)
	uninstalls []uint32 // the customer's uninstalls
	payments   []uint32 // the charge's payments' instants
	currencies []string // each payment's currency; empty when every one is the charge's
}

// factsText is a row's facts_text (migration 0030: currency|state events|customer
// uninstalls|payments|payment currencies|charge ID) split into its fields, substrings of it.
type factsText struct{ currency, events, uninstalls, payments, currencies, chargeID string }

func splitFacts(text string) (f factsText) {
	f.currency, text, _ = strings.Cut(text, "|")
	f.events, text, _ = strings.Cut(text, "|")
	f.uninstalls, text, _ = strings.Cut(text, "|")
	f.payments, text, _ = strings.Cut(text, "|")
	f.currencies, f.chargeID, _ = strings.Cut(text, "|")
	return f
}

// parseFacts reads a row's facts_text into a, and returns the charge's currency and ID.
func (a *chargeArrays) parseFacts(text string) (currency, chargeID string) {
	f := splitFacts(text)
	a.parse(f.events, f.uninstalls, f.payments, f.currencies)
	return f.currency, f.chargeID
}

func (a *chargeArrays) parse(events, uninstalls, payments, currencies string) {
	a.events = parseNumbers(events, a.events[:0])
	a.uninstalls = parseNumbers(uninstalls, a.uninstalls[:0])
	a.payments = parseNumbers(payments, a.payments[:0])
	a.currencies = a.currencies[:0]
	if currencies != "" { // a charge whose payments changed currency: rare
		a.currencies = append(a.currencies, strings.Split(currencies, ",")...)
	}
}

// lastBefore is the greatest of xs below limit: arrayReduce('max', arrayFilter(x -> x < limit, xs)).
func lastBefore[T uint32 | uint64](xs []T, limit T) T {
	var m T
	for _, x := range xs {
		if x < limit && x > m {
			m = x
		}
	}
	return m
}

// ends are the charge's first activation and when it ended for good (ChargeFacts.Ended): its first
// own ending event (5, 6, 7) or, from its first activation on, its customer's first uninstall,
// whichever came first; for a charge without events, its row's ended instant.
func (a *chargeArrays) ends(ended uint32) (first, gone uint32) {
	var firstKey, ownKey uint64
	for _, k := range a.events {
		switch k % eventKeyBase {
		case 2:
			if firstKey == 0 || k < firstKey {
				firstKey = k
			}
		case 5, 6, 7:
			if ownKey == 0 || k < ownKey {
				ownKey = k
			}
		}
	}
	first = uint32(firstKey / eventKeyBase)
	ownEnd := uint32(ownKey / eventKeyBase)
	if len(a.events) == 0 {
		ownEnd = ended
	}
	var uninstallEnd uint32
	if first != 0 {
		for _, t := range a.uninstalls {
			if t >= first && (uninstallEnd == 0 || t < uninstallEnd) {
				uninstallEnd = t
			}
		}
	}
	switch {
	case ownEnd == 0:
		return first, uninstallEnd
	case uninstallEnd == 0:
		return first, ownEnd
	}
	return first, min(ownEnd, uninstallEnd)
}

// summaryCandidate keeps the charges that can be active or frozen on A or B, by the rule of METRICS
// 2.1: a charge whose own last state event is an acceptance or an ending is neither, one without an
// event before end(D) is in effect only as its row says (step 4), and one the customer's last
// uninstall ends (at or after its first activation, later in replay order than its own last event)
// is ended. It also keeps the charges that took effect and ended too recently for their payments to
// have left every evidence window: one of them may be what a charge in effect replaced (METRICS
// 2.3), and a payment is never made after its charge ended. The rest cannot change a paying verdict
// or an amrCents, so the evaluation never sees them; it still decides the state of those kept. Rows
// without stored states are all kept: their events are read separately (selectStateFallback).
// r holds the row's states on A and B; endA and endB are epoch seconds.
func summaryCandidate(r *summaryChargeRow, annual bool, activated, ended uint32, endA, endB uint64) bool {
	if !r.derived {
		return true
	}
	inEffect := func(last uint64, uninstall uint32, end uint64) bool {
		kind := last % eventKeyBase
		byRow := last == 0 && activated > 0 && uint64(activated) < end && (ended == 0 || uint64(ended) >= end)
		endedByUninstall := r.first > 0 && uninstall >= r.first && uint64(uninstall)*eventKeyBase+8 > last
		return (kind == 2 || kind == 3 || kind == 4 || byRow) && !endedByUninstall
	}
	if inEffect(r.lastA, r.unA, endA) || inEffect(r.lastB, r.unB, endB) {
		return true
	}
	window := int64(monthlyEvidenceDays)
	if annual {
		window = annualEvidenceDays
	}
	return (r.first > 0 || activated > 0) && r.gone > 0 && int64(r.gone) >= int64(endB)-window*86400
}

// paymentsIn keeps, of the payments in arena[from:] (one charge's, in the order of currencies when
// that is not empty), those made in [paidFrom, end), compacted in place, with their currencies.
func paymentsIn(arena []uint32, from int, currencies []string, paidFrom, end uint32) ([]uint32, []string) {
	kept := from
	for i := from; i < len(arena); i++ {
		if at := arena[i]; at >= paidFrom && at < end {
			if len(currencies) > 0 {
				currencies[kept-from] = currencies[i-from]
			}
			arena[kept] = at
			kept++
		}
	}
	if len(currencies) > 0 {
		currencies = currencies[:kept-from]
	}
	return arena[:kept], currencies
}
