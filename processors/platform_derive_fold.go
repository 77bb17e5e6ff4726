package processors

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/revtrack/revtrack/schemas"
)

// The fold that turns one customer's lifecycle events into its platform_customers row and its
// platform_charges rows (docs/PLATFORM_DATA.md; charge states as in docs/METRICS.md 2.1). It is a
// pure function of the set of events: the events are deduplicated by key and put in one total
// order first, so redelivery, re-syncs and pages that land out of order all give the same rows.

// Relationship event types (the partner API's AppEventTypes).
const (
	evInstalled   = "RELATIONSHIP_INSTALLED"
	evUninstalled = "RELATIONSHIP_UNINSTALLED"
	evReactivated = "RELATIONSHIP_REACTIVATED"
	evDeactivated = "RELATIONSHIP_DEACTIVATED"
)

// Charge kinds as stored in platform_charges.kind. Usage records and credits are not charges.
const (
	kindSubscription = "subscription"
	kindOneTime      = "one_time"
)

// Charge statuses (platform_charges.status) and end reasons (platform_charges.end_reason).
const (
	chargePending  = "pending"
	chargeActive   = "active"
	chargeFrozen   = "frozen"
	chargeCanceled = "canceled"
	chargeDeclined = "declined"
	chargeExpired  = "expired"
	// endUninstalled is the end reason of a subscription ended by the shop uninstalling the app;
	// its status is canceled, as the platform cancels the app's subscriptions on uninstall.
	endUninstalled = "uninstalled"
)

// Customer install statuses (platform_customers.status).
const (
	customerInstalled   = "installed"
	customerDeactivated = "deactivated"
	customerUninstalled = "uninstalled"
)

// storedEvent is one platform_lifecycle_events row as the derivation reads it.
type storedEvent struct {
	CustomerID  string
	EventKey    string
	Type        string
	OccurredAt  time.Time
	ChargeID    string
	ChargeType  string
	ChargeName  string
	AmountCents *int64
	Currency    string
	Test        bool
	BillingOn   *time.Time
	ShopDomain  string
	ShopName    string
	SyncedAt    time.Time
}

// chargeRow is one platform_charges row.
type chargeRow struct {
	WorkspaceID, AppID, ChargeID, CustomerID string
	Kind                                     string
	Name                                     string
	AmountCents                              int64
	Currency                                 string
	BillingInterval                          string
	Status                                   string
	Test                                     bool
	TrialDays                                uint16
	CappedAmountCents                        *int64
	AcceptedAt, ActivatedAt, EndedAt         *time.Time
	BillingOn                                *time.Time
	EndReason                                string
	// StateEvents, CustomerUninstalls: see attachStates. StatesDerived says they were set.
	StateEvents        []uint64
	CustomerUninstalls []time.Time
	StatesDerived      bool
	Version            uint64
}

// customerRow is one platform_customers row. Country, plan, tags and store classification are
// left empty: the query layer computes them.
type customerRow struct {
	WorkspaceID, AppID, CustomerID string
	PublicID                       string
	ShopID, ShopDomain, ShopName   string
	Status                         string
	FirstInstalledAt, LastEventAt  *time.Time
	Version                        uint64
}

// eventRank orders events of one instant: install first, then acceptance, activation, the
// returns to service, everything without a state, the suspensions, the uninstall, and the charge
// endings last (METRICS 2.1 step 2). The uninstall precedes the cancel it causes, so a subscription
// canceled in the second of an uninstall is recorded as ended by the uninstall.
func eventRank(typ string) int {
	switch {
	case typ == evInstalled:
		return 0
	case strings.HasSuffix(typ, "_ACCEPTED"):
		return 1
	case strings.HasSuffix(typ, "_ACTIVATED"):
		return 2
	case typ == "SUBSCRIPTION_CHARGE_UNFROZEN", typ == evReactivated:
		return 3
	case typ == "SUBSCRIPTION_CHARGE_FROZEN", typ == evDeactivated:
		return 5
	case typ == evUninstalled:
		return 6
	case strings.HasSuffix(typ, "_CANCELED"), strings.HasSuffix(typ, "_DECLINED"), strings.HasSuffix(typ, "_EXPIRED"):
		return 7
	}
	return 4 // usage records, credits, cap notices
}

func compareEvents(a, b storedEvent) int {
	return cmp.Or(a.OccurredAt.Compare(b.OccurredAt), cmp.Compare(eventRank(a.Type), eventRank(b.Type)),
		cmp.Compare(a.EventKey, b.EventKey))
}

// orderEvents keeps the latest synced copy of each event key and sorts the result.
func orderEvents(events []storedEvent) []storedEvent {
	latest := make(map[string]int, len(events))
	out := make([]storedEvent, 0, len(events))
	for _, e := range events {
		if i, ok := latest[e.EventKey]; ok {
			if e.SyncedAt.After(out[i].SyncedAt) {
				out[i] = e
			}
			continue
		}
		latest[e.EventKey] = len(out)
		out = append(out, e)
	}
	slices.SortFunc(out, compareEvents)
	return out
}

// chargeKind says which charge an event is about; "" for usage records, credits and events
// without a charge. The charge's GraphQL type decides; events landed before it was stored fall
// back on the event type.
func chargeKind(e storedEvent) string {
	switch e.ChargeType {
	case "AppSubscription":
		return kindSubscription
	case "AppPurchaseOneTime":
		return kindOneTime
	case "":
		switch {
		case e.ChargeID == "":
			return ""
		case strings.HasPrefix(e.Type, "SUBSCRIPTION_"):
			return kindSubscription
		case strings.HasPrefix(e.Type, "ONE_TIME_CHARGE_"):
			return kindOneTime
		}
	}
	return ""
}

