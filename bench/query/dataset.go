package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/revtrack/revtrack/bench/internal/benchkit"
	"github.com/revtrack/revtrack/devtools/partnerfake"
	"github.com/revtrack/revtrack/schemas"
)

// dataset is the generated data set and what the benchmark derives from it: the apps as revtrack
// knows them, the counts the load must reach, and the customers the detail targets ask for.
type dataset struct {
	d      *partnerfake.Dataset
	scale  float64
	took   time.Duration // generation time
	apps   []benchApp
	facts  facts
	sample []sampled // customers for the detail targets, by public ID
	byDom  []sampled // customers for the detail-by-domain target (domains of one app only)
}

// benchApp is one of the fake's apps registered in revtrack: ID is revtrack's app ID, PlatformID
// the partner API's (gid://partners/App/…).
type benchApp struct {
	ID, PlatformID, Name string
}

// facts are the data set's counts; the marker (landed.go) stores them, the load waits for them.
type facts struct {
	Shops     int `json:"shops"`
	Customers int `json:"customers"`
	// CustomerKeys are the distinct (app, shop) pairs: what platform_customers can hold. The
	// generator may give a pair twice (two Truth customers of one app and shop).
	CustomerKeys int `json:"customerKeys"`
	Transactions int `json:"transactions"`
	// AppTransactions are the transactions per app, in the order of the data set's apps.
	AppTransactions []int `json:"appTransactions"`
	Events          int   `json:"events"`
	// EventKeys are the distinct (app, event key) pairs: what platform_lifecycle_events keeps.
	EventKeys  int      `json:"eventKeys"`
	Currencies []string `json:"currencies"`
	Start      string   `json:"start"`
	End        string   `json:"end"`
	Seed       uint64   `json:"seed"`
}

// sampled is one customer a detail target asks for.
type sampled struct {
	ID, Domain, App string
}

// benchConfig is partnerfake.BenchConfig with the shop count multiplied by scale (at least one
// shop), so that a smaller run keeps the same proportions.
func benchConfig(end time.Time, scale float64) partnerfake.GenConfig {
	c := partnerfake.BenchConfig(end)
	c.Shops = max(1, int(math.Round(float64(c.Shops)*scale)))
	return c
}

// generate builds the data set ending at end (a UTC midnight) and picks samples customers for the
// detail targets with a fixed seed.
func generate(end time.Time, scale float64, samples int) *dataset {
	cfg := benchConfig(end, scale)
	start := time.Now()
	d := partnerfake.Generate(cfg)
	ds := &dataset{d: d, scale: scale, took: time.Since(start)}
	for _, a := range d.Apps {
		ds.apps = append(ds.apps, benchApp{ID: appID(a), PlatformID: a.ID, Name: a.Name})
	}
	ds.facts = facts{Shops: cfg.Shops, Customers: d.NumCustomers(), Transactions: d.NumTransactions(), Events: d.NumEvents(),
		EventKeys: eventKeys(d), Currencies: d.Currencies, Start: cfg.Start.Format(time.DateOnly), End: cfg.End.Format(time.DateOnly),
		Seed: cfg.Seed}
	ds.facts.AppTransactions = make([]int, len(d.Apps))
	pairs := map[[2]string]bool{}
	for _, c := range d.Truth.Customers {
		pairs[[2]string{c.AppID, c.ShopID}] = true
		for _, t := range c.Totals {
			ds.facts.AppTransactions[c.AppIndex] += t.Count
		}
	}
	ds.facts.CustomerKeys = len(pairs)
	ds.sample, ds.byDom = pick(d, samples)
	runtime.GC() // the generator's garbage is several GB at full scale
	return ds
}

// appID is the revtrack app ID the benchmark registers for one of the fake's apps.
func appID(a partnerfake.App) string { return "bench-app-" + strconv.Itoa(a.Index+1) }

// eventKeys counts the distinct (app, type, second, shop, charge) tuples: the sync keys a lifecycle
// event by type, time in seconds, shop and charge (platformsync.convertEvent), and the table
// de-duplicates per app, so two events equal in all of these would land as one row. Events come in
// time order, so a map per second suffices.
func eventKeys(d *partnerfake.Dataset) int {
	type key struct{ typ, shop, charge string }
	n := 0
	for app := range d.Apps {
		var sec int64 = -1
		seen := map[key]bool{}
		for e := range d.Events(app) {
			if s := e.OccurredAt.Unix(); s != sec {
				sec = s
				clear(seen)
			}
			k := key{typ: e.Type, shop: e.ShopID}
			if e.Charge != nil {
				k.charge = e.Charge.ID
			}
			if !seen[k] {
				seen[k] = true
				n++
			}
		}
	}
	return n
}

// pick draws n customers (fixed seed, without replacement) for the detail-by-ID target, and n for
// the detail-by-domain target among the domains that belong to one app only (a shared domain
// answers 409 by design).
func pick(d *partnerfake.Dataset, n int) (byID, byDomain []sampled) {
	cs := d.Truth.Customers
	if n <= 0 || len(cs) == 0 {
		return nil, nil
	}
	rng := rand.New(rand.NewPCG(20261121, 1))
	shared := map[string]bool{}
	for _, dom := range d.Truth.SharedDomains() {
		shared[dom] = true
	}
	apps := map[string]string{}
	for _, a := range d.Apps {
		apps[a.ID] = appID(a)
	}
	order := rng.Perm(len(cs))
	for _, i := range order {
		c := cs[i]
		s := sampled{ID: schemas.CustomerPublicID(apps[c.AppID], c.ShopID), Domain: c.ShopDomain, App: apps[c.AppID]}
		if len(byID) < n {
			byID = append(byID, s)
		}
		if len(byDomain) < n && !shared[c.ShopDomain] {
			byDomain = append(byDomain, s)
		}
		if len(byID) == n && len(byDomain) == n {
			break
		}
	}
	return byID, byDomain
}

// describe is one line about the data set for the report.
func (f facts) describe(scale float64, took time.Duration) string {
	return fmt.Sprintf("partnerfake.BenchConfig × %s: %s shops, %s customers (app, shop), %s transactions, %s events, "+
		"currencies %s, %s to %s (seed %d); generated in %s",
		strconv.FormatFloat(scale, 'f', -1, 64), benchkit.Num(float64(f.Shops)), benchkit.Num(float64(f.Customers)), benchkit.Num(float64(f.Transactions)),
		benchkit.Num(float64(f.Events)), strings.Join(f.Currencies, ", "), f.Start, f.End, f.Seed, seconds(took))
}

// sameData reports whether two fact sets describe the same generated data. The counts derived from
// the data (event keys, customer keys, transactions per app) follow from these.
func (f facts) sameData(g facts) bool {
	return f.Shops == g.Shops && f.Customers == g.Customers && f.Transactions == g.Transactions && f.Events == g.Events &&
		f.Start == g.Start && f.End == g.End && f.Seed == g.Seed && slices.Equal(f.Currencies, g.Currencies)
}
