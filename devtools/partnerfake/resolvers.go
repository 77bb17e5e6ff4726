package partnerfake

import (
	"fmt"
	"strconv"
	"strings"
)

// Runtime values the executor walks; typeOf maps each to its GraphQL object type.
type (
	rootVal  struct{}
	appVal   struct{ app int }
	shopVal  struct{ shop int }
	moneyVal struct{ m Money }
	decimal  struct {
		minor int64
		cur   string
	}
	txVal struct{ t Transaction }
	evVal struct {
		e   Event
		app int
	}
	chargeVal struct{ c *Charge }
	connVal   struct {
		typ              string
		edges            []any
		hasNext, hasPrev bool
	}
	edgeVal struct {
		typ    string
		cursor string
		node   any
	}
	pageInfoVal struct{ hasNext, hasPrev bool }
	versionVal  struct {
		handle    string
		supported bool
	}
)

func typeOf(v any) string {
	switch v := v.(type) {
	case rootVal:
		return "QueryRoot"
	case appVal:
		return "App"
	case shopVal:
		return "Shop"
	case moneyVal:
		return "Money"
	case txVal:
		return v.t.Typename
	case evVal:
		return v.e.Typename
	case chargeVal:
		return v.c.Typename
	case connVal:
		return v.typ
	case edgeVal:
		return v.typ
	case pageInfoVal:
		return "PageInfo"
	case versionVal:
		return "ApiVersion"
	}
	panic(fmt.Sprintf("partnerfake: no GraphQL type for %T", v))
}

func money(m Money) any { return moneyVal{m} }

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// resolve returns one field of a runtime value. Validation has already checked that the field
// exists on the value's type in the requested version's schema.
func (x *execCtx) resolve(obj any, field string, args map[string]any) (any, error) {
	d := x.srv.ds
	switch o := obj.(type) {
	case rootVal:
		switch field {
		case "transactions":
			return x.transactions(args)
		case "transaction":
			return x.transactionByID(args["id"].(string)), nil
		case "app":
			if a, ok := d.appIndex(args["id"].(string)); ok {
				return appVal{a}, nil
			}
			return nil, nil
		case "publicApiVersions":
			var out []any
			for _, v := range x.srv.cfg.Versions {
				out = append(out, versionVal{v, v != "unstable"})
			}
			return out, nil
		}
	case appVal:
		a := d.Apps[o.app]
		switch field {
		case "id":
			return a.ID, nil
		case "name":
			return a.Name, nil
		case "apiKey":
			return a.APIKey, nil
		case "events":
			return x.events(o.app, args)
		}
	case shopVal:
		s := d.Shops[o.shop]
		switch field {
		case "id":
			return s.ID, nil
		case "myshopifyDomain":
			return s.Domain, nil
		case "name":
			return s.Name, nil
		case "avatarUrl":
			return nil, nil
		}
	case moneyVal:
		switch field {
		case "amount":
			return decimal{o.m.Minor, o.m.Currency}, nil
		case "currencyCode":
			return o.m.Currency, nil
		}
	case txVal:
		t := o.t
		switch field {
		case "id":
			return t.ID, nil
		case "createdAt":
			return t.CreatedAt, nil
		case "app":
			return appVal{int(d.custApp[t.Customer])}, nil
		case "shop":
			return shopVal{int(d.custShop[t.Customer])}, nil
		case "chargeId":
			return nullable(t.ChargeID), nil
		case "grossAmount":
			return money(t.Gross), nil
		case "shopifyFee":
			return money(t.ShopifyFee), nil
		case "netAmount":
			return money(t.Net), nil
		case "processingFee":
			if t.HasProcessingFee {
				return money(t.ProcessingFee), nil
			}
			return nil, nil
		case "regulatoryOperatingFee":
			return nil, nil
		case "billingInterval":
			return nullable(t.BillingInterval), nil
		}
	case evVal:
		e := o.e
		switch field {
		case "app":
			return appVal{o.app}, nil
		case "shop":
			return shopVal{int(d.custShop[e.Customer])}, nil
		case "occurredAt":
			return e.OccurredAt, nil
		case "type":
			return e.Type, nil
		case "charge", "appCredit":
			return chargeVal{e.Charge}, nil
		case "reason":
			return nullable(e.Reason), nil
		case "description":
			return nullable(e.Description), nil
		}
	case chargeVal:
		c := o.c
		switch field {
		case "id":
			return c.ID, nil
		case "name":
			return c.Name, nil
		case "amount":
			return money(c.Amount), nil
		case "test":
			return c.Test, nil
		case "billingOn":
			if c.BillingOn.IsZero() {
				return nil, nil
			}
			return c.BillingOn, nil
		}
	case connVal:
		switch field {
		case "edges":
			return o.edges, nil
		case "pageInfo":
			return pageInfoVal{o.hasNext, o.hasPrev}, nil
		}
	case edgeVal:
		switch field {
		case "cursor":
			return o.cursor, nil
		case "node":
			return o.node, nil
		}
	case pageInfoVal:
		switch field {
		case "hasNextPage":
			return o.hasNext, nil
		case "hasPreviousPage":
			return o.hasPrev, nil
		}
	case versionVal:
		switch field {
		case "handle", "displayName":
			return o.handle, nil
		case "supported":
			return o.supported, nil
		}
	}
	return nil, fmt.Errorf("field %s is not implemented by the fake", field)
}

// parseGID returns N of "gid://<ns>/<typename>/N".
func parseGID(id, ns, typename string) (uint64, bool) {
	rest, ok := strings.CutPrefix(id, "gid://"+ns+"/"+typename+"/")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(rest, 10, 64)
	return n, err == nil
}

func (d *Dataset) appIndex(id string) (int, bool) {
	n, ok := parseGID(id, "partners", "App")
	if !ok || n < firstAppNumber || n >= firstAppNumber+uint64(len(d.Apps)) {
		return 0, false
	}
	return int(n - firstAppNumber), true
}

func (d *Dataset) shopIndex(id string) (int, bool) {
	n, ok := parseGID(id, "partners", "Shop")
	if !ok || n < firstShopNumber || n >= firstShopNumber+uint64(len(d.Shops)) {
		return 0, false
	}
	return int(n - firstShopNumber), true
}

func (x *execCtx) transactionByID(id string) any {
	d := x.srv.ds
	for kind, tn := range txTypenames {
		n, ok := parseGID(id, "partners", tn)
		if !ok || n < firstTransactionNumber || n-firstTransactionNumber >= uint64(len(d.txns)) {
			continue
		}
		pos := int(n - firstTransactionNumber)
		if t := &d.txns[pos]; int(t.kind) == kind && int64(t.at) >= x.floor {
			return txVal{d.transaction(pos)}
		}
	}
	return nil
}