// chargeState is the state an event moves its charge to; ok is false for events that carry the
// charge without changing its state (cap notices).
func chargeState(typ string) (string, bool) {
	if typ == evUninstalled {
		return endUninstalled, true
	}
	_, suffix, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(typ, "SUBSCRIPTION_CHARGE"), "ONE_TIME_CHARGE"), "_")
	switch suffix {
	case "ACCEPTED":
		return chargePending, true
	case "ACTIVATED", "UNFROZEN":
		return chargeActive, true
	case "FROZEN":
		return chargeFrozen, true
	case "CANCELED":
		return chargeCanceled, true
	case "DECLINED":
		return chargeDeclined, true
	case "EXPIRED":
		return chargeExpired, true
	}
	return "", false
}

func ended(state string) bool {
	return state == chargeCanceled || state == chargeDeclined || state == chargeExpired || state == endUninstalled
}

// chargeAcc collects one charge's fields and its state-changing events.
type chargeAcc struct {
	row   chargeRow
	steps []storedEvent
}

// foldCustomer derives one customer's row and its charges from all of its lifecycle events
// (in any order, duplicates allowed). intervals maps charge IDs to the billing interval of their
// latest subscription transaction. ok is false when there is no event.
func foldCustomer(workspaceID, appID, customerID string, events []storedEvent, intervals map[string]string) (customerRow, []chargeRow, bool) {
	events = orderEvents(events)
	if len(events) == 0 {
		return customerRow{}, nil, false
	}
	cust := customerRow{WorkspaceID: workspaceID, AppID: appID, CustomerID: customerID, ShopID: customerID,
		PublicID: schemas.CustomerPublicID(appID, customerID), Status: customerInstalled}
	charges := map[string]*chargeAcc{}
	var order []string
	var uninstalls []storedEvent
	for _, e := range events {
		cust.ShopDomain = cmp.Or(e.ShopDomain, cust.ShopDomain)
		cust.ShopName = cmp.Or(e.ShopName, cust.ShopName)
		cust.LastEventAt = timePtr(e.OccurredAt) // events are in time order
		switch e.Type {
		case evInstalled, evReactivated:
			cust.Status = customerInstalled
			if e.Type == evInstalled && cust.FirstInstalledAt == nil {
				cust.FirstInstalledAt = timePtr(e.OccurredAt)
			}
		case evDeactivated:
			cust.Status = customerDeactivated
		case evUninstalled:
			cust.Status = customerUninstalled
			uninstalls = append(uninstalls, e)
		}
		kind := chargeKind(e)
		if kind == "" {
			continue
		}
		c, ok := charges[e.ChargeID]
		if !ok {
			c = &chargeAcc{row: chargeRow{WorkspaceID: workspaceID, AppID: appID, ChargeID: e.ChargeID, CustomerID: customerID, Kind: kind}}
			charges[e.ChargeID] = c
			order = append(order, e.ChargeID)
		}
		c.absorb(e)
	}
	out := make([]chargeRow, 0, len(order))
	for _, id := range order {
		c := charges[id]
		if c.row.Kind == kindSubscription {
			c.row.BillingInterval = intervals[id]
		}
		c.settle(uninstalls)
		out = append(out, c.row)
	}
	return cust, out, true
}

// absorb takes one of the charge's events, in order: the latest name, amount and billing date
// win; a charge is a test charge when any event says so (the flag never changes, and events landed
// before it was stored read as 0).
func (c *chargeAcc) absorb(e storedEvent) {
	r := &c.row
	r.Name = cmp.Or(e.ChargeName, r.Name)
	if e.AmountCents != nil {
		r.AmountCents, r.Currency = *e.AmountCents, e.Currency
	}
	r.Test = r.Test || e.Test
	if e.BillingOn != nil {
		r.BillingOn = timePtr(*e.BillingOn)
	}
	st, ok := chargeState(e.Type)
	if !ok {
		return
	}
	switch {
	case st == chargePending && r.AcceptedAt == nil:
		r.AcceptedAt = timePtr(e.OccurredAt)
	case st == chargeActive && strings.HasSuffix(e.Type, "_ACTIVATED") && r.ActivatedAt == nil:
		r.ActivatedAt = timePtr(e.OccurredAt)
	}
	c.steps = append(c.steps, e)
}

// settle replays the state events (METRICS 2.1): for a subscription, the customer's uninstalls at
// or after its first activation end it too. The last event decides the state; an ended charge
// keeps the status and time of the event that ended it (a later uninstall does not rename a
// cancellation). A subscription seen only through cap notices (history cut short) is active: the
// platform sends those only for active subscriptions.
func (c *chargeAcc) settle(uninstalls []storedEvent) {
	r := &c.row
	steps := slices.Clone(c.steps)
	if r.Kind == kindSubscription && r.ActivatedAt != nil {
		for _, u := range uninstalls {
			if !u.OccurredAt.Before(*r.ActivatedAt) {
				steps = append(steps, u)
			}
		}
		slices.SortFunc(steps, compareEvents)
	}
	r.Status = chargeActive
	if len(steps) == 0 {
		return
	}
	state := ""
	var endedBy storedEvent
	for _, e := range steps {
		next, _ := chargeState(e.Type)
		if ended(next) && !ended(state) {
			endedBy = e
		}
		state = next
	}
	if !ended(state) {
		r.Status = state
		return
	}
	end, _ := chargeState(endedBy.Type)
	r.Status, r.EndReason, r.EndedAt = end, end, timePtr(endedBy.OccurredAt)
	if end == endUninstalled {
		r.Status = chargeCanceled
	}
}

func timePtr(t time.Time) *time.Time {
	u := t.UTC()
	return &u
}
