// Package reportingtest writes synced platform rows straight into a migrated ClickHouse database,
// so that reporting tests can state a dataset row by row (the worked examples of docs/METRICS.md)
// without running the sync. Rows are buffered and written with one PrepareBatch per table.
package reportingtest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/revtrack/revtrack/schemas"
)

// Inserts, columns in the order of the row functions below.
const (
	insertCustomers = `INSERT INTO platform_customers (workspace_id, app_id, customer_id, shop_id, shop_domain, shop_name, status,
country, plan, tags, store_classification, report_excluded, first_installed_at, last_event_at, version, public_id)`
	insertCharges = `INSERT INTO platform_charges (workspace_id, app_id, charge_id, customer_id, kind, name, amount_cents, currency,
billing_interval, status, test, trial_days, capped_amount_cents, accepted_at, activated_at, ended_at, billing_on, version,
state_events, customer_uninstalls, states_derived)`
	insertEvents = `INSERT INTO platform_lifecycle_events (workspace_id, app_id, event_key, type, customer_id, shop_domain, occurred_at,
charge_id, charge_name, amount_cents, currency, reason, description, synced_at)`
	insertTransactions = `INSERT INTO platform_transactions (workspace_id, app_id, transaction_id, type, customer_id, shop_domain,
charge_id, created_at, currency, gross_cents, platform_fee_cents, processing_fee_cents, net_cents, billing_interval, synced_at)`
	insertUsageCharges = `INSERT INTO platform_usage_charges (workspace_id, app_id, usage_record_id, customer_id, charge_id, description,
amount_cents, currency, occurred_at, synced_at, test)`
	insertUsageEvents = `INSERT INTO usage_events (workspace_id, app_id, event_id, customer_id, name, quantity, occurred_at, received_at)`
	insertRuns        = `INSERT INTO sync_runs (run_id, workspace_id, app_id, trigger, status, started_at, finished_at, events_count,
transactions_count, coverage_from, coverage_through, truncated, error, version)`
	insertCursors    = `INSERT INTO sync_cursors (workspace_id, app_id, stream, cursor, window_end, version)`
	insertExclusions = `INSERT INTO customer_exclusions (workspace_id, shop_domain, app_id, excluded, reason, updated_at, version)`
)

// Fixture buffers rows of one workspace.
type Fixture struct {
	Conn        driver.Conn
	WorkspaceID string
	// RawCharges writes charge rows without the state events the derivation stores on them
	// (states_derived = 0), as rows written before migration 0011 or by other means; the reporting
	// API then reads the states from the events.
	RawCharges bool
	version    uint64
	rows       map[string][][]any
	order      []string
	states     chargeStates
}

// New returns a fixture writing to conn for workspace ws.
func New(conn driver.Conn, ws string) *Fixture {
	return &Fixture{Conn: conn, WorkspaceID: ws, rows: map[string][][]any{}, states: newChargeStates()}
}

func (f *Fixture) add(insert string, row ...any) {
	if _, ok := f.rows[insert]; !ok {
		f.order = append(f.order, insert)
	}
	f.rows[insert] = append(f.rows[insert], row)
}

// next is a strictly increasing version (a later write replaces an earlier one).
func (f *Fixture) next() uint64 { f.version++; return f.version }

// At parses an RFC 3339 instant or a date (midnight UTC).
func At(s string) time.Time {
	for _, layout := range []string{time.RFC3339, time.DateOnly} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC()
		}
	}
	panic(fmt.Sprintf("reportingtest: bad time %q", s))
}

func nullable(s string) *time.Time {
	if s == "" {
		return nil
	}
	t := At(s)
	return &t
}

// Customer is a platform_customers row.
type Customer struct {
	App, Shop, Domain, Name, Status string
	Installed, LastEvent            string // instants; "" = null
}

// ID is the customer's public ID.
func (c Customer) ID() string { return schemas.CustomerPublicID(c.App, c.Shop) }

// AddCustomer writes a customer row (a new version each call).
func (f *Fixture) AddCustomer(c Customer) {
	status := c.Status
	if status == "" {
		status = "installed"
	}
	f.add(insertCustomers, f.WorkspaceID, c.App, c.Shop, c.Shop, c.Domain, c.Name, status, "", "", []string{}, "", uint8(0),
		nullable(c.Installed), nullable(c.LastEvent), f.next(), c.ID())
}

// Charge is a platform_charges row.
type Charge struct {
	App, ID, Shop, Kind, Name string
	Amount                    int64
	Currency, Interval        string
	Status                    string
	Test                      bool
	TrialDays                 uint16
	Accepted, Activated       string
	Ended                     string
	// BillingOn is the billing date the charge's latest event reported ("" = none).
	BillingOn string
}

// AddCharge writes a charge row (a new version each call).
func (f *Fixture) AddCharge(c Charge) {
	kind := c.Kind
	if kind == "" {
		kind = "subscription"
	}
	test := uint8(0)
	if c.Test {
		test = 1
	}
	f.add(insertCharges, f.WorkspaceID, c.App, c.ID, c.Shop, kind, c.Name, c.Amount, c.Currency, c.Interval, c.Status, test, c.TrialDays,
		nil, nullable(c.Accepted), nullable(c.Activated), nullable(c.Ended), nullable(c.BillingOn), f.next(), []uint64{}, []time.Time{}, uint8(0))
}

// Event is a platform_lifecycle_events row.
type Event struct {
	App, Type, Shop, At, Charge, ChargeName string
	Amount                                  *int64
	Currency, Reason, Description           string
}

