package partnerfake

import "time"

// Truth is what the generator decided, kept so tests of metrics can be checked by hand against
// the data the fake API serves. Times are UTC; a zero time means "not (yet) at End".
type Truth struct {
	Start, End time.Time
	Currencies []string
	Customers  []Customer // one per (app, shop), ordered by shop then app
	// RevenueShareFrom is the createdAt of the first sale counted above the revenue-share threshold:
	// sales (and refunds of sales) from then on carry a 15% shopifyFee. Zero if never reached.
	RevenueShareFrom time.Time

	byKey map[custKey]int
}

type custKey struct {
	app    string
	domain string
}

// Customer is one (app, shop) relationship.
type Customer struct {
	Index      int
	AppIndex   int
	AppID      string
	ShopIndex  int
	ShopID     string
	ShopDomain string
	ShopName   string
	Currency   string // the shop's billing currency
	Test       bool   // development store (every charge test, no transactions)
	Excluded   bool   // flagged for exclusion from aggregate reporting
	Installs   []Span // install periods; a reinstall starts a new one
	// Reactivations counts installs after an uninstall (len(Installs)-1).
	Reactivations  int
	Subscriptions  []Subscription // in creation order, including declined and expired charges
	OneTimeCharges []OneTimeCharge
	Credits        []Credit
	// Totals sums the customer's transactions per currency and transaction type.
	Totals []Total
}

// Span is a half-open interval [From, To); To is zero when it is still open at End.
type Span struct {
	From, To time.Time
}

// Contains reports whether t is in the span.
func (s Span) Contains(t time.Time) bool {
	return !t.Before(s.From) && (s.To.IsZero() || t.Before(s.To))
}

// Subscription is one AppSubscription charge and what happened to it.
type Subscription struct {
	ChargeID     string // gid://shopify/AppSubscription/N
	Name         string
	Amount       Money  // recurring price per interval; zero for free and usage-only plans
	Interval     string // EVERY_30_DAYS or ANNUAL
	TrialDays    int
	TrialEndsAt  time.Time // ActivatedAt + TrialDays (equal to ActivatedAt without a trial)
	CappedAmount Money     // usage cap at creation; zero Minor when the plan has no usage line
	Test         bool
	CreatedAt    time.Time
	ActivatedAt  time.Time // zero for declined or expired charges
	EndedAt      time.Time // canceled, declined or expired; zero if still in effect at End
	// EndReason: DECLINED, EXPIRED, REPLACED (plan change), UNINSTALLED, CANCELED (by the
	// merchant, staying installed); "" while in effect at End.
	EndReason string
	Periods   []PaidPeriod // billing cycles of a positive recurring price (none for test shops)
	Frozen    []Span
}

// PaidPeriod is one billed service period of a subscription: billed at From (its start), recorded
// as a transaction at BilledAt (a lag of up to 2 days after From).
type PaidPeriod struct {
	From, To time.Time
	BilledAt time.Time
	// TransactionID is the AppSubscriptionSale; "" when the sale would be recorded after End.
	TransactionID string
	Gross         Money
}

// OneTimeCharge is one AppPurchaseOneTime.
type OneTimeCharge struct {
	ChargeID    string
	Name        string
	Amount      Money
	CreatedAt   time.Time
	ActivatedAt time.Time // zero if declined or expired
	Outcome     string    // ACTIVATED, DECLINED or EXPIRED; "" while still pending at End
}

// Credit is one AppCredit.
type Credit struct {
	ChargeID  string
	Name      string
	Amount    Money
	CreatedAt time.Time
	Outcome   string // APPLIED, FAILED or PENDING (still pending at End)
}

// Total aggregates a customer's transactions of one type in one currency.
type Total struct {
	Currency      string
	Type          string // TransactionType value
	Count         int
	Gross         int64
	ShopifyFee    int64
	ProcessingFee int64
	Net           int64
}

// Customer looks a customer up by app ID and shop domain.
func (t *Truth) Customer(appID, shopDomain string) (*Customer, bool) {
	i, ok := t.byKey[custKey{appID, shopDomain}]
	if !ok {
		return nil, false
	}
	return &t.Customers[i], true
}

// InstalledAt reports whether the app was installed on the shop at t.
func (c *Customer) InstalledAt(t time.Time) bool {
	for _, s := range c.Installs {
		if s.Contains(t) {
			return true
		}
	}
	return false
}

// SubscriptionAt returns the subscription in effect at t (activated, not ended, not frozen), or nil.
func (c *Customer) SubscriptionAt(t time.Time) *Subscription {
	for i := range c.Subscriptions {
		s := &c.Subscriptions[i]
		if s.ActiveAt(t) {
			return s
		}
	}
	return nil
}

// ActiveAt reports whether the subscription is activated, not ended and not frozen at t.
func (s *Subscription) ActiveAt(t time.Time) bool {
	if s.ActivatedAt.IsZero() || !(Span{s.ActivatedAt, s.EndedAt}).Contains(t) {
		return false
	}
	for _, f := range s.Frozen {
		if f.Contains(t) {
			return false
		}
	}
	return true
}

// InTrialAt reports whether t falls in the subscription's trial.
func (s *Subscription) InTrialAt(t time.Time) bool {
	return s.TrialDays > 0 && !s.ActivatedAt.IsZero() && !t.Before(s.ActivatedAt) && t.Before(s.TrialEndsAt)
}

// PeriodAt returns the billed period covering t, or nil. A period ends early when the subscription
// ends; a refund does not remove it.
func (s *Subscription) PeriodAt(t time.Time) *PaidPeriod {
	for i := range s.Periods {
		p := &s.Periods[i]
		if (Span{p.From, p.To}).Contains(t) {
			return p
		}
	}
	return nil
}

// SharedDomains lists the shop domains that are customers of more than one app.
func (t *Truth) SharedDomains() []string {
	count := map[string]int{}
	var out []string
	for i := range t.Customers {
		d := t.Customers[i].ShopDomain
		count[d]++
		if count[d] == 2 {
			out = append(out, d)
		}
	}
	return out
}
