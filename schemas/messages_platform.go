package schemas

import "time"

// PlatformRecord is one record pulled from the partner API. Exactly one payload is set, named by Kind.
type PlatformRecord struct {
	Kind        string    `json:"kind" jsonschema:"enum=customer,enum=charge,enum=lifecycle_event,enum=transaction,enum=usage_charge,enum=usage_event,enum=sync_run"`
	WorkspaceID string    `json:"workspaceId" jsonschema:"minLength=1"`
	AppID       string    `json:"appId" jsonschema:"minLength=1"`
	SyncedAt    time.Time `json:"syncedAt"`

	Customer       *PlatformCustomer `json:"customer,omitempty"`
	Charge         *PlatformCharge   `json:"charge,omitempty"`
	LifecycleEvent *LifecycleEvent   `json:"lifecycleEvent,omitempty"`
	Transaction    *Transaction      `json:"transaction,omitempty"`
	UsageCharge    *UsageCharge      `json:"usageCharge,omitempty"`
	UsageEvent     *UsageEvent       `json:"usageEvent,omitempty"`
	SyncRun        *SyncRun          `json:"syncRun,omitempty"`
}

// PlatformCustomer is one (app, shop) install relationship.
type PlatformCustomer struct {
	CustomerID          string     `json:"customerId" jsonschema:"minLength=1"`
	ShopID              string     `json:"shopId"`
	ShopDomain          string     `json:"shopDomain"`
	ShopName            string     `json:"shopName,omitempty"`
	Status              string     `json:"status" jsonschema:"description=install status as derived from lifecycle events"`
	Country             string     `json:"country,omitempty"`
	Plan                string     `json:"plan,omitempty"`
	Tags                []string   `json:"tags,omitempty"`
	StoreClassification string     `json:"storeClassification,omitempty"`
	ReportExcluded      bool       `json:"reportExcluded"`
	FirstInstalledAt    *time.Time `json:"firstInstalledAt,omitempty"`
	LastEventAt         *time.Time `json:"lastEventAt,omitempty"`
}

// PlatformCharge is a subscription, one-time or usage charge as last seen.
type PlatformCharge struct {
	ChargeID          string     `json:"chargeId" jsonschema:"minLength=1"`
	CustomerID        string     `json:"customerId"`
	Kind              string     `json:"kind" jsonschema:"enum=subscription,enum=one_time,enum=usage"`
	Name              string     `json:"name"`
	AmountCents       int64      `json:"amountCents" jsonschema:"description=integer minor units"`
	Currency          string     `json:"currency" jsonschema:"pattern=^[A-Za-z]{3}$"`
	BillingInterval   string     `json:"billingInterval,omitempty" jsonschema:"enum=,enum=every_30_days,enum=annual"`
	Status            string     `json:"status"`
	Test              bool       `json:"test"`
	TrialDays         uint16     `json:"trialDays,omitempty"`
	CappedAmountCents *int64     `json:"cappedAmountCents,omitempty"`
	AcceptedAt        *time.Time `json:"acceptedAt,omitempty"`
	ActivatedAt       *time.Time `json:"activatedAt,omitempty"`
	EndedAt           *time.Time `json:"endedAt,omitempty"`
	BillingOn         *time.Time `json:"billingOn,omitempty"`
}

