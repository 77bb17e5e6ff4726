package partnerfake

import (
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestGenerateIsDeterministic(t *testing.T) {
	cfg := testConfig()
	cfg.Shops = 120
	a := Generate(cfg)
	prev := runtime.GOMAXPROCS(1) // the result must not depend on scheduling
	b := Generate(cfg)
	runtime.GOMAXPROCS(prev)
	if !slices.Equal(slices.Collect(a.Transactions()), slices.Collect(b.Transactions())) {
		t.Fatal("same seed gave different transactions")
	}
	for app := range a.Apps {
		if !reflect.DeepEqual(slices.Collect(a.Events(app)), slices.Collect(b.Events(app))) {
			t.Fatalf("same seed gave different events for app %d", app)
		}
	}
	if !reflect.DeepEqual(a.Truth.Customers, b.Truth.Customers) || !reflect.DeepEqual(a.Shops, b.Shops) || !reflect.DeepEqual(a.Apps, b.Apps) {
		t.Fatal("same seed gave a different truth")
	}
	cfg.Seed++
	c := Generate(cfg)
	if slices.Equal(slices.Collect(a.Transactions()), slices.Collect(c.Transactions())) {
		t.Fatal("another seed gave the same transactions")
	}
}

func TestGeneratedTransactionsAreConsistent(t *testing.T) {
	d := testDataset()
	tr := d.Truth
	seenCur, seenType := map[string]bool{}, map[string]int{}
	periodSales := map[string]int{}
	var prev Transaction
	for i, tx := range slices.Collect(d.Transactions()) {
		seenType[tx.Typename]++
		seenCur[tx.Gross.Currency] = true
		c := &tr.Customers[tx.Customer]
		if tx.AppID != c.AppID || tx.ShopID != c.ShopID {
			t.Fatalf("%s: app/shop %s %s do not match customer %d", tx.ID, tx.AppID, tx.ShopID, tx.Customer)
		}
		if c.Test {
			t.Fatalf("%s: development shop %s has a transaction", tx.ID, c.ShopDomain)
		}
		if !slices.Contains(d.Currencies, tx.Gross.Currency) {
			t.Fatalf("%s: currency %s not configured", tx.ID, tx.Gross.Currency)
		}
		for _, m := range []Money{tx.ShopifyFee, tx.ProcessingFee, tx.Net} {
			if m.Currency != tx.Gross.Currency {
				t.Fatalf("%s: mixed currencies", tx.ID)
			}
		}
		if tx.Net.Minor != tx.Gross.Minor-tx.ShopifyFee.Minor-tx.ProcessingFee.Minor {
			t.Fatalf("%s: net %d != gross %d - fees %d - %d", tx.ID, tx.Net.Minor, tx.Gross.Minor, tx.ShopifyFee.Minor, tx.ProcessingFee.Minor)
		}
		if tx.HasProcessingFee != (tx.Typename != "AppSaleCredit") {
			t.Fatalf("%s: processing fee presence wrong", tx.ID)
		}
		if tx.HasProcessingFee && tx.ProcessingFee.Minor != percentOf(tx.Gross.Minor, 29, 1000) {
			t.Fatalf("%s: processing fee %d is not 2.9%% of %d", tx.ID, tx.ProcessingFee.Minor, tx.Gross.Minor)
		}
		if fee := tx.ShopifyFee.Minor; fee != 0 && fee != percentOf(tx.Gross.Minor, 15, 100) {
			t.Fatalf("%s: shopifyFee %d is neither 0 nor 15%% of %d", tx.ID, fee, tx.Gross.Minor)
		}
		switch tx.Typename {
		case "AppSaleAdjustment", "AppSaleCredit":
			if tx.Gross.Minor >= 0 || tx.Net.Minor >= 0 {
				t.Fatalf("%s: refunds and credits must be negative, got %d", tx.ID, tx.Gross.Minor)
			}
		default:
			if tx.Gross.Minor <= 0 {
				t.Fatalf("%s: sale must be positive", tx.ID)
			}
			want := int64(0)
			if !tr.RevenueShareFrom.IsZero() && !tx.CreatedAt.Before(tr.RevenueShareFrom) {
				want = percentOf(tx.Gross.Minor, 15, 100)
			}
			if tx.ShopifyFee.Minor != want {
				t.Fatalf("%s at %s: shopifyFee %d, want %d (threshold crossed %s)", tx.ID, tx.CreatedAt, tx.ShopifyFee.Minor, want, tr.RevenueShareFrom)
			}
		}
		if tx.ChargeID == "" || !strings.HasPrefix(tx.ID, "gid://partners/"+tx.Typename+"/") {
			t.Fatalf("%s: bad IDs %q", tx.ID, tx.ChargeID)
		}
		if i > 0 && (tx.CreatedAt.Before(prev.CreatedAt) || idNumber(tx.ID) <= idNumber(prev.ID)) {
			t.Fatalf("not ordered by createdAt then id: %s after %s", tx.ID, prev.ID)
		}
		if tx.CreatedAt.Before(tr.Start) || !tx.CreatedAt.Before(tr.End) {
			t.Fatalf("%s outside [Start, End)", tx.ID)
		}
		if tx.Typename == "AppSubscriptionSale" {
			checkSubscriptionSale(t, c, tx)
			periodSales[tx.ID]++
		} else if tx.BillingInterval != "" {
			t.Fatalf("%s: billingInterval on a %s", tx.ID, tx.Typename)
		}
		prev = tx
	}
	for _, typ := range txTypenames {
		if seenType[typ] == 0 {
			t.Errorf("no %s generated", typ)
		}
	}
	if len(seenCur) != len(d.Currencies) {
		t.Errorf("currencies seen %v, configured %v", seenCur, d.Currencies)
	}
	// Every billed period of the truth is exactly one sale, and vice versa.
	n := 0
	for _, c := range tr.Customers {
		for _, s := range c.Subscriptions {
			for _, p := range s.Periods {
				if p.TransactionID != "" {
					n++
					if periodSales[p.TransactionID] != 1 {
						t.Fatalf("period %v of %s has no sale %s", p.From, s.ChargeID, p.TransactionID)
					}
				}
			}
		}
	}
	if n != seenType["AppSubscriptionSale"] {
		t.Fatalf("%d billed periods, %d subscription sales", n, seenType["AppSubscriptionSale"])
	}
}

func idNumber(id string) uint64 {
	n, _ := strconv.ParseUint(id[strings.LastIndexByte(id, '/')+1:], 10, 64)
	return n
}

// checkSubscriptionSale: a subscription sale belongs to a paying period of that subscription:
// activated, past its trial, not ended, not frozen, positive price, matching interval and amount.
func checkSubscriptionSale(t *testing.T, c *Customer, tx Transaction) {
	t.Helper()
	for i := range c.Subscriptions {
		s := &c.Subscriptions[i]
		if s.ChargeID != tx.ChargeID {
			continue
		}
		var p *PaidPeriod
		for j := range s.Periods {
			if s.Periods[j].TransactionID == tx.ID {
				p = &s.Periods[j]
			}
		}
		switch {
		case p == nil:
			t.Fatalf("%s: no period of %s", tx.ID, s.ChargeID)
		case !p.BilledAt.Equal(tx.CreatedAt) || tx.CreatedAt.Before(p.From) || tx.CreatedAt.After(p.From.Add(2*24*time.Hour+10*time.Minute)):
			t.Fatalf("%s: recorded %s, period from %s billed %s", tx.ID, tx.CreatedAt, p.From, p.BilledAt)
		case s.Amount.Minor <= 0 || tx.Gross != s.Amount:
			t.Fatalf("%s: gross %v, plan amount %v", tx.ID, tx.Gross, s.Amount)
		case p.From.Before(s.TrialEndsAt) || p.From.Before(s.ActivatedAt):
			t.Fatalf("%s: billed in trial (period %s, trial ends %s)", tx.ID, p.From, s.TrialEndsAt)
		case !s.EndedAt.IsZero() && !p.From.Before(s.EndedAt):
			t.Fatalf("%s: billed after the subscription ended", tx.ID)
		case !s.ActiveAt(p.From):
			t.Fatalf("%s: billed while not active (frozen %v)", tx.ID, s.Frozen)
		case tx.BillingInterval != s.Interval:
			t.Fatalf("%s: interval %s, truth %s", tx.ID, tx.BillingInterval, s.Interval)
		case !c.InstalledAt(p.From):
			t.Fatalf("%s: billed while uninstalled", tx.ID)
		}
		return
	}
	t.Fatalf("%s: charge %s is not a subscription of customer %d", tx.ID, tx.ChargeID, c.Index)
}

func TestGeneratedEventsAreConsistent(t *testing.T) {
	d := testDataset()
	tr := d.Truth
	seen := map[string]int{}
	usageEvents := map[string]Event{}
	installs := make([]int, len(tr.Customers))
	for app := range d.Apps {
		var prev Event
		first := map[int]bool{}
		for e := range d.Events(app) {
			seen[e.Type]++
			c := &tr.Customers[e.Customer]
			if c.AppIndex != app || e.AppID != c.AppID || e.ShopID != c.ShopID {
				t.Fatalf("event %s of customer %d in app %d", e.Type, e.Customer, app)
			}
			if e.OccurredAt.Before(prev.OccurredAt) {
				t.Fatalf("events out of order: %s before %s", e.OccurredAt, prev.OccurredAt)
			}
			if e.OccurredAt.Before(tr.Start) || !e.OccurredAt.Before(tr.End) {
				t.Fatalf("event outside [Start, End): %s", e.OccurredAt)
			}
			if !first[e.Customer] {
				first[e.Customer] = true
				if e.Type != "RELATIONSHIP_INSTALLED" {
					t.Fatalf("customer %d starts with %s", e.Customer, e.Type)
				}
			}
			switch e.Type {
			case "RELATIONSHIP_INSTALLED":
				installs[e.Customer]++
			case "USAGE_CHARGE_APPLIED":
				usageEvents[e.Charge.ID] = e
			}
			if e.Charge != nil && e.Charge.Test != c.Test {
				t.Fatalf("charge %s test=%v on a shop with test=%v", e.Charge.ID, e.Charge.Test, c.Test)
			}
			if strings.HasPrefix(e.Type, "SUBSCRIPTION_") {
				i := slices.IndexFunc(c.Subscriptions, func(s Subscription) bool { return s.ChargeID == e.Charge.ID })
				if i < 0 || c.Subscriptions[i].Amount != e.Charge.Amount || c.Subscriptions[i].Name != e.Charge.Name {
					t.Fatalf("%s: charge %+v not in the truth", e.Type, e.Charge)
				}
			}
			prev = e
		}
	}
	for i, c := range tr.Customers {
		if installs[i] != len(c.Installs) || c.Reactivations != len(c.Installs)-1 {
			t.Fatalf("customer %d: %d install events, truth %d installs", i, installs[i], len(c.Installs))
		}
	}
	for _, typ := range eventTypes {
		if seen[typ] == 0 {
			t.Errorf("no %s generated", typ)
		}
	}
	// Usage is observed (event) before it is billed (AppUsageSale), with the same amount.
	for tx := range d.Transactions() {
		if tx.Typename != "AppUsageSale" {
			continue
		}
		e, ok := usageEvents[tx.ChargeID]
		if !ok || e.Charge.Amount != tx.Gross || !e.OccurredAt.Before(tx.CreatedAt) || e.Customer != tx.Customer {
			t.Fatalf("usage sale %s (%s %v) has no earlier usage event", tx.ID, tx.ChargeID, tx.Gross)
		}
	}
}

func TestTruthCoversTheFeatures(t *testing.T) {
	d := testDataset()
	tr := d.Truth
	var annual, trials, zero, usageOnly, capped, test, excluded, frozen, replaced, declined, reactivated int
	for _, c := range tr.Customers {
		if c.Test {
			test++
		}
		if c.Excluded {
			excluded++
		}
		reactivated += c.Reactivations
		for _, s := range c.Subscriptions {
			switch {
			case s.Interval == "ANNUAL":
				annual++
			case s.Amount.Minor == 0 && s.CappedAmount.Minor > 0:
				usageOnly++
			case s.Amount.Minor == 0:
				zero++
				if len(s.Periods) > 0 {
					t.Fatalf("zero-value plan %s has billed periods", s.ChargeID)
				}
			}
			if s.TrialDays > 0 {
				trials++
				if !s.ActivatedAt.IsZero() && !s.TrialEndsAt.Equal(s.ActivatedAt.AddDate(0, 0, s.TrialDays)) {
					t.Fatalf("trial end of %s", s.ChargeID)
				}
			}
			if s.CappedAmount.Minor > 0 {
				capped++
			}
			if len(s.Frozen) > 0 {
				frozen++
			}
			switch s.EndReason {
			case "REPLACED":
				replaced++
			case "DECLINED", "EXPIRED":
				declined++
			}
		}
	}
	for name, n := range map[string]int{"annual": annual, "trial": trials, "zero-value": zero, "usage-only": usageOnly,
		"capped": capped, "test shop": test, "excluded": excluded, "frozen": frozen, "plan change": replaced,
		"declined": declined, "reactivation": reactivated, "shared domain": len(tr.SharedDomains())} {
		if n == 0 {
			t.Errorf("no %s in the test data", name)
		}
	}
	if tr.RevenueShareFrom.IsZero() {
		t.Error("revenue-share threshold never crossed in the test data")
	}
	// Totals equal the transactions.
	want := map[[3]string]int64{}
	for tx := range d.Transactions() {
		want[[3]string{strconv.Itoa(tx.Customer), tx.Gross.Currency, tx.Type}] += tx.Net.Minor
	}
	got := map[[3]string]int64{}
	for _, c := range tr.Customers {
		for _, tot := range c.Totals {
			got[[3]string{strconv.Itoa(c.Index), tot.Currency, tot.Type}] += tot.Net
		}
	}
	if !reflect.DeepEqual(want, got) {
		t.Fatal("truth totals differ from the transactions")
	}
	c := &tr.Customers[0]
	if got, ok := tr.Customer(c.AppID, c.ShopDomain); !ok || got.Index != 0 {
		t.Fatal("Truth.Customer lookup failed")
	}
}

func TestExcludedDomainsAndLocalCurrency(t *testing.T) {
	cfg := testConfig()
	cfg.Shops = 80
	cfg.ExcludedRate = 0
	base := Generate(cfg)
	dom := base.Shops[3].Domain
	cfg.ExcludedDomains = []string{dom}
	cfg.LocalCurrencySince = cfg.Start.AddDate(0, 7, 0)
	d := Generate(cfg)
	for _, s := range d.Shops {
		if s.Excluded != (s.Domain == dom) {
			t.Fatalf("shop %s excluded=%v", s.Domain, s.Excluded)
		}
	}
	for _, c := range d.Truth.Customers {
		for _, s := range c.Subscriptions {
			before := s.CreatedAt.Before(cfg.LocalCurrencySince)
			if before && s.Amount.Currency != cfg.Currencies[0] || !before && s.Amount.Currency != c.Currency {
				t.Fatalf("subscription created %s in %s, shop currency %s", s.CreatedAt, s.Amount.Currency, c.Currency)
			}
		}
	}
}

func TestGenerateRejectsBadConfig(t *testing.T) {
	cfg := testConfig()
	cfg.End = cfg.Start
	if cfg.Validate() == nil {
		t.Fatal("End == Start accepted")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("Generate did not panic on an invalid config")
		}
	}()
	Generate(cfg)
}
