package partnerfake

import (
	"iter"
	"strconv"
	"time"
)

// Transaction kinds, in the order of the API's five app transaction objects.
const (
	txSubscription uint8 = iota // AppSubscriptionSale
	txUsage                     // AppUsageSale
	txOneTime                   // AppOneTimeSale
	txAdjustment                // AppSaleAdjustment (refund; negative)
	txCredit                    // AppSaleCredit (credit; negative)
)

var txTypenames = [...]string{"AppSubscriptionSale", "AppUsageSale", "AppOneTimeSale", "AppSaleAdjustment", "AppSaleCredit"}
var txTypes = [...]string{"APP_SUBSCRIPTION_SALE", "APP_USAGE_SALE", "APP_ONE_TIME_SALE", "APP_SALE_ADJUSTMENT", "APP_SALE_CREDIT"}

// Charge kinds: the Admin-API objects behind chargeId and the event payloads.
const (
	ckSubscription uint8 = iota // gid://shopify/AppSubscription/N
	ckUsage                     // gid://shopify/AppUsageRecord/N
	ckOneTime                   // gid://shopify/AppPurchaseOneTime/N
	ckCredit                    // gid://shopify/AppCredit/N
)

var chargeTypenames = [...]string{"AppSubscription", "AppUsageRecord", "AppPurchaseOneTime", "AppCredit"}

// chargeNumberBase offsets each kind's numbers so IDs look like real, unrelated sequences.
var chargeNumberBase = [...]uint32{27_000_000, 80_000_000, 31_000_000, 52_000_000}

const (
	firstTransactionNumber = 200_000_000
	firstShopNumber        = 60_000_000
)

// chargeIDBefore: the API documents chargeId as possibly null for transactions before September 2020.
var chargeIDBefore = time.Date(2020, 9, 1, 0, 0, 0, 0, time.UTC)

const flagAnnual = 1 << 0 // subscription sale billed ANNUAL
const flagShare = 1 << 1  // revenue share applies (set after the global sort)

// txn is one transaction in 24 bytes: 5 million fit in about 120 MB. Times are seconds since the
// dataset's Start; the API ID is derived from the position in the sorted slice, so IDs grow with
// (createdAt, position) and sorting by createdAt then ID is the slice order.
type txn struct {
	at     uint32
	cust   uint32
	charge uint32 // index into Dataset.charges, or Dataset.usage for ckUsage
	gross  int32  // minor units; negative for adjustments and credits
	aux    uint32 // adjustments: time of the refunded sale (its fee tier applies)
	kind   uint8
	ck     uint8
	cur    uint8
	flags  uint8
}

// event is one app event in 20 bytes. ref points at the payload (a charge or usage record, or the
// uninstall reason bits); aux carries the charge's billingOn (seconds+1, 0 = null) or the uninstall
// description index; seq orders a customer's events that share a second (cause before effect).
type event struct {
	at   uint32
	cust uint32
	ref  uint32
	aux  uint32
	seq  uint16
	typ  uint8
}

// Event types (AppEventTypes), in the order of the enum.
const (
	evInstalled uint8 = iota
	evUninstalled
	evReactivated
	evDeactivated
	evOneTimeAccepted
	evOneTimeActivated
	evOneTimeDeclined
	evOneTimeExpired
	evSubAccepted
	evSubActivated
	evSubCanceled
	evSubDeclined
	evSubExpired
	evSubFrozen
	evSubUnfrozen
	evCappedUpdated
	evApproachingCap
	evCreditApplied
	evCreditFailed
	evCreditPending
	evUsageApplied
	numEventTypes
)

var eventTypes = [numEventTypes]string{
	"RELATIONSHIP_INSTALLED", "RELATIONSHIP_UNINSTALLED", "RELATIONSHIP_REACTIVATED", "RELATIONSHIP_DEACTIVATED",
	"ONE_TIME_CHARGE_ACCEPTED", "ONE_TIME_CHARGE_ACTIVATED", "ONE_TIME_CHARGE_DECLINED", "ONE_TIME_CHARGE_EXPIRED",
	"SUBSCRIPTION_CHARGE_ACCEPTED", "SUBSCRIPTION_CHARGE_ACTIVATED", "SUBSCRIPTION_CHARGE_CANCELED",
	"SUBSCRIPTION_CHARGE_DECLINED", "SUBSCRIPTION_CHARGE_EXPIRED", "SUBSCRIPTION_CHARGE_FROZEN",
	"SUBSCRIPTION_CHARGE_UNFROZEN", "SUBSCRIPTION_CAPPED_AMOUNT_UPDATED", "SUBSCRIPTION_APPROACHING_CAPPED_AMOUNT",
	"CREDIT_APPLIED", "CREDIT_FAILED", "CREDIT_PENDING", "USAGE_CHARGE_APPLIED",
}

