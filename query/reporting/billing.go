package reporting

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// The billing evaluation of docs/METRICS.md 2.1–2.5: pure functions over one customer's charges, the
// events that decide their states, and its subscription payments. The summary feeds it facts that
// ClickHouse already reduced to what a date needs (summary_facts.go); the customer list and detail
// feed it facts reduced in Go from the customer's rows (customer_facts.go). Both reduce to the same
// ChargeFacts and CustomerBilling, so there is one implementation of the rules.

// Billing intervals as stored.
const (
	Every30Days = "every_30_days"
	Annual      = "annual"
)

// Evidence windows in days (METRICS 2.3): one cycle plus the billing-date drift.
const (
	monthlyEvidenceDays = 45
	annualEvidenceDays  = 395
)

// Charge is a platform_charges row as the evaluation needs it. Zero times are SQL nulls.
type Charge struct {
	AppID       string
	ID          string
	CustomerID  string
	Kind        string
	Name        string
	AmountCents int64
	Currency    string
	Interval    string // billing_interval, which the sync sets from the charge's latest sale; "" before one
	Status      string
	EndReason   string // canceled, declined, expired or uninstalled once ended (migration 0009); "" before
	Test        bool
	TrialDays   int
	AcceptedAt  time.Time
	ActivatedAt time.Time
	EndedAt     time.Time
	// BillingOn is the billing date the charge's latest event reported (reporting_charge_billing):
	// its first billing date until it is first billed. Zero when none was reported.
	BillingOn time.Time
}

// EventKind is a lifecycle event type that decides a subscription charge's state (METRICS 2.1). The
// order of the constants is the replay order of events at the same instant; the numbers are also
// those of the SQL transform in chargeEventKindSQL.
type EventKind uint8

const (
	EventNone EventKind = iota
	EventAccepted
	EventActivated
	EventUnfrozen
	EventFrozen
	EventCanceled
	EventDeclined
	EventExpired
	EventUninstalled
)

// chargeEventKinds maps the partner API's AppEventTypes values to kinds.
var chargeEventKinds = map[string]EventKind{
	"SUBSCRIPTION_CHARGE_ACCEPTED":  EventAccepted,
	"SUBSCRIPTION_CHARGE_ACTIVATED": EventActivated,
	"SUBSCRIPTION_CHARGE_UNFROZEN":  EventUnfrozen,
	"SUBSCRIPTION_CHARGE_FROZEN":    EventFrozen,
	"SUBSCRIPTION_CHARGE_CANCELED":  EventCanceled,
	"SUBSCRIPTION_CHARGE_DECLINED":  EventDeclined,
	"SUBSCRIPTION_CHARGE_EXPIRED":   EventExpired,
}

// Lifecycle event types read outside the charge replay.
const (
	typeInstalled   = "RELATIONSHIP_INSTALLED"
	typeUninstalled = "RELATIONSHIP_UNINSTALLED"
	typeReactivated = "RELATIONSHIP_REACTIVATED"
)

// Event is a decisive event: its kind and instant. The zero Event is "none".
type Event struct {
	Kind EventKind
	At   time.Time
}

// eventKeyBase packs an event into one integer, instant first, then kind, so that the maximum is
// the last event in replay order. SQL computes the same key (toUInt64(occurred_at) * 16 + kind).
const eventKeyBase = 16

func (e Event) key() int64 {
	if e.Kind == EventNone {
		return -1
	}
	return e.At.Unix()*eventKeyBase + int64(e.Kind)
}

// eventFromKey unpacks a key read from SQL; 0 (no matching row) is no event.
func eventFromKey(k uint64) Event {
	if k == 0 {
		return Event{}
	}
	return Event{Kind: EventKind(k % eventKeyBase), At: time.Unix(int64(k/eventKeyBase), 0).UTC()}
}

// later is the later of two events in replay order.
func later(a, b Event) Event {
	if b.key() > a.key() {
		return b
	}
	return a
}

