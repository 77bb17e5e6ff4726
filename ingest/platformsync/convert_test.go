package platformsync

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/revtrack/revtrack/schemas"
)

// TestConvertEventCarriesShopAndCharge checks that an event keeps everything the derived customer,
// charge and usage-charge rows need: the shop's name, the charge's GraphQL type, test flag and
// billing date.
func TestConvertEventCarriesShopAndCharge(t *testing.T) {
	var n EventNode
	if err := json.Unmarshal([]byte(`{"__typename":"SubscriptionChargeActivated","type":"SUBSCRIPTION_CHARGE_ACTIVATED",
		"occurredAt":"2026-03-01T10:00:00Z","shop":{"id":"gid://shopify/Shop/7","myshopifyDomain":"alpha.myshopify.com","name":"Alpha"},
		"charge":{"__typename":"AppSubscription","id":"gid://shopify/AppSubscription/9","name":"Pro","test":true,
		"amount":{"amount":"29.99","currencyCode":"usd"},"billingOn":"2026-03-31T00:00:00Z"}}`), &n); err != nil {
		t.Fatal(err)
	}
	e, err := convertEvent(n)
	if err != nil {
		t.Fatal(err)
	}
	amount := int64(2999)
	billingOn := time.Date(2026, 3, 31, 0, 0, 0, 0, time.UTC)
	want := schemas.LifecycleEvent{EventKey: e.EventKey, Type: "SUBSCRIPTION_CHARGE_ACTIVATED", CustomerID: "gid://shopify/Shop/7",
		ShopDomain: "alpha.myshopify.com", ShopName: "Alpha", OccurredAt: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC),
		ChargeID: "gid://shopify/AppSubscription/9", ChargeType: "AppSubscription", ChargeName: "Pro", AmountCents: &amount,
		Currency: "USD", Test: true, BillingOn: &billingOn}
	if !reflect.DeepEqual(e, want) || e.EventKey == "" {
		t.Fatalf("got  %+v\nwant %+v", e, want)
	}

	// A usage record and a relationship event.
	n = EventNode{}
	if err := json.Unmarshal([]byte(`{"__typename":"UsageChargeApplied","type":"USAGE_CHARGE_APPLIED","occurredAt":"2026-03-02T10:00:00Z",
		"shop":{"id":"gid://shopify/Shop/7","myshopifyDomain":"alpha.myshopify.com","name":"Alpha"},
		"charge":{"__typename":"AppUsageRecord","id":"gid://shopify/AppUsageRecord/3","name":"120 orders","test":false,
		"amount":{"amount":"4.5","currencyCode":"USD"}}}`), &n); err != nil {
		t.Fatal(err)
	}
	if e, err = convertEvent(n); err != nil || e.ChargeType != "AppUsageRecord" || e.BillingOn != nil || e.Test || *e.AmountCents != 450 {
		t.Fatalf("usage record: %+v %v", e, err)
	}
	n = EventNode{Type: "RELATIONSHIP_UNINSTALLED", OccurredAt: time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC),
		Shop: &ShopNode{ID: "gid://shopify/Shop/7", MyshopifyDomain: "alpha.myshopify.com", Name: "Alpha"}}
	if e, err = convertEvent(n); err != nil || e.ShopName != "Alpha" || e.ChargeType != "" || e.AmountCents != nil {
		t.Fatalf("uninstall: %+v %v", e, err)
	}
}
