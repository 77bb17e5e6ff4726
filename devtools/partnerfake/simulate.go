package partnerfake

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

const day = 24 * 60 * 60

// custOut is what simulating one (app, shop) relationship produces. Indices in it are local
// (charges, usage records, transactions of this customer); merge rebases them.
type custOut struct {
	app        uint8
	txns       []txn
	events     []event
	charges    []chargeObj
	usage      []usageRec
	truth      Customer
	subCharge  []int   // truth.Subscriptions[i] -> local charge index
	periodTx   [][]int // truth.Subscriptions[i].Periods[j] -> local transaction index or -1
	oneCharge  []int   // truth.OneTimeCharges[i] -> local charge index
	credCharge []int   // truth.Credits[i] -> local charge index
}

// sim simulates one customer with its own random stream, so customers can be generated in parallel
// and the result does not depend on scheduling.
type sim struct {
	cfg        *GenConfig
	r          *rand.Rand
	base, end  int64 // end: seconds since base; nothing at or after it is emitted
	localSince int64
	shopCur    uint8
	test       bool
	out        *custOut
}

func (s *sim) abs(t int64) time.Time { return time.Unix(s.base+t, 0).UTC() }

// cur returns the currency of a charge created at t: Currencies[0] before LocalCurrencySince.
func (s *sim) cur(t int64) uint8 {
	if t < s.localSince {
		return 0
	}
	return s.shopCur
}

func (s *sim) money(minor int64, cur uint8) Money { return Money{minor, s.cfg.Currencies[cur]} }

func (s *sim) emit(at int64, typ uint8, ref, aux uint32) {
	if at < 0 || at >= s.end {
		return
	}
	s.out.events = append(s.out.events, event{at: uint32(at), ref: ref, aux: aux, typ: typ})
}

// sale records a transaction unless the shop is a development store (test charges earn nothing),
// the amount is zero (free plans produce no sale) or it would be recorded at or after End.
func (s *sim) sale(at int64, kind, ck uint8, charge int, gross int64, cur, flags uint8, aux int64) int {
	if s.test || gross == 0 || at >= s.end {
		return -1
	}
	s.out.txns = append(s.out.txns, txn{
		at: uint32(at), charge: uint32(charge), gross: int32(gross), aux: uint32(aux),
		kind: kind, ck: ck, cur: cur, flags: flags,
	})
	return len(s.out.txns) - 1
}

// lag is the delay between billing and the transaction being recorded (pitfall: charge dates
// drift from the activation anniversary).
func (s *sim) lag() int64 { return 600 + s.r.Int64N(2*day) }

// billingOn encodes a subscription's next billing date (a day, midnight UTC) for an event payload.
func (s *sim) billingOn(t int64) uint32 {
	d := (s.base+t)/day*day - s.base
	if d < 0 {
		d = 0
	}
	return uint32(d) + 1
}

// lifetime draws how long a relationship lasts from the monthly churn hazard.
func (s *sim) lifetime() int64 {
	p := s.cfg.ChurnRate
	if p <= 0 {
		return math.MaxInt32
	}
	if p >= 1 {
		p = 0.999
	}
	rate := -math.Log(1-p) / (30 * day)
	return int64(min(s.r.ExpFloat64()/rate, math.MaxInt32))
}

func (s *sim) maybeRefund(saleAt int64, ck uint8, charge int, gross int64, cur uint8) {
	if s.r.Float64() >= s.cfg.RefundRate {
		return
	}
	at := saleAt + (1+s.r.Int64N(20))*day + s.r.Int64N(day)
	amount := gross
	if s.r.Float64() < 0.4 {
		amount = gross / 2 // partial refund
	}
	s.sale(at, txAdjustment, ck, charge, -amount, cur, 0, saleAt)
}