// ChargeFacts is a subscription charge with what decides its state on one date D.
type ChargeFacts struct {
	*Charge
	// LastOwn is the latest of the charge's own state events before end(D).
	LastOwn Event
	// FirstActivated is the charge's first SUBSCRIPTION_CHARGE_ACTIVATED (zero when none): the
	// customer's uninstalls count for the charge from then on.
	FirstActivated time.Time
	// Ended is when the charge ended for good, whatever the date D: its first own ending event, or
	// its customer's first uninstall at or after its first activation, whichever came first (for a
	// charge without events, its row's ended_at); zero while it has not ended. It tells which
	// charges a new one replaced (METRICS 2.3, lineage).
	Ended time.Time
}

// CustomerBilling is one customer's billing facts on a date D.
type CustomerBilling struct {
	Charges []ChargeFacts // every subscription charge, test charges included
	// LastUninstall is the customer's latest RELATIONSHIP_UNINSTALLED before end(D) (zero when none).
	LastUninstall time.Time
	// Paid is, per charge and currency, the latest positive subscription transaction created before
	// end(D) for that charge (its charge_id). The summary reads only the rows an evidence window can
	// reach, so there a missing one means "none in the window", which is all paying needs; the
	// customer views read the whole history.
	Paid Payments
}

// Payment is the latest positive subscription payment for one charge in one currency.
type Payment struct {
	ChargeID string
	Currency string
	At       time.Time
}

// Payments are a customer's latest payments, one per charge and currency.
type Payments []Payment

// of is the latest payment for charge in cur, zero when none.
func (ps Payments) of(charge, cur string) time.Time {
	for _, p := range ps {
		if p.ChargeID == charge && p.Currency == cur {
			return p.At
		}
	}
	return time.Time{}
}

// with is ps with t as the latest payment for charge in cur when it is later than the one ps has
// (a zero t adds nothing).
func (ps Payments) with(charge, cur string, t time.Time) Payments {
	if t.IsZero() {
		return ps
	}
	for i := range ps {
		if ps[i].ChargeID == charge && ps[i].Currency == cur {
			ps[i].At = latest(ps[i].At, t)
			return ps
		}
	}
	return append(ps, Payment{ChargeID: charge, Currency: cur, At: t})
}

// State of a subscription charge on a date.
type State uint8

const (
	StatePending State = iota
	StateActive
	StateFrozen
	StateEnded
)

// ChargeState is a charge's state on D with when it began (frozen, ended; zero when the charge row
// decided and has no such instant) and, for an ended charge, how it ended.
type ChargeState struct {
	State State
	Since time.Time
	Cause string // canceled, declined, expired or uninstalled
}

// decisive is the event that decides a charge's state (METRICS 2.1 steps 1–3): the later of its own
// last event and the customer's last uninstall, when that uninstall is at or after the charge's
// first activation (an uninstall at the activation's instant sorts after it, as ending types do).
func decisive(f ChargeFacts, lastUninstall time.Time) Event {
	e := f.LastOwn
	if !lastUninstall.IsZero() && !f.FirstActivated.IsZero() && !lastUninstall.Before(f.FirstActivated) {
		e = later(e, Event{Kind: EventUninstalled, At: lastUninstall})
	}
	return e
}

// stateOn is METRICS 2.1 for one charge on the date whose end is end.
func stateOn(f ChargeFacts, lastUninstall, end time.Time) ChargeState {
	switch e := decisive(f, lastUninstall); e.Kind {
	case EventAccepted:
		return ChargeState{State: StatePending}
	case EventActivated, EventUnfrozen:
		return ChargeState{State: StateActive}
	case EventFrozen:
		return ChargeState{State: StateFrozen, Since: e.At}
	case EventCanceled:
		return ChargeState{State: StateEnded, Since: e.At, Cause: "canceled"}
	case EventDeclined:
		return ChargeState{State: StateEnded, Since: e.At, Cause: "declined"}
	case EventExpired:
		return ChargeState{State: StateEnded, Since: e.At, Cause: "expired"}
	case EventUninstalled:
		return ChargeState{State: StateEnded, Since: e.At, Cause: "uninstalled"}
	}
	c := f.Charge
	if !c.ActivatedAt.IsZero() && c.ActivatedAt.Before(end) && (c.EndedAt.IsZero() || !c.EndedAt.Before(end)) {
		if strings.EqualFold(c.Status, "frozen") {
			return ChargeState{State: StateFrozen}
		}
		return ChargeState{State: StateActive}
	}
	if !c.EndedAt.IsZero() && c.EndedAt.Before(end) {
		cause := c.EndReason
		if cause == "" {
			cause = causeOfStatus(c.Status)
		}
		return ChargeState{State: StateEnded, Since: c.EndedAt, Cause: cause}
	}
	return ChargeState{State: StatePending}
}