var eventTypenames = [numEventTypes]string{
	"RelationshipInstalled", "RelationshipUninstalled", "RelationshipReactivated", "RelationshipDeactivated",
	"OneTimeChargeAccepted", "OneTimeChargeActivated", "OneTimeChargeDeclined", "OneTimeChargeExpired",
	"SubscriptionChargeAccepted", "SubscriptionChargeActivated", "SubscriptionChargeCanceled",
	"SubscriptionChargeDeclined", "SubscriptionChargeExpired", "SubscriptionChargeFrozen",
	"SubscriptionChargeUnfrozen", "SubscriptionCappedAmountUpdated", "SubscriptionApproachingCappedAmount",
	"CreditApplied", "CreditFailed", "CreditPending", "UsageChargeApplied",
}

// eventPayload says which object an event type carries.
func eventPayload(typ uint8) (ck uint8, ok bool) {
	switch {
	case typ >= evOneTimeAccepted && typ <= evOneTimeExpired:
		return ckOneTime, true
	case typ >= evSubAccepted && typ <= evApproachingCap:
		return ckSubscription, true
	case typ >= evCreditApplied && typ <= evCreditPending:
		return ckCredit, true
	case typ == evUsageApplied:
		return ckUsage, true
	}
	return 0, false
}

// chargeObj is a subscription, one-time charge or credit as the event payloads show it.
type chargeObj struct {
	name   string
	amount int64
	kind   uint8
	cur    uint8
	test   bool
}

// usageRec is one usage record (AppUsageRecord) in 16 bytes; millions exist at benchmark scale.
type usageRec struct {
	sub    uint32 // index of the subscription in Dataset.charges
	amount int32
	qty    int32
	app    uint8
}

// Dataset is everything Generate produced. It is read-only after Generate and safe for concurrent
// readers (the Server reads it from many goroutines).
type Dataset struct {
	Config     GenConfig
	Apps       []App
	Shops      []Shop
	Currencies []string
	Truth      *Truth

	base     int64 // Start as Unix seconds; record times are seconds since base
	txns     []txn // sorted by createdAt, then ID
	appTxns  [][]uint32
	events   [][]event // per app, sorted by occurredAt then generation order
	charges  []chargeObj
	usage    []usageRec
	custApp  []uint8
	custShop []uint32
}

// App is one generated app.
type App struct {
	Index  int
	ID     string // gid://partners/App/N
	Name   string
	APIKey string
}

// Shop is one generated shop (store); a shop can be a customer of several apps.
type Shop struct {
	Index    int
	ID       string // gid://partners/Shop/N
	Domain   string // <name>.myshopify.com
	Name     string
	Currency string // billing currency
	Test     bool   // development store: charges are test charges and earn nothing
	Excluded bool
}

// Money is an amount in integer minor units of Currency.
type Money struct {
	Minor    int64
	Currency string
}

// String prints the amount the way the API does by default.
func (m Money) String() string { return FormatAmount(m.Minor, m.Currency, AmountTrimmed) }

// Transaction is the public view of one transaction, as the API returns it.
type Transaction struct {
	Customer         int    // index into Truth.Customers
	ID               string // gid://partners/<Typename>/N
	Typename         string // AppSubscriptionSale, AppUsageSale, AppOneTimeSale, AppSaleAdjustment, AppSaleCredit
	Type             string // TransactionType enum value
	CreatedAt        time.Time
	AppID            string
	ShopID           string
	ChargeID         string // "" when the API returns null (before September 2020)
	Gross            Money
	ShopifyFee       Money
	ProcessingFee    Money // present only where HasProcessingFee
	HasProcessingFee bool
	Net              Money  // Gross - ShopifyFee - ProcessingFee
	BillingInterval  string // EVERY_30_DAYS or ANNUAL on AppSubscriptionSale, else ""
}

// Charge is the charge object an event carries (AppSubscription, AppPurchaseOneTime,
// AppUsageRecord or AppCredit).
type Charge struct {
	Typename  string
	ID        string
	Name      string
	Amount    Money
	BillingOn time.Time // AppSubscription only; zero when null
	Test      bool
}

// Event is the public view of one app event.
type Event struct {
	Customer    int
	Type        string // AppEventTypes value
	Typename    string
	OccurredAt  time.Time
	AppID       string
	ShopID      string
	Charge      *Charge // charge / appCredit payload, nil for relationship events
	Reason      string  // RELATIONSHIP_UNINSTALLED only; "" = null
	Description string  // RELATIONSHIP_UNINSTALLED only; "" = null
}

// NumTransactions returns how many transactions the dataset holds.
func (d *Dataset) NumTransactions() int { return len(d.txns) }

// NumEvents returns how many app events the dataset holds across apps.
func (d *Dataset) NumEvents() int {
	n := 0
	for _, e := range d.events {
		n += len(e)
	}
	return n
}