// run simulates install periods until End: install, maybe leave, maybe come back.
func (s *sim) run(installAt int64) {
	first := true
	for t := installAt; t < s.end; first = false {
		leftAt := s.episode(t, first)
		if leftAt >= s.end || s.r.Float64() >= s.cfg.ReactivationRate {
			return
		}
		t = leftAt + (3+s.r.Int64N(180))*day + s.r.Int64N(day)
	}
}

// episode simulates one install period and returns the uninstall time (>= end if none).
func (s *sim) episode(installAt int64, first bool) int64 {
	c := &s.out.truth
	s.emit(installAt, evInstalled, 0, 0)
	leave := installAt + max(s.lifetime(), 3600)
	uninstallAt, planEnd, reason := leave, leave, "UNINSTALLED"
	if leave < s.end && s.r.Float64() < 0.3 { // cancels the plan but keeps the app for a while
		reason = "CANCELED"
		uninstallAt = leave + max(s.lifetime(), day)
	}
	span := Span{From: s.abs(installAt)}
	if uninstallAt < s.end {
		span.To = s.abs(uninstallAt)
		// Emitted before the plan's events so that, at equal times, UNINSTALLED precedes the
		// SUBSCRIPTION_CHARGE_CANCELED it causes.
		s.emit(uninstallAt, evUninstalled, s.uninstallReason(), uint32(s.r.IntN(len(uninstallDescriptions))))
	}
	c.Installs = append(c.Installs, span)
	if !first {
		c.Reactivations++
	}
	stop := min(uninstallAt, s.end)
	s.plans(installAt+60+s.r.Int64N(3600), planEnd, reason, first)
	s.oneTime(installAt, stop)
	s.credit(installAt, stop)
	return uninstallAt
}

func (s *sim) uninstallReason() uint32 {
	r := s.r.Float64()
	switch {
	case r < 0.1:
		return 0 // null
	case r < 0.85:
		return 1 << s.r.IntN(len(uninstallReasons))
	default:
		return 1<<s.r.IntN(len(uninstallReasons)) | 1<<s.r.IntN(len(uninstallReasons))
	}
}

// plan is one subscription choice.
type plan struct {
	name      string
	amount    int64
	annual    bool
	trialDays int
	capped    int64
	tier      int // -1 for free and usage-only plans
}

func (s *sim) choosePlan(cur uint8, first, change bool, prevTier int) plan {
	info := currencyFor(s.cfg.Currencies[cur])
	capAmount := info.tiers[1] * 5
	if !change && s.r.Float64() < s.cfg.ZeroValueRate {
		return plan{name: freePlanName, tier: -1}
	}
	tier := 0
	if change {
		tier = (prevTier + 1 + s.r.IntN(2)) % 3 // another paid tier (upgrade or downgrade)
	} else if r := s.r.Float64(); r >= 0.5 {
		tier = 1
		if r >= 0.85 {
			tier = 2
		}
	}
	usage := s.r.Float64() < s.cfg.UsageRate
	if usage && !change && s.r.Float64() < s.cfg.UsageOnlyShare {
		return plan{name: usageOnlyPlanName, capped: capAmount, tier: -1}
	}
	p := plan{name: planNames[tier], amount: info.tiers[tier], tier: tier}
	// Time + usage plans exist only on 30-day intervals.
	if !usage && s.r.Float64() < s.cfg.AnnualRate {
		p.annual, p.amount, p.name = true, p.amount*10, p.name+" (annual)"
	}
	if usage {
		p.capped = capAmount
	}
	trialRate := s.cfg.TrialRate
	if !first {
		trialRate *= 0.3 // returning shops rarely get a second trial
	}
	if !change && s.r.Float64() < trialRate {
		p.trialDays = [3]int{7, 14, 30}[s.r.IntN(3)]
	}
	return p
}