// causeOfStatus names how a charge ended from its synced status when the row has no end_reason
// (rows written before migration 0009; the partner API spells cancellation both ways).
func causeOfStatus(status string) string {
	s := strings.ToLower(status)
	switch {
	case strings.Contains(s, "declin"):
		return "declined"
	case strings.Contains(s, "expir"):
		return "expired"
	case strings.Contains(s, "uninstall"):
		return "uninstalled"
	}
	return "canceled"
}

// activation is when a charge took effect: its activated_at, else its first activation event, else
// its acceptance.
func (f ChargeFacts) activation() time.Time {
	for _, t := range []time.Time{f.ActivatedAt, f.FirstActivated, f.AcceptedAt} {
		if !t.IsZero() {
			return t
		}
	}
	return time.Time{}
}

// trialEnd is coalesce(activated_at, accepted_at) + trial_days days (METRICS 2.2).
func (f ChargeFacts) trialEnd() time.Time {
	start := f.ActivatedAt
	if start.IsZero() {
		start = f.AcceptedAt
	}
	return start.AddDate(0, 0, f.TrialDays)
}

// IntervalOf is the charge's billing interval (METRICS 2.3): the one its sales carry (the sync
// copies the latest onto the charge row), else every_30_days.
func (f ChargeFacts) IntervalOf() string {
	if f.Interval == Annual {
		return Annual
	}
	return Every30Days
}

// window is the charge's evidence window in days (METRICS 2.3).
func (f ChargeFacts) window() int {
	if f.IntervalOf() == Annual {
		return annualEvidenceDays
	}
	return monthlyEvidenceDays
}

// MonthlyValue is METRICS 2.5: the amount for 30-day plans, amount ÷ 12 rounded half up for annual.
func (f ChargeFacts) MonthlyValue() int64 {
	if f.IntervalOf() == Annual {
		return roundHalfUp(f.AmountCents, 12)
	}
	return f.AmountCents
}

// ChargeOn is a non-test charge with its state on D.
type ChargeOn struct {
	Facts *ChargeFacts
	State ChargeState
}

// Evaluation is METRICS 2.4 and 2.5 for one customer on one date.
type Evaluation struct {
	Paying bool
	Reason string
	// AMRCents is the monthly value of the qualifying subscription (0 when not paying), in Currency.
	AMRCents int64
	Currency string
	// InEffect is the active or frozen non-test charge in effect on D (nil when none).
	InEffect *ChargeOn
	// NonTest are the customer's non-test subscription charges with their states on D.
	NonTest []ChargeOn
}

// Evaluate runs the checks of METRICS 2.4 in order on date d; the first that applies decides.
func Evaluate(d Date, b CustomerBilling) Evaluation { return evaluate(d, b, true, nil) }

