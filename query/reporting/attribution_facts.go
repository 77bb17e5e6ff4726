package reporting

import (
	"context"
	"fmt"
	"runtime"
	"sync"
)

// revenueRow is one customer's transactions in one currency (selectCustomerRevenue): its net
// revenue over the range and its usage MRR on asOf, each with how many transactions are behind it.
type revenueRow struct {
	customer   customerHash
	currency   string
	inRange    uint64 // transactions in the range
	net        int64
	usageSales uint64 // usage sales in the window read
	usageMRR   int64  // gross of its usage sales in the 30 days ending on asOf
}

// readRevenue reads each customer's net revenue over r and usage MRR on r.To (selectCustomerRevenue).
func (s *Store) readRevenue(ctx context.Context, sc Scope, r Range) ([]revenueRow, error) {
	from, trailing := r.From.Start(), r.To.AddDays(-29).Start()
	rows, err := s.conn.Query(ctx, selectCustomerRevenue, epochDay(from), epochDay(from), epochDay(trailing), sc.WorkspaceID, sc.apps(),
		epochDay(earlierOf(from, trailing)), epochDay(r.To.End()))
	if err != nil {
		return nil, fmt.Errorf("read net revenue: %w", err)
	}
	defer rows.Close()
	var out []revenueRow
	for rows.Next() {
		var n revenueRow
		if err := rows.Scan(&n.customer, &n.currency, &n.inRange, &n.net, &n.usageSales, &n.usageMRR); err != nil {
			return nil, fmt.Errorf("read net revenue: %w", err)
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// addCustomers evaluates every in-scope customer on asOf as the summary does (summary.go,
// currencySums.add: the qualifying subscription's amrCents and currency, the usage of the trailing
// 30 days per currency) and adds it, with its net revenue, to the row of its first touch. Every
// customer the summary counts is in exactly one row, so the rows add up to the summary's figures.
// The usage comes with the net revenue (revenue): a customer with a usage sale in the window the
// summary reads counts in its row whether or not it has MRR on asOf, as in the summary's facts.
func (t *attributionTable) addCustomers(f *summaryFacts, ex *exclusions, asOf Date, track *trackingFacts, apps []string,
	revenue []revenueRow) {
	customers := track.customers
	index := make(map[customerHash]int32, len(customers))
	for i := range customers {
		index[customers[i].key] = int32(i)
	}
	rows := make([]*AttributionRow, len(customers)) // each customer's row, decided once
	orphans := map[customerHash]bool{}              // customers without a customer row, counted once
	rowAt := func(i int32) *AttributionRow {
		if rows[i] == nil {
			rows[i] = t.customerRow(&customers[i], track, apps)
			rows[i].Customers++
		}
		return rows[i]
	}
	row := func(k customerHash) *AttributionRow {
		i, ok := index[k]
		if !ok {
			r := t.special[RowUnattributed]
			if !orphans[k] {
				orphans[k] = true
				r.Customers++
			}
			return r
		}
		return rowAt(i)
	}
	for i := range customers {
		if ex.admits(ScopeIncluded, customers[i].key) {
			rowAt(int32(i)) // the customer rows are one per customer (reporting_customers FINAL)
		}
	}
	joined := f.join()
	paying := evaluateAll(f, joined, ex, asOf)
	for i := range joined {
		c := &joined[i]
		if !ex.admits(ScopeIncluded, c.key) {
			continue
		}
		r := row(c.key)
		if ev := paying[i]; ev.currency != "" {
			r.PayingCustomers++
			m := r.money(ev.currency)
			m.PayingCustomers++
			m.SubscriptionMRRCents += ev.amr
			m.MRRCents += ev.amr
		}
	}
	for _, n := range revenue {
		if (n.inRange == 0 && n.usageSales == 0) || !ex.admits(ScopeIncluded, n.customer) {
			continue // only transactions before the range that are not usage sales: nothing of this customer
		}
		r := row(n.customer)
		if n.inRange > 0 {
			r.money(n.currency).NetRevenueCents += n.net
		}
		if n.usageMRR != 0 { // else a usage sale in the range only: no usage MRR on asOf
			m := r.money(n.currency)
			m.UsageMRRCents += n.usageMRR
			m.MRRCents += n.usageMRR
		}
	}
}

// payingOn is a customer's qualifying subscription on a date: its currency and amrCents (currency
// "" when the customer is not paying).
type payingOn struct {
	currency string
	amr      int64
}

// evaluateAll evaluates the in-scope customers with charges on d (METRICS 2.4), in parallel parts
// as computeBlocks does: by then ClickHouse has answered, and the cores are free for this.
func evaluateAll(f *summaryFacts, customers []summaryCustomer, ex *exclusions, d Date) []payingOn {
	out := make([]payingOn, len(customers))
	parts := min(runtime.GOMAXPROCS(0), 1+len(customers)/minCustomersPerPart)
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := len(customers)*p/parts, len(customers)*(p+1)/parts
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf billingBuffers
			for i := lo; i < hi; i++ {
				c := &customers[i]
				if c.charges == 0 || !ex.admits(ScopeIncluded, c.key) {
					continue
				}
				onA, _ := f.billing(c, &buf)
				ev := evaluate(d, onA, false, buf.scratchA)
				buf.scratchA = ev.NonTest
				if ev.Paying {
					out[i] = payingOn{currency: ev.Currency, amr: ev.AMRCents}
				}
			}
		}()
	}
	wg.Wait()
	return out
}