// plans runs the subscriptions of one install period from t until planEnd (when the plan is
// canceled by uninstall or by the merchant, with endReason).
func (s *sim) plans(t, planEnd int64, endReason string, first bool) {
	if s.r.Float64() < s.cfg.NoPlanRate {
		return
	}
	c := &s.out.truth
	change, prevTier := false, -1
	for t < planEnd && t < s.end {
		cur := s.cur(t)
		p := s.choosePlan(cur, first, change, prevTier)
		chargeIdx := len(s.out.charges)
		s.out.charges = append(s.out.charges, chargeObj{name: p.name, amount: p.amount, kind: ckSubscription, cur: cur, test: s.test})
		interval := "EVERY_30_DAYS"
		if p.annual {
			interval = "ANNUAL"
		}
		created := t
		if change {
			created = t - 120 // approved just before the old plan is replaced
		}
		c.Subscriptions = append(c.Subscriptions, Subscription{
			Name: p.name, Amount: s.money(p.amount, cur), Interval: interval, TrialDays: p.trialDays,
			CappedAmount: s.money(p.capped, cur), Test: s.test, CreatedAt: s.abs(created),
		})
		s.out.subCharge = append(s.out.subCharge, chargeIdx)
		s.out.periodTx = append(s.out.periodTx, nil)
		si := len(c.Subscriptions) - 1

		if !change && s.r.Float64() < s.cfg.DeclineRate {
			at, typ, reason := t+30+s.r.Int64N(600), evSubDeclined, "DECLINED"
			if s.r.Float64() < 0.3 {
				at, typ, reason = t+2*day, evSubExpired, "EXPIRED" // not approved within 2 days
			}
			if at >= s.end {
				return // still pending at End
			}
			s.emit(at, typ, uint32(chargeIdx), 0)
			c.Subscriptions[si].EndedAt, c.Subscriptions[si].EndReason = s.abs(at), reason
			if s.r.Float64() >= 0.5 {
				return
			}
			t = at + 60 + s.r.Int64N(3*day)
			continue
		}

		cycle := int64(30 * day)
		if p.annual {
			cycle = 365 * day
		}
		act := t + 6 + s.r.Int64N(120)
		if change {
			act = t
		}
		if act >= s.end {
			return
		}
		trialEnd := act + int64(p.trialDays)*day
		next := trialEnd
		if p.trialDays == 0 {
			next = act + cycle // billed at activation; next bill one cycle later
		}
		if s.cfg.AcceptedEvents {
			s.emit(act-5, evSubAccepted, uint32(chargeIdx), s.billingOn(next))
		}
		s.emit(act, evSubActivated, uint32(chargeIdx), s.billingOn(next))
		c.Subscriptions[si].ActivatedAt, c.Subscriptions[si].TrialEndsAt = s.abs(act), s.abs(trialEnd)

		endAt, reason := s.cycles(si, chargeIdx, p, cur, trialEnd, cycle, planEnd, endReason)
		if endAt < s.end {
			s.emit(endAt, evSubCanceled, uint32(chargeIdx), 0)
			c.Subscriptions[si].EndedAt, c.Subscriptions[si].EndReason = s.abs(endAt), reason
		}
		if reason != "REPLACED" {
			return
		}
		t, change, prevTier = endAt, true, p.tier
		if prevTier < 0 {
			prevTier = 0
		}
	}
}

