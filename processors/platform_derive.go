package processors

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"golang.org/x/sync/errgroup"

	"github.com/revtrack/revtrack/schemas"
)

// deriveChunk keys per lookup keep the bound ID set (about 45 bytes per shop or charge GID) well
// below ClickHouse's max_query_size of 256 KiB. A lookup in a source table scans the app's rows
// once, so the chunk is as large as that allows: a batch of the default 5,000 records needs at most
// two.
const deriveChunk = 3000

// PlatformDeriver fills platform_customers and platform_charges, which the partner API offers no
// query for, from what the landing consumer has just inserted:
//
//   - for every customer named by a lifecycle event of the batch, it reads ALL of that customer's
//     events (and the billing intervals of its subscription transactions) back from ClickHouse,
//     folds them (platform_derive_fold.go) and inserts the customer row and its charge rows with a
//     new version;
//   - for subscription transactions of other customers, it re-reads only the charges they name and
//     writes a new version of those whose billing interval changed.
//
// Both read the tables rather than the batch, so the result depends only on what ClickHouse holds:
// a redelivered batch, a re-synced window or pages that land out of order converge to the same rows.
// A customer's events and transactions share a Kafka key (workspace:app:customer), hence a
// partition and one consumer at a time, so two derivations of one customer never race.
// Versions are wall-clock microseconds, strictly increasing per process, so the later derivation,
// which has seen at least as many events, wins.
//
// The reads go to the copies of the two tables ordered by customer (migration 0012), where each
// customer is a key range, once those are recorded complete (copySources), and to the tables
// themselves until then. From the copy, a customer's usage records are summed up by ClickHouse to
// the few the fold can use (platform_derive_usage.go).
type PlatformDeriver struct {
	conn      PlatformConn
	customers *TableSink[customerRow]
	charges   *TableSink[chargeRow]
	now       func() time.Time
	sources   copySources

	mu      sync.Mutex
	lastVer uint64
}

// NewPlatformDeriver returns the derivation on a ClickHouse connection.
func NewPlatformDeriver(conn PlatformConn) *PlatformDeriver {
	return &PlatformDeriver{conn: conn, now: time.Now,
		customers: &TableSink[customerRow]{Conn: conn, Insert: insertPlatformCustomers, Row: customerRowValues},
		charges:   &TableSink[chargeRow]{Conn: conn, Insert: insertPlatformCharges, Row: chargeRowValues},
	}
}

// rowKey names a customer or a charge of one app of one workspace.
type rowKey struct{ WorkspaceID, AppID, ID string }

func compareKeys(a, b rowKey) int {
	return cmp.Or(cmp.Compare(a.WorkspaceID, b.WorkspaceID), cmp.Compare(a.AppID, b.AppID), cmp.Compare(a.ID, b.ID))
}

// Derive recomputes what the landed records touched: per chunk of deriveChunk customers two reads
// (their events, their charges' billing intervals; three from the copies, where the usage records
// are read apart), per chunk of re-billed charges two more (the
// charges, their intervals), all in parallel, then one insert per derived table, both in parallel.
// Every failure is returned as transient: the rows are derived from data ClickHouse already
// accepted, so a refusal here says nothing about the batch's records, and dead-lettering them would
// lose events that are in fact stored.
func (d *PlatformDeriver) Derive(ctx context.Context, txns, events []schemas.PlatformRecord) error {
	customers := map[rowKey]bool{}
	for _, r := range events {
		if id := r.LifecycleEvent.CustomerID; id != "" {
			customers[rowKey{r.WorkspaceID, r.AppID, id}] = true
		}
	}
	charges := map[rowKey]bool{}
	chargeCustomers := map[rowKey]string{}
	for _, r := range txns {
		t := r.Transaction
		if t.Type == kindSubscription && t.ChargeID != "" && !customers[rowKey{r.WorkspaceID, r.AppID, t.CustomerID}] {
			charges[rowKey{r.WorkspaceID, r.AppID, t.ChargeID}] = true
			chargeCustomers[rowKey{r.WorkspaceID, r.AppID, t.ChargeID}] = t.CustomerID
		}
	}
	src := d.sources.read(ctx, d.conn, d.now())
	ver := d.version()
	custChunks, chargeChunks := chunks(customers), chunks(charges)
	custRows := make([][]customerRow, len(custChunks))
	chargeRows := make([][]chargeRow, len(custChunks)+len(chargeChunks))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(maxDeriveLookups / 2) // each step runs two reads (three from the copies)
	for i, keys := range custChunks {
		g.Go(func() (err error) {
			custRows[i], chargeRows[i], err = d.deriveCustomers(gctx, src, keys, ver)
			return err
		})
	}
	for i, keys := range chargeChunks {
		g.Go(func() (err error) {
			chargeRows[len(custChunks)+i], err = d.refreshIntervals(gctx, src, keys, chargeCustomers, ver)
			return err
		})
	}
	err := g.Wait()
	if err == nil {
		w, wctx := errgroup.WithContext(ctx)
		w.Go(func() error { return writeIfAny(wctx, d.charges, slices.Concat(chargeRows...)) })
		w.Go(func() error { return writeIfAny(wctx, d.customers, slices.Concat(custRows...)) })
		w.Go(func() error { return d.deriveDays(wctx, txns, events, ver) })
		err = w.Wait()
	}
	if err == nil {
		err = d.deriveChargeFacts(ctx, txns, events, ver)
	}
	if rej := (*RejectedError)(nil); errors.As(err, &rej) {
		err = fmt.Errorf("derive customers and charges: %v", rej.Err)
	}
	return err
}

