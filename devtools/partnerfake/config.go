package partnerfake

import (
	"fmt"
	"time"
)

// GenConfig parameterises Generate. Rates are probabilities in [0,1]; "per cycle" rates apply to
// each 30-day (or annual) billing cycle, "per install" rates to each install period of an
// (app, shop) relationship. The same config and seed always give the same Dataset.
type GenConfig struct {
	Seed uint64

	Apps       int      // number of apps (IDs gid://partners/App/1001, 1002, ...)
	AppNames   []string // optional; defaults to a built-in list
	Shops      int      // distinct shops (stores); customers = (app, shop) pairs, more with SharedDomainRate
	Currencies []string // shops' billing currencies; the first gets CurrencyWeights[0] (default 60%)
	// CurrencyWeights optionally weights Currencies (same length); default: 60% first, rest equal.
	CurrencyWeights []float64
	Start, End      time.Time // nothing happens before Start; nothing after End is generated

	// LocalCurrencySince: charges created before this instant are in Currencies[0] whatever the
	// shop's currency (the platform allowed only USD charges until 2023-04). Zero: always the shop's.
	LocalCurrencySince time.Time

	NoPlanRate       float64 // installs that never pick a plan (installed, never charged)
	ZeroValueRate    float64 // plan choices that are a $0 plan (free tier; events but no sales)
	TrialRate        float64 // paid subscriptions with a trial (7, 14 or 30 days)
	AnnualRate       float64 // paid subscriptions billed ANNUAL instead of EVERY_30_DAYS
	UsageRate        float64 // monthly paid subscriptions with a capped usage line item
	UsageOnlyShare   float64 // of the usage subscriptions, the share with a $0 recurring price
	UsageRecordsMean float64 // mean usage records per cycle of a usage subscription
	DeclineRate      float64 // charges the merchant declines (or lets expire: 30% of these)
	PlanChangeRate   float64 // per cycle: the merchant switches plan at the cycle boundary
	FreezeRate       float64 // per cycle: the charge is frozen (unpaid bill or store closed)
	OneTimeRate      float64 // per install: a one-time charge
	CreditRate       float64 // per install: an app credit
	RefundRate       float64 // per sale: refunded later (AppSaleAdjustment, negative)
	ChurnRate        float64 // monthly hazard of leaving (uninstall, or cancel and stay installed)
	ReactivationRate float64 // uninstalled shops that install again later
	SharedDomainRate float64 // shops that also install another app (same domain across apps)
	TestShopRate     float64 // development shops: every charge is test (events, no transactions)
	ExcludedRate     float64 // shops flagged excluded in the truth (the workspace hides them)
	ExcludedDomains  []string
	// AcceptedEvents emits SUBSCRIPTION_CHARGE_ACCEPTED / ONE_TIME_CHARGE_ACCEPTED just before the
	// ACTIVATED event. The Admin API deprecated the ACCEPTED status in 2021-01 but the event type
	// is still in the Partner enum; whether it still fires is undocumented, so it is a switch.
	AcceptedEvents bool
	// RevenueShareThresholdUSD is the lifetime gross (USD-equivalent, org-wide) below which the
	// revenue share is 0%; above it shopifyFee is 15% of gross. Zero means USD 1,000,000.
	RevenueShareThresholdUSD int64
}

// DemoConfig is the small data set `make run` serves: 3 apps, 2,000 shops, 3 currencies and 18
// months ending at end (pass a fixed day for reproducible data).
func DemoConfig(end time.Time) GenConfig {
	end = end.UTC().Truncate(24 * time.Hour)
	return GenConfig{
		Seed: 1, Apps: 3, Shops: 2000, Currencies: []string{"USD", "EUR", "GBP"},
		Start: end.AddDate(0, -18, 0), End: end,
		NoPlanRate: 0.12, ZeroValueRate: 0.15, TrialRate: 0.5, AnnualRate: 0.12, UsageRate: 0.3,
		UsageOnlyShare: 0.25, UsageRecordsMean: 6, DeclineRate: 0.08, PlanChangeRate: 0.02,
		FreezeRate: 0.01, OneTimeRate: 0.1, CreditRate: 0.05, RefundRate: 0.02, ChurnRate: 0.06,
		ReactivationRate: 0.2, SharedDomainRate: 0.15, TestShopRate: 0.02, ExcludedRate: 0.01,
		AcceptedEvents: true,
		// Lowered from USD 1M so the demo's few hundred thousand dollars cross it and both fee
		// tiers (0% and 15%) appear.
		RevenueShareThresholdUSD: 100_000,
	}
}

// BenchConfig is the benchmark scale: 43,400 shops (about 50,000 customers, shops that installed
// several apps counting once per app), 3 apps, 3 currencies, 36 months, with usage volume tuned to
// give about 5 million transactions (and about 5.25 million events).
func BenchConfig(end time.Time) GenConfig {
	c := DemoConfig(end)
	c.Shops = 43400
	c.Start = c.End.AddDate(0, -36, 0)
	c.UsageRate = 0.45
	c.UsageRecordsMean = 33
	c.RevenueShareThresholdUSD = 0 // the real USD 1M
	return c
}

// Validate reports a config Generate cannot use.
func (c *GenConfig) Validate() error {
	switch {
	case c.Apps < 1 || c.Apps > 250:
		return fmt.Errorf("partnerfake: Apps must be 1..250, got %d", c.Apps)
	case c.Shops < 0:
		return fmt.Errorf("partnerfake: Shops must be >= 0")
	case len(c.Currencies) == 0 || len(c.Currencies) > 250:
		return fmt.Errorf("partnerfake: Currencies must list 1..250 codes")
	case len(c.CurrencyWeights) != 0 && len(c.CurrencyWeights) != len(c.Currencies):
		return fmt.Errorf("partnerfake: CurrencyWeights must match Currencies")
	case !c.End.After(c.Start):
		return fmt.Errorf("partnerfake: End must be after Start")
	case c.End.Sub(c.Start) > 100*365*24*time.Hour:
		return fmt.Errorf("partnerfake: span must be under 100 years")
	}
	for _, code := range c.Currencies {
		if len(code) != 3 {
			return fmt.Errorf("partnerfake: currency %q is not a three-letter code", code)
		}
	}
	return nil
}