// evaluate is Evaluate; without explain it leaves Reason empty, which the aggregates never read
// (formatting a sentence per customer and date would be most of their Go time). The charges'
// states go in scratch when it is large enough (the aggregates reuse one per date), so an
// Evaluation is only valid until scratch is reused.
func evaluate(d Date, b CustomerBilling, explain bool, scratch []ChargeOn) Evaluation {
	end := d.End()
	reason := func(format string, a ...any) string {
		if !explain {
			return ""
		}
		return fmt.Sprintf(format, a...)
	}
	if len(b.Charges) == 0 {
		return Evaluation{Reason: reason("not paying: no subscription charge")}
	}
	if cap(scratch) < len(b.Charges) {
		scratch = make([]ChargeOn, 0, len(b.Charges))
	}
	ev := Evaluation{NonTest: scratch[:0]}
	for i := range b.Charges {
		f := &b.Charges[i]
		if f.Test {
			continue
		}
		ev.NonTest = append(ev.NonTest, ChargeOn{Facts: f, State: stateOn(*f, b.LastUninstall, end)})
	}
	if len(ev.NonTest) == 0 {
		ev.Reason = reason("not paying: only test charges")
		return ev
	}
	// The charge in effect: the active or frozen one with the newest activation (the first of
	// equals, as slices.MaxFunc).
	for i := range ev.NonTest {
		c := &ev.NonTest[i]
		if s := c.State.State; s != StateActive && s != StateFrozen {
			continue
		}
		if ev.InEffect == nil || cmp.Or(c.Facts.activation().Compare(ev.InEffect.Facts.activation()), strings.Compare(c.Facts.ID, ev.InEffect.Facts.ID)) > 0 {
			ev.InEffect = c
		}
	}
	if ev.InEffect == nil {
		newest := slices.MaxFunc(ev.NonTest, func(a, b ChargeOn) int {
			return cmp.Or(a.Facts.acceptedOrActivated().Compare(b.Facts.acceptedOrActivated()), strings.Compare(a.Facts.ID, b.Facts.ID))
		})
		if newest.State.State == StatePending {
			ev.Reason = reason("not paying: subscription awaiting merchant approval")
			return ev
		}
		var last *ChargeOn
		for i := range ev.NonTest {
			c := &ev.NonTest[i]
			if c.State.State == StateEnded && (last == nil || c.State.Since.After(last.State.Since)) {
				last = c
			}
		}
		if explain { // the arguments alone would allocate per customer
			ev.Reason = reason("not paying: subscription ended on %s (%s)", DateOf(last.State.Since), last.State.Cause)
		}
		return ev
	}
	c := ev.InEffect.Facts
	if ev.InEffect.State.State == StateFrozen {
		if ev.InEffect.State.Since.IsZero() {
			ev.Reason = reason("not paying: subscription frozen")
		} else {
			ev.Reason = reason("not paying: subscription frozen since %s", DateOf(ev.InEffect.State.Since))
		}
		return ev
	}
	if c.TrialDays > 0 && !c.trialEnd().Before(end) {
		ev.Reason = reason("not paying: in trial until %s", DateOf(c.trialEnd()))
		return ev
	}
	paid := evidenceOf(b, c, end)
	if paid.beforeFirstBill(c, end) {
		ev.Reason = reason("not paying: in trial until %s", DateOf(c.BillingOn))
		return ev
	}
	if c.AmountCents == 0 {
		ev.Reason = reason("not paying: zero-value plan \"%s\"", c.Name)
		return ev
	}
	every := "every 30 days"
	if c.IntervalOf() == Annual {
		every = "per year"
	}
	switch {
	case paid.latest.IsZero():
		ev.Reason = reason("not paying: no subscription payment yet")
		return ev
	case paid.fresh.IsZero():
		ev.Reason = reason("not paying: no subscription payment in the last %d days", c.window())
		return ev
	}
	ev.Paying, ev.AMRCents, ev.Currency = true, c.MonthlyValue(), c.Currency
	if explain {
		ev.Reason = reason("paying: active subscription \"%s\" at %s %s, last subscription payment on %s",
			c.Name, formatAmount(c.AmountCents, c.Currency), every, DateOf(paid.fresh))
	}
	return ev
}

// acceptedOrActivated orders charges for "the newest one" of check 3: coalesce(activated_at,
// accepted_at).
func (f ChargeFacts) acceptedOrActivated() time.Time {
	if !f.ActivatedAt.IsZero() {
		return f.ActivatedAt
	}
	return f.AcceptedAt
}
