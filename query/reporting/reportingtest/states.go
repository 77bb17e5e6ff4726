package reportingtest

import (
	"slices"
	"time"
)

// chargeStates emulates what the customer and charge derivation stores on each charge row
// (migration 0011): the charge's state events, keyed toUInt64(occurred_at) * 16 + kind, and its
// customer's uninstalls, from every event the fixture wrote. A charge written in an earlier flush
// whose events changed is written again, with a new version, as the derivation would.
type chargeStates struct {
	keys       map[chargeRef][]uint64
	uninstalls map[customerRef][]time.Time
	written    map[chargeRef][]any // the latest row written, with its states
}

type (
	chargeRef   struct{ App, ID string }
	customerRef struct{ App, Shop string }
)

func newChargeStates() chargeStates {
	return chargeStates{keys: map[chargeRef][]uint64{}, uninstalls: map[customerRef][]time.Time{}, written: map[chargeRef][]any{}}
}

// stateKinds numbers the state events in the replay order of docs/METRICS.md 2.1.
var stateKinds = map[string]uint64{
	"SUBSCRIPTION_CHARGE_ACCEPTED": 1, "SUBSCRIPTION_CHARGE_ACTIVATED": 2, "SUBSCRIPTION_CHARGE_UNFROZEN": 3,
	"SUBSCRIPTION_CHARGE_FROZEN": 4, "SUBSCRIPTION_CHARGE_CANCELED": 5, "SUBSCRIPTION_CHARGE_DECLINED": 6,
	"SUBSCRIPTION_CHARGE_EXPIRED": 7,
}

func (s chargeStates) event(e Event) {
	at := At(e.At)
	if e.Type == "RELATIONSHIP_UNINSTALLED" {
		s.uninstalls[customerRef{e.App, e.Shop}] = append(s.uninstalls[customerRef{e.App, e.Shop}], at)
	}
	if kind, ok := stateKinds[e.Type]; ok && e.Charge != "" {
		s.keys[chargeRef{e.App, e.Charge}] = append(s.keys[chargeRef{e.App, e.Charge}], uint64(at.Unix())*16+kind)
	}
}

// Columns of an insertCharges row.
const (
	colApp, colCharge, colShop, colVersion = 1, 2, 3, 17
	colStates, colUninstalls, colDerived   = 18, 19, 20
)

// derive sets the states of the buffered charge rows, and adds a new version of every charge
// written earlier whose states changed.
func (s chargeStates) derive(rows [][]any, next func() uint64) [][]any {
	buffered := map[chargeRef]bool{}
	for _, r := range rows {
		s.set(r)
		buffered[chargeRef{r[colApp].(string), r[colCharge].(string)}] = true
	}
	for ref, r := range s.written {
		if buffered[ref] {
			continue
		}
		again := slices.Clone(r)
		if s.set(again) {
			again[colVersion] = next()
			rows = append(rows, again)
		}
	}
	for _, r := range rows {
		s.written[chargeRef{r[colApp].(string), r[colCharge].(string)}] = r
	}
	return rows
}

// set fills a row's states and says whether they changed.
func (s chargeStates) set(r []any) bool {
	keys := slices.Clone(s.keys[chargeRef{r[colApp].(string), r[colCharge].(string)}])
	slices.Sort(keys)
	keys = slices.Compact(keys)
	un := slices.Clone(s.uninstalls[customerRef{r[colApp].(string), r[colShop].(string)}])
	slices.SortFunc(un, time.Time.Compare)
	un = slices.CompactFunc(un, time.Time.Equal)
	if keys == nil {
		keys = []uint64{}
	}
	if un == nil {
		un = []time.Time{}
	}
	changed := !slices.Equal(keys, r[colStates].([]uint64)) || !slices.EqualFunc(un, r[colUninstalls].([]time.Time), time.Time.Equal) ||
		r[colDerived] != uint8(1)
	r[colStates], r[colUninstalls], r[colDerived] = keys, un, uint8(1)
	return changed
}
