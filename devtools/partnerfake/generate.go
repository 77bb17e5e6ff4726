package partnerfake

import (
	"cmp"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

const shopsPerChunk = 256

// Generate builds a dataset from cfg. The same cfg (seed included) always gives the same dataset,
// whatever GOMAXPROCS is: every shop and every (app, shop) relationship draws from its own
// math/rand/v2 PCG stream seeded from cfg.Seed and its index, and results are merged in index
// order. It panics when cfg.Validate fails.
func Generate(cfg GenConfig) *Dataset {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	cfg.Start, cfg.End = cfg.Start.UTC().Truncate(time.Second), cfg.End.UTC().Truncate(time.Second)
	d := &Dataset{
		Config:     cfg,
		Currencies: slices.Clone(cfg.Currencies),
		base:       cfg.Start.Unix(),
		events:     make([][]event, cfg.Apps),
		appTxns:    make([][]uint32, cfg.Apps),
		Shops:      make([]Shop, cfg.Shops),
	}
	d.Apps = makeApps(&cfg)
	d.Truth = &Truth{Start: cfg.Start, End: cfg.End, Currencies: d.Currencies, byKey: map[custKey]int{}}
	g := &generator{d: d, cfg: &cfg, end: cfg.End.Unix() - d.base, excluded: map[string]bool{}}
	for _, dom := range cfg.ExcludedDomains {
		g.excluded[dom] = true
	}
	g.currencyCDF = currencyCDF(&cfg)
	if !cfg.LocalCurrencySince.IsZero() {
		g.localSince = cfg.LocalCurrencySince.Unix() - d.base
	} else {
		g.localSince = math.MinInt64
	}
	g.run()
	g.finish()
	return d
}

type generator struct {
	d           *Dataset
	cfg         *GenConfig
	end         int64
	localSince  int64
	excluded    map[string]bool
	currencyCDF []float64
	periods     []periodRef
}

// periodRef remembers which sale paid a period, resolved to a transaction ID after sorting.
type periodRef struct {
	cust, sub, period int
	key               txn
}

type chunkOut struct {
	first int
	shops []Shop
	custs []custOut
}

// run generates shops in chunks on all CPUs and merges the chunks in order; a window bounds how far
// workers run ahead of the merge so memory stays proportional to the data, not to the backlog.
func (g *generator) run() {
	n := (g.cfg.Shops + shopsPerChunk - 1) / shopsPerChunk
	workers := runtime.GOMAXPROCS(0)
	results := make([]chan chunkOut, n)
	for i := range results {
		results[i] = make(chan chunkOut, 1)
	}
	window := make(chan struct{}, 2*workers)
	jobs := make(chan int)
	go func() {
		for k := range n {
			window <- struct{}{}
			jobs <- k
		}
		close(jobs)
	}()
	for range workers {
		go func() {
			for k := range jobs {
				results[k] <- g.chunk(k)
			}
		}()
	}
	for k := range n {
		g.merge(<-results[k])
		<-window
	}
}

type install struct {
	app int
	at  int64
}

func (g *generator) chunk(k int) chunkOut {
	out := chunkOut{first: k * shopsPerChunk}
	for i := out.first; i < min(out.first+shopsPerChunk, g.cfg.Shops); i++ {
		shop, installs := g.shop(i)
		out.shops = append(out.shops, shop)
		for _, in := range installs {
			out.custs = append(out.custs, g.customer(shop, in))
		}
	}
	return out
}

func currencyCDF(cfg *GenConfig) []float64 {
	w := cfg.CurrencyWeights
	if len(w) == 0 {
		w = make([]float64, len(cfg.Currencies))
		w[0] = 0.6
		if len(w) == 1 {
			w[0] = 1
		}
		for i := 1; i < len(w); i++ {
			w[i] = 0.4 / float64(len(w)-1)
		}
	}
	total := 0.0
	for _, x := range w {
		total += x
	}
	cdf := make([]float64, len(w))
	acc := 0.0
	for i, x := range w {
		acc += x / total
		cdf[i] = acc
	}
	return cdf
}

func pickCDF(r *rand.Rand, cdf []float64) int {
	x := r.Float64()
	for i, c := range cdf {
		if x < c {
			return i
		}
	}
	return len(cdf) - 1
}

func title(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// shop draws one shop and the apps it installs: one primary app (earlier apps more popular), and
// with SharedDomainRate more apps later under the same domain.
func (g *generator) shop(i int) (Shop, []install) {
	r := rand.New(rand.NewPCG(g.cfg.Seed, 0x5000_0000_0000_0000|uint64(i)))
	adj, noun := shopAdjectives[r.IntN(len(shopAdjectives))], shopNouns[r.IntN(len(shopNouns))]
	domain := adj + "-" + noun + "-" + strconv.FormatInt(int64(i), 36) + ".myshopify.com"
	shop := Shop{
		Index:    i,
		ID:       "gid://partners/Shop/" + strconv.Itoa(firstShopNumber+i),
		Domain:   domain,
		Name:     title(adj) + " " + title(noun),
		Currency: g.cfg.Currencies[pickCDF(r, g.currencyCDF)],
		Test:     r.Float64() < g.cfg.TestShopRate,
	}
	shop.Excluded = r.Float64() < g.cfg.ExcludedRate || g.excluded[domain]
	// u^0.7 puts more first installs late in the span: the app base grows over time.
	first := int64(float64(g.end) * math.Pow(r.Float64(), 0.7))
	weights := make([]float64, g.cfg.Apps)
	for a := range weights {
		weights[a] = 1 / float64(a+1)
	}
	pick := func() int {
		total := 0.0
		for _, w := range weights {
			total += w
		}
		x := r.Float64() * total
		for a, w := range weights {
			if x < w {
				return a
			}
			x -= w
		}
		for a := len(weights) - 1; a >= 0; a-- {
			if weights[a] > 0 {
				return a
			}
		}
		return 0
	}
	a := pick()
	weights[a] = 0
	installs := []install{{a, first}}
	for len(installs) < g.cfg.Apps && r.Float64() < g.cfg.SharedDomainRate {
		a := pick()
		weights[a] = 0
		if at := first + r.Int64N(180*day); at < g.end {
			installs = append(installs, install{a, at})
		}
	}
	slices.SortFunc(installs, func(x, y install) int { return cmp.Compare(x.app, y.app) })
	return shop, installs
}

func (g *generator) customer(shop Shop, in install) custOut {
	out := custOut{app: uint8(in.app)}
	out.truth = Customer{
		AppIndex: in.app, AppID: g.d.Apps[in.app].ID, ShopIndex: shop.Index, ShopID: shop.ID,
		ShopDomain: shop.Domain, ShopName: shop.Name, Currency: shop.Currency, Test: shop.Test, Excluded: shop.Excluded,
	}
	s := &sim{
		cfg:        g.cfg,
		r:          rand.New(rand.NewPCG(g.cfg.Seed^0x9E3779B97F4A7C15, uint64(shop.Index)<<8|uint64(in.app))),
		base:       g.d.base,
		end:        g.end,
		localSince: g.localSince,
		shopCur:    uint8(slices.Index(g.cfg.Currencies, shop.Currency)),
		test:       shop.Test,
		out:        &out,
	}
	s.run(in.at)
	return out
}

// merge appends one chunk's customers to the dataset, rebasing local indices.
func (g *generator) merge(co chunkOut) {
	d := g.d
	copy(d.Shops[co.first:], co.shops)
	for i := range co.custs {
		c := &co.custs[i]
		ci := uint32(len(d.custApp))
		d.custApp = append(d.custApp, c.app)
		d.custShop = append(d.custShop, uint32(c.truth.ShopIndex))
		chargeOff, usageOff := uint32(len(d.charges)), uint32(len(d.usage))
		d.charges = append(d.charges, c.charges...)
		for _, u := range c.usage {
			u.sub += chargeOff
			d.usage = append(d.usage, u)
		}
		txOff := len(d.txns)
		for _, t := range c.txns {
			t.cust = ci
			if t.ck == ckUsage {
				t.charge += usageOff
			} else {
				t.charge += chargeOff
			}
			d.txns = append(d.txns, t)
		}
		// A customer's events are generated per charge, not in time order: order them by time
		// (stable, so cause-before-effect at equal seconds survives) and number ties.
		slices.SortStableFunc(c.events, func(x, y event) int { return cmp.Compare(x.at, y.at) })
		for j := range c.events {
			e := c.events[j]
			if j > 0 && c.events[j-1].at == e.at {
				e.seq = d.lastSeq(c.app) + 1
			}
			e.cust = ci
			if ck, ok := eventPayload(e.typ); ok {
				if ck == ckUsage {
					e.ref += usageOff
				} else {
					e.ref += chargeOff
				}
			}
			d.events[c.app] = append(d.events[c.app], e)
		}
		t := c.truth
		t.Index = int(ci)
		for si := range t.Subscriptions {
			t.Subscriptions[si].ChargeID = d.chargeGID(ckSubscription, chargeOff+uint32(c.subCharge[si]))
			for pi, lt := range c.periodTx[si] {
				if lt >= 0 {
					g.periods = append(g.periods, periodRef{cust: int(ci), sub: si, period: pi, key: d.txns[txOff+lt]})
				}
			}
		}
		for k := range t.OneTimeCharges {
			t.OneTimeCharges[k].ChargeID = d.chargeGID(ckOneTime, chargeOff+uint32(c.oneCharge[k]))
		}
		for k := range t.Credits {
			t.Credits[k].ChargeID = d.chargeGID(ckCredit, chargeOff+uint32(c.credCharge[k]))
		}
		d.Truth.byKey[custKey{t.AppID, t.ShopDomain}] = int(ci)
		d.Truth.Customers = append(d.Truth.Customers, t)
	}
}

func exact[T any](s []T) []T {
	if cap(s)-len(s) < len(s)/16 {
		return s
	}
	return append(make([]T, 0, len(s)), s...)
}

func (d *Dataset) lastSeq(app uint8) uint16 {
	ev := d.events[app]
	return ev[len(ev)-1].seq
}

func txnCmp(x, y txn) int {
	if c := cmp.Compare(x.at, y.at); c != 0 {
		return c
	}
	if c := cmp.Compare(x.cust, y.cust); c != 0 {
		return c
	}
	if c := cmp.Compare(x.kind, y.kind); c != 0 {
		return c
	}
	if c := cmp.Compare(x.charge, y.charge); c != 0 {
		return c
	}
	return cmp.Compare(x.gross, y.gross)
}

func eventCmp(x, y event) int {
	if c := cmp.Compare(x.at, y.at); c != 0 {
		return c
	}
	if c := cmp.Compare(x.cust, y.cust); c != 0 {
		return c
	}
	return cmp.Compare(x.seq, y.seq)
}

// finish sorts into API order, assigns the revenue-share tier, resolves period transactions and
// sums the truth's totals.
func (g *generator) finish() {
	d := g.d
	// Appending doubled the capacities; exact copies keep the live dataset at its real size.
	d.txns = exact(d.txns)
	d.usage = exact(d.usage)
	d.charges = exact(d.charges)
	slices.SortFunc(d.txns, txnCmp)
	for a := range d.events {
		d.events[a] = exact(d.events[a])
		slices.SortFunc(d.events[a], eventCmp)
	}
	for pos := range d.txns {
		a := d.custApp[d.txns[pos].cust]
		d.appTxns[a] = append(d.appTxns[a], uint32(pos))
	}
	for a := range d.appTxns {
		d.appTxns[a] = exact(d.appTxns[a])
	}
	for _, p := range g.periods {
		pos, ok := slices.BinarySearchFunc(d.txns, p.key, txnCmp)
		if !ok {
			panic(fmt.Sprintf("partnerfake: period sale of customer %d not found", p.cust))
		}
		d.Truth.Customers[p.cust].Subscriptions[p.sub].Periods[p.period].TransactionID =
			"gid://partners/AppSubscriptionSale/" + strconv.FormatUint(d.transactionNumber(pos), 10)
	}
	g.periods = nil
	g.revenueShare()
	for pos := range d.txns {
		t := &d.txns[pos]
		shopify, processing, _ := t.fees()
		c := &d.Truth.Customers[t.cust]
		cur, typ := d.Currencies[t.cur], txTypes[t.kind]
		i := slices.IndexFunc(c.Totals, func(x Total) bool { return x.Currency == cur && x.Type == typ })
		if i < 0 {
			c.Totals = append(c.Totals, Total{Currency: cur, Type: typ})
			i = len(c.Totals) - 1
		}
		tot := &c.Totals[i]
		tot.Count++
		tot.Gross += int64(t.gross)
		tot.ShopifyFee += shopify
		tot.ProcessingFee += processing
		tot.Net += int64(t.gross) - shopify - processing
	}
}

// revenueShare finds when the organisation's lifetime gross of sales (USD-equivalent, at fixed
// rates the API never exposes) passes the threshold, and marks every sale from then on, and every
// refund of such a sale, as carrying the 15% revenue share.
func (g *generator) revenueShare() {
	d := g.d
	threshold := g.cfg.RevenueShareThresholdUSD
	if threshold == 0 {
		threshold = 1_000_000
	}
	limit := threshold * 1000 // milli-USD
	var sum int64
	from := int64(-1)
	for i := range d.txns {
		t := &d.txns[i]
		if t.kind != txSubscription && t.kind != txUsage && t.kind != txOneTime {
			continue
		}
		if sum >= limit {
			from = int64(t.at)
			break
		}
		info := currencyFor(d.Currencies[t.cur])
		sum += int64(t.gross) * info.usdMilli / int64(math.Pow10(info.exp))
	}
	if from < 0 {
		return
	}
	d.Truth.RevenueShareFrom = d.time(uint32(from))
	for i := range d.txns {
		t := &d.txns[i]
		ref := int64(t.at)
		if t.kind == txAdjustment {
			ref = int64(t.aux)
		}
		if ref >= from {
			t.flags |= flagShare
		}
	}
}

func makeApps(cfg *GenConfig) []App {
	names := cfg.AppNames
	if len(names) == 0 {
		names = defaultAppNames
	}
	r := rand.New(rand.NewPCG(cfg.Seed, 0xA99))
	apps := make([]App, cfg.Apps)
	for i := range apps {
		key := make([]byte, 16)
		for j := range key {
			key[j] = byte(r.Uint32())
		}
		name := names[i%len(names)]
		if i >= len(names) {
			name += " " + strconv.Itoa(i/len(names)+1)
		}
		apps[i] = App{Index: i, ID: "gid://partners/App/" + strconv.Itoa(firstAppNumber+i), Name: name, APIKey: hex.EncodeToString(key)}
	}
	return apps
}
