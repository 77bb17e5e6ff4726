package processors

import (
	"slices"
	"time"
)

// The charge-state facts the reporting summary reads from a charge row (migration 0011): the
// charge's state-changing lifecycle events and its customer's uninstalls, so that the state on
// any date is read from the row alone instead of joining every lifecycle event per request.

// chargeStateKinds numbers the event types that decide a subscription charge's state in the replay
// order of docs/METRICS.md 2.1; the reporting API reads keys packed with these numbers.
var chargeStateKinds = map[string]uint64{
	"SUBSCRIPTION_CHARGE_ACCEPTED":  1,
	"SUBSCRIPTION_CHARGE_ACTIVATED": 2,
	"SUBSCRIPTION_CHARGE_UNFROZEN":  3,
	"SUBSCRIPTION_CHARGE_FROZEN":    4,
	"SUBSCRIPTION_CHARGE_CANCELED":  5,
	"SUBSCRIPTION_CHARGE_DECLINED":  6,
	"SUBSCRIPTION_CHARGE_EXPIRED":   7,
}

// chargeStateKey packs a state event as platform_charges.state_events stores it: the instant in
// seconds, then the kind, so that the greatest key before a date is the event that decides.
func chargeStateKey(typ string, at time.Time) (uint64, bool) {
	kind, ok := chargeStateKinds[typ]
	if !ok {
		return 0, false
	}
	return uint64(at.Unix())*16 + kind, true
}

// attachStates sets every charge's state events (the customer's events with the charge's ID and
// a state type) and the customer's uninstalls, sorted and without repeats, from all of the
// customer's events.
func attachStates(charges []chargeRow, events []storedEvent) {
	var uninstalls []time.Time
	keys := map[string][]uint64{}
	for _, e := range events {
		if e.Type == evUninstalled {
			uninstalls = append(uninstalls, e.OccurredAt.UTC())
		}
		if k, ok := chargeStateKey(e.Type, e.OccurredAt); ok && e.ChargeID != "" {
			keys[e.ChargeID] = append(keys[e.ChargeID], k)
		}
	}
	slices.SortFunc(uninstalls, time.Time.Compare)
	uninstalls = slices.CompactFunc(uninstalls, time.Time.Equal)
	for i := range charges {
		c := &charges[i]
		k := keys[c.ChargeID]
		slices.Sort(k)
		c.StateEvents, c.CustomerUninstalls, c.StatesDerived = slices.Compact(k), uninstalls, true
	}
}