// AddEvent writes a lifecycle event; its key is derived from its content, as the sync does, so
// writing it twice writes a duplicate.
func (f *Fixture) AddEvent(e Event) {
	key := fmt.Sprintf("%s|%s|%s|%s", e.Type, e.At, e.Shop, e.Charge)
	f.states.event(e)
	f.add(insertEvents, f.WorkspaceID, e.App, key, e.Type, e.Shop, "", At(e.At), e.Charge, e.ChargeName, e.Amount, e.Currency,
		e.Reason, e.Description, time.Unix(int64(f.next()), 0).UTC())
}

// Tx is a platform_transactions row.
type Tx struct {
	App, ID, Type, Shop, Charge, At, Currency string
	Gross, Fee, Processing, Net               int64
	Interval                                  string
}

// AddTx writes a transaction (a new version each call).
func (f *Fixture) AddTx(t Tx) {
	proc := t.Processing
	f.add(insertTransactions, f.WorkspaceID, t.App, t.ID, t.Type, t.Shop, "", t.Charge, At(t.At), t.Currency, t.Gross, t.Fee, &proc,
		t.Net, t.Interval, time.Unix(int64(f.next()), 0).UTC())
}

// UsageCharge is a platform_usage_charges row.
type UsageCharge struct {
	App, ID, Shop, Charge string
	Amount                int64
	Currency, At          string
	Test                  bool
}

// AddUsageCharge writes an observed usage charge (a new version each call).
func (f *Fixture) AddUsageCharge(u UsageCharge) {
	test := uint8(0)
	if u.Test {
		test = 1
	}
	f.add(insertUsageCharges, f.WorkspaceID, u.App, u.ID, u.Shop, u.Charge, "usage", u.Amount, u.Currency, At(u.At),
		time.Unix(int64(f.next()), 0).UTC(), test)
}

// UsageEvent is a usage_events row.
type UsageEvent struct {
	App, ID, Shop, Name string
	Quantity            int64
	At                  string
}

// AddUsageEvent writes a received usage event (a new version each call).
func (f *Fixture) AddUsageEvent(u UsageEvent) {
	f.add(insertUsageEvents, f.WorkspaceID, u.App, u.ID, u.Shop, u.Name, u.Quantity, At(u.At), At(u.At).Add(time.Duration(f.next())*time.Second))
}

// AddRun writes a sync run.
func (f *Fixture) AddRun(app, id, status, started, finished string) {
	f.add(insertRuns, id, f.WorkspaceID, app, "schedule", status, At(started), nullable(finished), uint64(0), uint64(0), nil, nil,
		uint8(0), "", f.next())
}

// AddCursor writes a stream cursor.
func (f *Fixture) AddCursor(app, stream, cursor, windowEnd string) {
	f.add(insertCursors, f.WorkspaceID, app, stream, cursor, At(windowEnd), f.next())
}

// Covered writes cursors that cover every date from first through the instant through for both
// streams, and one succeeded run that finished at through.
func (f *Fixture) Covered(app, first, through string) {
	for _, s := range []string{"transactions", "lifecycle_events"} {
		f.AddCursor(app, s, "c", through)
		f.AddCursor(app, s+":start", "origin", first)
	}
	f.AddRun(app, app+"-run", "succeeded", At(through).Add(-10*time.Minute).Format(time.RFC3339), through)
}

// Exclude writes a customer_exclusions row (app "" = every app).
func (f *Fixture) Exclude(domain, app string, excluded bool) {
	x := uint8(0)
	if excluded {
		x = 1
	}
	f.add(insertExclusions, f.WorkspaceID, domain, app, x, "test", time.Unix(int64(f.next()), 0).UTC(), f.next())
}

// Flush writes the buffered rows, one batch per table, in the order tables were first used.
func (f *Fixture) Flush(t testing.TB) {
	t.Helper()
	if err := f.FlushContext(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// FlushContext is Flush returning the error.
func (f *Fixture) FlushContext(ctx context.Context) error {
	if !f.RawCharges {
		f.rows[insertCharges] = f.states.derive(f.rows[insertCharges], f.next)
		if len(f.rows[insertCharges]) > 0 && !slices.Contains(f.order, insertCharges) {
			f.order = append(f.order, insertCharges)
		}
	}
	// The customer days and observed usage days are written by the landing consumer, not a view
	// (migrations 0024, 0026): recompute them as it would after transactions and usage records land.
	days := slices.Contains(f.order, insertTransactions)
	observed := slices.Contains(f.order, insertUsageCharges)
	// The charge facts (migration 0027) follow the charges (AllCustomerDays recomputes them too).
	facts := !days && slices.Contains(f.order, insertCharges)
	for _, insert := range slices.Clone(f.order) {
		b, err := f.Conn.PrepareBatch(ctx, insert)
		if err != nil {
			return fmt.Errorf("prepare %s: %w", insert[:40], err)
		}
		for _, r := range f.rows[insert] {
			if err := b.Append(r...); err != nil {
				return fmt.Errorf("append %s: %w", insert[:40], err)
			}
		}
		if err := b.Send(); err != nil {
			return fmt.Errorf("send %s: %w", insert[:40], err)
		}
	}
	f.rows, f.order = map[string][][]any{}, nil
	if days {
		if err := schemas.AllCustomerDays(ctx, f.Conn, f.next(), f.WorkspaceID); err != nil {
			return fmt.Errorf("customer days: %w", err)
		}
	}
	if facts {
		if err := schemas.AllChargeFacts(ctx, f.Conn, f.next(), f.WorkspaceID); err != nil {
			return fmt.Errorf("charge facts: %w", err)
		}
	}
	if observed {
		if err := schemas.AllObservedDays(ctx, f.Conn, f.next(), f.WorkspaceID); err != nil {
			return fmt.Errorf("observed usage days: %w", err)
		}
	}
	return nil
}

// Amount is a pointer to an amount, for events.
func Amount(v int64) *int64 { return &v }