// maxDeriveLookups bounds the reads one batch runs at a time.
const maxDeriveLookups = 4

// chunks returns the keys, sorted, in chunks of deriveChunk.
func chunks(m map[rowKey]bool) [][]rowKey {
	keys := slices.SortedFunc(maps.Keys(m), compareKeys)
	var out [][]rowKey
	for start := 0; start < len(keys); start += deriveChunk {
		out = append(out, keys[start:min(start+deriveChunk, len(keys))])
	}
	return out
}

// deriveCustomers folds the given customers.
func (d *PlatformDeriver) deriveCustomers(ctx context.Context, src readSources, keys []rowKey, ver uint64) ([]customerRow, []chargeRow, error) {
	var events map[rowKey][]storedEvent
	var intervals map[rowKey]string
	intervalsQ := selectCustomerIntervals
	if src.sales {
		intervalsQ = selectCustomerIntervalsByCustomer
	}
	args, _ := keyArgs(keys)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		if src.events {
			events, err = d.readEventsByCustomer(gctx, keys)
		} else {
			events, err = d.readEvents(gctx, selectDeriveEvents, keys)
		}
		return err
	})
	g.Go(func() (err error) { intervals, err = d.readIntervals(gctx, intervalsQ, args); return err })
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	byApp := map[rowKey]map[string]string{} // app (ID empty) -> charge ID -> interval
	for k, iv := range intervals {
		app := rowKey{k.WorkspaceID, k.AppID, ""}
		if byApp[app] == nil {
			byApp[app] = map[string]string{}
		}
		byApp[app][k.ID] = iv
	}
	var custs []customerRow
	var charges []chargeRow
	for _, k := range keys {
		c, chs, ok := foldCustomer(k.WorkspaceID, k.AppID, k.ID, events[k], byApp[rowKey{k.WorkspaceID, k.AppID, ""}])
		if !ok {
			continue // the batch's event is not readable yet: impossible after a successful insert
		}
		c.Version = ver
		custs = append(custs, c)
		attachStates(chs, events[k])
		for _, ch := range chs {
			ch.Version = ver
			charges = append(charges, ch)
		}
	}
	return custs, charges, nil
}

// refreshIntervals returns a new version of the given charges whose billing interval differs from
// their latest subscription transaction's. Charges without a row yet get theirs when their events
// land (the fold reads the transactions too). The copy of the subscription transactions is ordered
// by customer, so there the intervals are looked up by the customers the batch's transactions name
// (customerOf): all their charges' (a customer has a few), of which the given ones are used. A set
// of customers and one of charges together would not fit ClickHouse's max_query_size.
func (d *PlatformDeriver) refreshIntervals(ctx context.Context, src readSources, keys []rowKey, customerOf map[rowKey]string,
	ver uint64) ([]chargeRow, error) {
	var current []chargeRow
	var intervals map[rowKey]string
	args, _ := keyArgs(keys)
	q := selectChargeIntervals
	if src.sales {
		customers := map[string]bool{}
		for _, k := range keys {
			customers[customerOf[k]] = true
		}
		q, args = selectCustomerIntervalsByCustomer, []any{args[0], args[1], valueSet(customers)}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { current, err = d.readCharges(gctx, keys); return err })
	g.Go(func() (err error) { intervals, err = d.readIntervals(gctx, q, args); return err })
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var changed []chargeRow
	for _, c := range current {
		iv, ok := intervals[rowKey{c.WorkspaceID, c.AppID, c.ChargeID}]
		if ok && c.Kind == kindSubscription && iv != c.BillingInterval {
			c.BillingInterval, c.Version = iv, ver
			changed = append(changed, c)
		}
	}
	return changed, nil
}

// keyArgs binds keys for the lookups' `workspace_id IN (?) AND app_id IN (?) AND <id> IN (?)` (see
// platform_derive_sql.go), and returns the exact set to filter the rows by.
func keyArgs(keys []rowKey) ([]any, map[rowKey]bool) {
	wss, apps, ids := map[string]bool{}, map[string]bool{}, map[string]bool{}
	exact := make(map[rowKey]bool, len(keys))
	for _, k := range keys {
		wss[k.WorkspaceID], apps[k.AppID], ids[k.ID], exact[k] = true, true, true, true
	}
	return []any{valueSet(wss), valueSet(apps), valueSet(ids)}, exact
}