// LifecycleEvent is one partner-API app event (install, uninstall, charge lifecycle, credit, ...).
// Customers, charges and usage charges are derived from these alone (docs/PLATFORM_DATA.md), so it
// carries every field of the event's shop and charge that those rows show.
type LifecycleEvent struct {
	EventKey    string     `json:"eventKey" jsonschema:"minLength=1,description=deterministic key of the event so a re-sync replaces it"`
	Type        string     `json:"type" jsonschema:"minLength=1,description=the partner API's AppEventTypes value"`
	CustomerID  string     `json:"customerId"`
	ShopDomain  string     `json:"shopDomain"`
	ShopName    string     `json:"shopName,omitempty"`
	OccurredAt  time.Time  `json:"occurredAt"`
	ChargeID    string     `json:"chargeId,omitempty" jsonschema:"description=ID of the event's charge / usage record / credit"`
	ChargeType  string     `json:"chargeType,omitempty" jsonschema:"description=GraphQL type of the event's charge (AppSubscription / AppPurchaseOneTime / AppUsageRecord / AppCredit)"`
	ChargeName  string     `json:"chargeName,omitempty"`
	AmountCents *int64     `json:"amountCents,omitempty" jsonschema:"description=integer minor units"`
	Currency    string     `json:"currency,omitempty"`
	Test        bool       `json:"test,omitempty" jsonschema:"description=the charge is a test charge (development stores)"`
	BillingOn   *time.Time `json:"billingOn,omitempty" jsonschema:"description=the subscription's next billing date as the event reported it"`
	Reason      string     `json:"reason,omitempty"`
	Description string     `json:"description,omitempty"`
}

// Transaction is one payout-side transaction. ProcessingFeeCents is nil where the API omits it.
type Transaction struct {
	TransactionID      string    `json:"transactionId" jsonschema:"minLength=1"`
	Type               string    `json:"type" jsonschema:"enum=subscription,enum=usage,enum=one_time,enum=adjustment,enum=credit,enum=refund"`
	CustomerID         string    `json:"customerId"`
	ShopDomain         string    `json:"shopDomain"`
	ChargeID           string    `json:"chargeId,omitempty"`
	CreatedAt          time.Time `json:"createdAt"`
	Currency           string    `json:"currency" jsonschema:"pattern=^[A-Za-z]{3}$"`
	GrossCents         int64     `json:"grossCents"`
	PlatformFeeCents   int64     `json:"platformFeeCents"`
	ProcessingFeeCents *int64    `json:"processingFeeCents,omitempty"`
	NetCents           int64     `json:"netCents"`
	BillingInterval    string    `json:"billingInterval,omitempty" jsonschema:"enum=,enum=every_30_days,enum=annual"`
}

// UsageCharge is a usage record the platform applied to a subscription.
type UsageCharge struct {
	UsageRecordID string    `json:"usageRecordId" jsonschema:"minLength=1"`
	CustomerID    string    `json:"customerId"`
	ChargeID      string    `json:"chargeId,omitempty"`
	Description   string    `json:"description,omitempty"`
	AmountCents   int64     `json:"amountCents"`
	Currency      string    `json:"currency" jsonschema:"pattern=^[A-Za-z]{3}$"`
	OccurredAt    time.Time `json:"occurredAt"`
}

// UsageEvent is a usage event received from the publisher (activity, not billing).
type UsageEvent struct {
	EventID    string    `json:"eventId" jsonschema:"minLength=1"`
	CustomerID string    `json:"customerId"`
	Name       string    `json:"name" jsonschema:"minLength=1"`
	Quantity   int64     `json:"quantity"`
	OccurredAt time.Time `json:"occurredAt"`
	ReceivedAt time.Time `json:"receivedAt"`
}

// SyncRun records one run of the connector for one app.
type SyncRun struct {
	RunID             string     `json:"runId" jsonschema:"minLength=1"`
	Trigger           string     `json:"trigger" jsonschema:"enum=schedule,enum=manual"`
	Status            string     `json:"status" jsonschema:"enum=running,enum=succeeded,enum=failed,enum=partial"`
	StartedAt         time.Time  `json:"startedAt"`
	FinishedAt        *time.Time `json:"finishedAt,omitempty"`
	EventsCount       uint64     `json:"eventsCount"`
	TransactionsCount uint64     `json:"transactionsCount"`
	CoverageFrom      *time.Time `json:"coverageFrom,omitempty"`
	CoverageThrough   *time.Time `json:"coverageThrough,omitempty"`
	Truncated         bool       `json:"truncated"`
	Error             string     `json:"error,omitempty"`
}