// NumCustomers returns how many (app, shop) relationships exist.
func (d *Dataset) NumCustomers() int { return len(d.custApp) }

func (d *Dataset) time(at uint32) time.Time { return time.Unix(d.base+int64(at), 0).UTC() }

// Transactions yields every transaction in API order (createdAt, then ID).
func (d *Dataset) Transactions() iter.Seq[Transaction] {
	return func(yield func(Transaction) bool) {
		for i := range d.txns {
			if !yield(d.transaction(i)) {
				return
			}
		}
	}
}

// Events yields one app's events in API order (occurredAt, then generation order).
func (d *Dataset) Events(app int) iter.Seq[Event] {
	return func(yield func(Event) bool) {
		for i := range d.events[app] {
			if !yield(d.event(app, i)) {
				return
			}
		}
	}
}

func (d *Dataset) transactionNumber(pos int) uint64 { return firstTransactionNumber + uint64(pos) }

func (d *Dataset) chargeGID(ck uint8, idx uint32) string {
	return "gid://shopify/" + chargeTypenames[ck] + "/" + strconv.FormatUint(uint64(chargeNumberBase[ck])+uint64(idx), 10)
}

// fees computes the fee split of a stored transaction. The processing fee (2.9%) applies to
// charges and refunds; credits move no card money and carry none.
func (t *txn) fees() (shopify, processing int64, hasProcessing bool) {
	g := int64(t.gross)
	if t.flags&flagShare != 0 {
		shopify = percentOf(g, revenueShareNum, revenueShareDen)
	}
	if t.kind != txCredit {
		processing, hasProcessing = percentOf(g, processingFeeNum, processingFeeDen), true
	}
	return
}

func (d *Dataset) transaction(pos int) Transaction {
	t := &d.txns[pos]
	cur := d.Currencies[t.cur]
	shopify, processing, hasProc := t.fees()
	gross := int64(t.gross)
	out := Transaction{
		Customer:         int(t.cust),
		ID:               "gid://partners/" + txTypenames[t.kind] + "/" + strconv.FormatUint(d.transactionNumber(pos), 10),
		Typename:         txTypenames[t.kind],
		Type:             txTypes[t.kind],
		CreatedAt:        d.time(t.at),
		AppID:            d.Apps[d.custApp[t.cust]].ID,
		ShopID:           d.Shops[d.custShop[t.cust]].ID,
		Gross:            Money{gross, cur},
		ShopifyFee:       Money{shopify, cur},
		ProcessingFee:    Money{processing, cur},
		HasProcessingFee: hasProc,
		Net:              Money{gross - shopify - processing, cur},
	}
	if !out.CreatedAt.Before(chargeIDBefore) {
		out.ChargeID = d.chargeGID(t.ck, t.charge)
	}
	if t.kind == txSubscription {
		out.BillingInterval = "EVERY_30_DAYS"
		if t.flags&flagAnnual != 0 {
			out.BillingInterval = "ANNUAL"
		}
	}
	return out
}

func (d *Dataset) event(app, i int) Event {
	e := &d.events[app][i]
	out := Event{
		Customer:   int(e.cust),
		Type:       eventTypes[e.typ],
		Typename:   eventTypenames[e.typ],
		OccurredAt: d.time(e.at),
		AppID:      d.Apps[app].ID,
		ShopID:     d.Shops[d.custShop[e.cust]].ID,
	}
	if e.typ == evUninstalled {
		out.Reason = d.uninstallReason(e.ref)
		out.Description = uninstallDescriptions[e.aux]
	}
	if ck, ok := eventPayload(e.typ); ok {
		out.Charge = d.charge(ck, e.ref, e.aux)
	}
	return out
}

func (d *Dataset) charge(ck uint8, ref, billingOn uint32) *Charge {
	c := &Charge{Typename: chargeTypenames[ck], ID: d.chargeGID(ck, ref)}
	if ck == ckUsage {
		u := &d.usage[ref]
		sub := &d.charges[u.sub]
		c.Name = strconv.Itoa(int(u.qty)) + " " + usageUnits[int(u.app)%len(usageUnits)]
		c.Amount = Money{int64(u.amount), d.Currencies[sub.cur]}
		c.Test = sub.test
		return c
	}
	ch := &d.charges[ref]
	c.Name, c.Amount, c.Test = ch.name, Money{ch.amount, d.Currencies[ch.cur]}, ch.test
	if ck == ckSubscription && billingOn != 0 {
		c.BillingOn = d.time(billingOn - 1)
	}
	return c
}

// uninstallReason decodes the reason bit set (one or two reasons, comma separated; 0 = null).
func (d *Dataset) uninstallReason(bits uint32) string {
	s := ""
	for i := range uninstallReasons {
		if bits&(1<<i) != 0 {
			if s != "" {
				s += ","
			}
			s += uninstallReasons[i]
		}
	}
	return s
}