// cycles bills a subscription from its first billing date until it ends, with freezes, plan
// changes at cycle boundaries and usage records; it returns when and why the subscription ended.
func (s *sim) cycles(si, chargeIdx int, p plan, cur uint8, first, cycle, planEnd int64, endReason string) (int64, string) {
	sub := &s.out.truth.Subscriptions[si]
	endAt, reason := planEnd, endReason
	capAmount, bumped := p.capped, false
	var flags uint8
	if p.annual {
		flags = flagAnnual
	}
	for k, c := 0, first; c < endAt && c < s.end; k, c = k+1, c+cycle {
		if k > 0 && s.r.Float64() < s.cfg.PlanChangeRate {
			return c, "REPLACED"
		}
		if s.r.Float64() < s.cfg.FreezeRate {
			frozeAt := c + s.r.Int64N(6*3600)
			if frozeAt >= endAt || frozeAt >= s.end {
				break
			}
			deactivated := s.r.Float64() < 0.5 // store closed or paused rather than an unpaid bill
			s.emit(frozeAt, evSubFrozen, uint32(chargeIdx), 0)
			if deactivated {
				s.emit(frozeAt, evDeactivated, 0, 0)
			}
			span := Span{From: s.abs(frozeAt)}
			unfreezeAt := frozeAt + (3+s.r.Int64N(57))*day
			if s.r.Float64() < 0.7 && unfreezeAt < endAt && unfreezeAt < s.end {
				span.To = s.abs(unfreezeAt)
				sub.Frozen = append(sub.Frozen, span)
				if deactivated {
					s.emit(unfreezeAt, evReactivated, 0, 0)
				}
				s.emit(unfreezeAt, evSubUnfrozen, uint32(chargeIdx), s.billingOn(unfreezeAt+cycle))
				c = unfreezeAt // billing resumes, anchored at the unfreeze
			} else {
				if endAt < s.end {
					span.To = s.abs(endAt)
				}
				sub.Frozen = append(sub.Frozen, span)
				return endAt, reason
			}
		}
		periodEnd := min(c+cycle, endAt)
		if p.amount > 0 && !s.test {
			billed := c + s.lag()
			ti := s.sale(billed, txSubscription, ckSubscription, chargeIdx, p.amount, cur, flags, 0)
			pp := PaidPeriod{From: s.abs(c), To: s.abs(periodEnd), Gross: s.money(p.amount, cur)}
			if ti >= 0 {
				pp.BilledAt = s.abs(billed)
				s.maybeRefund(billed, ckSubscription, chargeIdx, p.amount, cur)
			}
			sub.Periods = append(sub.Periods, pp)
			s.out.periodTx[si] = append(s.out.periodTx[si], ti)
		}
		if capAmount > 0 {
			s.usageCycle(chargeIdx, cur, c, periodEnd, c+cycle, &capAmount, &bumped)
		}
	}
	return endAt, reason
}

// usageCycle records the usage charges of one cycle [from, to): USAGE_CHARGE_APPLIED when used,
// an AppUsageSale when the cycle is billed at its end. Records stop at the capped amount unless
// the merchant approves a higher cap (once per subscription).
func (s *sim) usageCycle(chargeIdx int, cur uint8, from, to, next int64, capAmount *int64, bumped *bool) {
	mean := s.cfg.UsageRecordsMean
	n := int(mean*(0.5+s.r.Float64()) + 0.5)
	window := min(to, s.end) - from
	if n <= 0 || window <= 0 {
		return
	}
	info := currencyFor(s.cfg.Currencies[cur])
	unit := max(1, info.tiers[0]/100)
	maxQty := max(1, int64(2*float64(*capAmount)/(1.5*mean*float64(unit))))
	times := make([]int64, n)
	for i := range times {
		times[i] = from + s.r.Int64N(window)
	}
	slices.Sort(times)
	billAt := to + s.lag()
	var sum int64
	warned := false
	for _, at := range times {
		qty := 1 + s.r.Int64N(maxQty)
		amount := qty * unit
		if sum+amount > *capAmount {
			if *bumped || s.r.Float64() >= 0.3 {
				return // "Total price exceeds balance remaining": the app cannot charge more
			}
			*bumped = true
			*capAmount *= 2
			s.emit(at, evCappedUpdated, uint32(chargeIdx), s.billingOn(next))
		}
		sum += amount
		ui := len(s.out.usage)
		s.out.usage = append(s.out.usage, usageRec{sub: uint32(chargeIdx), amount: int32(amount), qty: int32(qty), app: s.out.app})
		s.emit(at, evUsageApplied, uint32(ui), 0)
		if !warned && sum*10 >= *capAmount*9 {
			warned = true
			s.emit(at, evApproachingCap, uint32(chargeIdx), s.billingOn(next))
		}
		if s.sale(billAt, txUsage, ckUsage, ui, amount, cur, 0, 0) >= 0 {
			s.maybeRefund(billAt, ckUsage, ui, amount, cur)
		}
	}
}

