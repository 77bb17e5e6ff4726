package platformsync

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/revtrack/revtrack/schemas"
)

// transactionTypes maps the app transaction objects to the stored type. The API has no separate
// refund object: AppSaleAdjustment ("refund, downgrade or adjustment") is stored as adjustment.
var transactionTypes = map[string]string{
	"AppSubscriptionSale": "subscription",
	"AppUsageSale":        "usage",
	"AppOneTimeSale":      "one_time",
	"AppSaleAdjustment":   "adjustment",
	"AppSaleCredit":       "credit",
}

// convertTransaction turns a node into a Transaction; ok is false for types the sync does not store
// (theme, service, referral, tax, legacy). Amounts are stored with the sign of their effect on the
// payout: sales positive, adjustments and credits negative (whatever sign the API used).
func convertTransaction(n TransactionNode) (schemas.Transaction, bool, error) {
	typ, ok := transactionTypes[n.Typename]
	if !ok {
		return schemas.Transaction{}, false, nil
	}
	if n.NetAmount == nil {
		return schemas.Transaction{}, false, errors.New("netAmount is null")
	}
	cur := strings.ToUpper(n.NetAmount.CurrencyCode)
	amount := func(m *MoneyNode) (int64, error) {
		if m == nil {
			return 0, nil
		}
		if !strings.EqualFold(m.CurrencyCode, cur) {
			return 0, fmt.Errorf("mixed currencies %s and %s", clip(m.CurrencyCode), clip(cur))
		}
		v, err := ParseMinor(m.Amount, cur)
		if err != nil {
			return 0, err
		}
		if typ == "adjustment" || typ == "credit" {
			v = -abs(v)
		} else {
			v = abs(v)
		}
		return v, nil
	}
	t := schemas.Transaction{TransactionID: n.ID, Type: typ, CreatedAt: n.CreatedAt.UTC(), Currency: cur}
	var err error
	if t.GrossCents, err = amount(n.GrossAmount); err != nil {
		return t, false, err
	}
	if t.PlatformFeeCents, err = amount(n.ShopifyFee); err != nil {
		return t, false, err
	}
	if t.NetCents, err = amount(n.NetAmount); err != nil {
		return t, false, err
	}
	if n.ProcessingFee != nil {
		v, err := amount(n.ProcessingFee)
		if err != nil {
			return t, false, err
		}
		t.ProcessingFeeCents = &v
	}
	if n.Shop != nil {
		t.CustomerID, t.ShopDomain = n.Shop.ID, n.Shop.MyshopifyDomain
	}
	if n.ChargeID != nil {
		t.ChargeID = *n.ChargeID
	}
	if n.BillingInterval != nil {
		t.BillingInterval = strings.ToLower(*n.BillingInterval)
	}
	return t, true, nil
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// convertEvent turns an app event into a LifecycleEvent with a deterministic key (the API gives
// events no ID), so a re-sync of the same event replaces it.
func convertEvent(n EventNode) (schemas.LifecycleEvent, error) {
	e := schemas.LifecycleEvent{Type: n.Type, OccurredAt: n.OccurredAt.UTC()}
	if n.Shop != nil {
		e.CustomerID, e.ShopDomain, e.ShopName = n.Shop.ID, n.Shop.MyshopifyDomain, n.Shop.Name
	}
	ch := n.Charge
	if ch == nil {
		ch = n.AppCredit
	}
	if ch != nil {
		e.ChargeID, e.ChargeType, e.ChargeName, e.Test = ch.ID, ch.Typename, ch.Name, ch.Test
		if ch.BillingOn != nil {
			on := ch.BillingOn.UTC()
			e.BillingOn = &on
		}
		if ch.Amount != nil {
			e.Currency = strings.ToUpper(ch.Amount.CurrencyCode)
			v, err := ParseMinor(ch.Amount.Amount, e.Currency)
			if err != nil {
				return e, err
			}
			e.AmountCents = &v
		}
	}
	if n.Reason != nil {
		e.Reason = *n.Reason
	}
	if n.Description != nil {
		e.Description = *n.Description
	}
	h := sha256.Sum256([]byte(strings.Join([]string{e.Type, e.OccurredAt.Format(time.RFC3339), e.CustomerID, e.ChargeID}, "\x1f")))
	e.EventKey = hex.EncodeToString(h[:16])
	return e, nil
}