func valueSet(m map[string]bool) []clickhouse.GroupSet {
	set := make([]clickhouse.GroupSet, 0, len(m))
	for _, v := range slices.Sorted(maps.Keys(m)) {
		set = append(set, clickhouse.GroupSet{Value: []any{v}})
	}
	return set
}

func (d *PlatformDeriver) readEvents(ctx context.Context, q string, keys []rowKey) (map[rowKey][]storedEvent, error) {
	args, asked := keyArgs(keys)
	rows, err := d.conn.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read lifecycle events to derive: %w", err)
	}
	defer rows.Close()
	out := map[rowKey][]storedEvent{}
	for rows.Next() {
		var e storedEvent
		var ws, app string
		var test uint8
		if err := rows.Scan(&ws, &app, &e.CustomerID, &e.EventKey, &e.Type, &e.OccurredAt, &e.ChargeID, &e.ChargeType, &e.ChargeName,
			&e.AmountCents, &e.Currency, &test, &e.BillingOn, &e.ShopDomain, &e.ShopName, &e.SyncedAt); err != nil {
			return nil, fmt.Errorf("read lifecycle events to derive: %w", err)
		}
		e.Test = test == 1
		if k := (rowKey{ws, app, e.CustomerID}); asked[k] {
			out[k] = append(out[k], e)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read lifecycle events to derive: %w", err)
	}
	return out, nil
}

// readIntervals returns the billing interval per charge. It may return charges it was not asked
// for (see keyArgs); callers look their own charges up.
func (d *PlatformDeriver) readIntervals(ctx context.Context, q string, args []any) (map[rowKey]string, error) {
	rows, err := d.conn.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read billing intervals: %w", err)
	}
	defer rows.Close()
	out := map[rowKey]string{}
	for rows.Next() {
		var k rowKey
		var iv string
		if err := rows.Scan(&k.WorkspaceID, &k.AppID, &k.ID, &iv); err != nil {
			return nil, fmt.Errorf("read billing intervals: %w", err)
		}
		out[k] = iv
	}
	return out, rows.Err()
}

func (d *PlatformDeriver) readCharges(ctx context.Context, keys []rowKey) ([]chargeRow, error) {
	args, asked := keyArgs(keys)
	rows, err := d.conn.Query(ctx, selectLatestCharges, args...)
	if err != nil {
		return nil, fmt.Errorf("read charges: %w", err)
	}
	defer rows.Close()
	var out []chargeRow
	for rows.Next() {
		var c chargeRow
		var test, derived uint8
		if err := rows.Scan(&c.WorkspaceID, &c.AppID, &c.ChargeID, &c.CustomerID, &c.Kind, &c.Name, &c.AmountCents, &c.Currency,
			&c.BillingInterval, &c.Status, &test, &c.TrialDays, &c.CappedAmountCents, &c.AcceptedAt, &c.ActivatedAt, &c.EndedAt,
			&c.BillingOn, &c.EndReason, &c.StateEvents, &c.CustomerUninstalls, &derived); err != nil {
			return nil, fmt.Errorf("read charges: %w", err)
		}
		c.Test, c.StatesDerived = test == 1, derived == 1
		if asked[rowKey{c.WorkspaceID, c.AppID, c.ChargeID}] {
			out = append(out, c)
		}
	}
	return out, rows.Err()
}

// version returns wall-clock microseconds, strictly increasing within the process.
func (d *PlatformDeriver) version() uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	v := max(uint64(d.now().UnixMicro()), d.lastVer+1)
	d.lastVer = v
	return v
}

func chargeRowValues(c chargeRow) []any {
	return []any{c.WorkspaceID, c.AppID, c.ChargeID, c.CustomerID, c.Kind, c.Name, c.AmountCents, c.Currency,
		c.BillingInterval, c.Status, boolByte(c.Test), c.TrialDays, c.CappedAmountCents, c.AcceptedAt, c.ActivatedAt,
		c.EndedAt, c.BillingOn, c.EndReason, nonNil(c.StateEvents), nonNil(c.CustomerUninstalls), boolByte(c.StatesDerived), c.Version}
}

// nonNil gives the driver an empty array rather than a nil slice.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func customerRowValues(c customerRow) []any {
	return []any{c.WorkspaceID, c.AppID, c.CustomerID, c.PublicID, c.ShopID, c.ShopDomain, c.ShopName, c.Status,
		"", "", []string{}, "", uint8(0), c.FirstInstalledAt, c.LastEventAt, c.Version}
}