func (s *sim) oneTime(from, to int64) {
	if to <= from || s.r.Float64() >= s.cfg.OneTimeRate {
		return
	}
	t := from + s.r.Int64N(to-from)
	cur := s.cur(t)
	k := s.r.IntN(3)
	amount := currencyFor(s.cfg.Currencies[cur]).oneTime[k]
	ci := len(s.out.charges)
	s.out.charges = append(s.out.charges, chargeObj{name: oneTimeNames[k], amount: amount, kind: ckOneTime, cur: cur, test: s.test})
	oc := OneTimeCharge{Name: oneTimeNames[k], Amount: s.money(amount, cur), CreatedAt: s.abs(t)}
	switch r := s.r.Float64(); {
	case r < 0.15:
		if at := t + 30 + s.r.Int64N(600); at < s.end {
			s.emit(at, evOneTimeDeclined, uint32(ci), 0)
			oc.Outcome = "DECLINED"
		}
	case r < 0.2:
		if at := t + 2*day; at < s.end {
			s.emit(at, evOneTimeExpired, uint32(ci), 0)
			oc.Outcome = "EXPIRED"
		}
	default:
		act := t + 6 + s.r.Int64N(120)
		if act >= s.end {
			break
		}
		if s.cfg.AcceptedEvents {
			s.emit(act-5, evOneTimeAccepted, uint32(ci), 0)
		}
		s.emit(act, evOneTimeActivated, uint32(ci), 0)
		oc.Outcome, oc.ActivatedAt = "ACTIVATED", s.abs(act)
		billed := act + s.lag()
		if s.sale(billed, txOneTime, ckOneTime, ci, amount, cur, 0, 0) >= 0 {
			s.maybeRefund(billed, ckOneTime, ci, amount, cur)
		}
	}
	s.out.truth.OneTimeCharges = append(s.out.truth.OneTimeCharges, oc)
	s.out.oneCharge = append(s.out.oneCharge, ci)
}

func (s *sim) credit(from, to int64) {
	if to <= from || s.r.Float64() >= s.cfg.CreditRate {
		return
	}
	t := from + s.r.Int64N(to-from)
	cur := s.cur(t)
	info := currencyFor(s.cfg.Currencies[cur])
	k := s.r.IntN(len(creditNames))
	amount := [3]int64{info.tiers[0], info.tiers[0] / 2, info.tiers[1] / 2}[k]
	ci := len(s.out.charges)
	s.out.charges = append(s.out.charges, chargeObj{name: creditNames[k], amount: amount, kind: ckCredit, cur: cur, test: s.test})
	cr := Credit{Name: creditNames[k], Amount: s.money(amount, cur), CreatedAt: s.abs(t), Outcome: "PENDING"}
	applyAt := t
	switch r := s.r.Float64(); {
	case r < 0.05:
		s.emit(t, evCreditFailed, uint32(ci), 0)
		cr.Outcome, applyAt = "FAILED", -1
	case r < 0.35:
		s.emit(t, evCreditPending, uint32(ci), 0)
		applyAt = t + (1+s.r.Int64N(3))*day
	}
	if applyAt >= 0 && applyAt < s.end {
		s.emit(applyAt, evCreditApplied, uint32(ci), 0)
		cr.Outcome = "APPLIED"
		s.sale(applyAt+s.lag(), txCredit, ckCredit, ci, -amount, cur, 0, 0)
	}
	s.out.truth.Credits = append(s.out.truth.Credits, cr)
	s.out.credCharge = append(s.out.credCharge, ci)
}
