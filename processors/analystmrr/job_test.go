package analystmrr

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/internal/redisx"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/internal/testenv/pipeline"
	"github.com/revtrack/revtrack/query/reporting"
	"github.com/revtrack/revtrack/query/reporting/reportingtest"
)

// apps are those of the golden datasets: together they hold every movement type (METRICS 3.14's
// worked examples: new, expansion, contraction, churn; reactivation and a reinstall), usage MRR, a
// second currency, an excluded customer (golf) and a lifted exclusion (alpha).
var apps = []string{"app-1", "app-n", "app-a", "app-b", "app-x"}

type fixedWorkspaces []controlplane.Workspace

func (w *fixedWorkspaces) Workspaces(context.Context) ([]controlplane.Workspace, error) {
	return *w, nil
}

type env struct {
	conn  driver.Conn
	store *reporting.Store
	fx    *reportingtest.Fixture
	ws    *fixedWorkspaces
	job   *Job
}

// setup is a migrated database with the golden datasets of workspace ws, a reporting store on
// reportingtest's clock and a job whose clock advances a second per reading (so that generations
// and computed_at differ between rounds).
func setup(t *testing.T) env {
	t.Helper()
	db := pipeline.Migrated(t)
	fx := reportingtest.New(db.Conn, "ws")
	reportingtest.Example37(fx, "app-1")
	reportingtest.ExampleNRR(fx, "app-n")
	reportingtest.ExampleLifecycle(fx, "app-a", "app-b")
	reportingtest.ExampleChargeEvidence(fx, "app-x")
	fx.Flush(t)
	store := reporting.New(db.Conn, reporting.WithClock(reportingtest.Clock))
	ws := &fixedWorkspaces{{ID: "ws", SelectedAppIDs: apps}}
	var tick atomic.Int64
	job := &Job{Conn: db.Conn, Reports: store, Workspaces: ws, Locker: redisx.Locker{Client: db.Redis, Prefix: db.RedisC.KeyPrefix},
		Lease: "analyst-mrr:" + db.CH.Database, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Metrics: NewMetrics(nil),
		Now: func() time.Time { return reportingtest.Today.Add(time.Duration(tick.Add(1)) * time.Second) }}
	return env{conn: db.Conn, store: store, fx: fx, ws: ws, job: job}
}

// rng is a year of days ending on reportingtest's today: the API's longest daily range.
var rng = reporting.Range{From: reporting.MustDate("2025-04-01"), To: reporting.MustDate("2026-03-31")}

type dayCur struct{ date, cur string }

// viewMRR sums the daily view per day and currency over the range.
func viewMRR(t *testing.T, e env, appFilter, excludedFilter string) map[dayCur]reporting.MRRBlock {
	t.Helper()
	q := fmt.Sprintf(`SELECT toString(date), currency, sum(mrr_cents), sum(subscription_mrr_cents), sum(usage_mrr_cents)
FROM analyst_customer_mrr_daily
WHERE workspace_id = 'ws' AND date BETWEEN '%s' AND '%s' %s %s
GROUP BY date, currency`, rng.From, rng.To, appFilter, excludedFilter)
	rows, err := e.conn.Query(testenv.Ctx(t), q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[dayCur]reporting.MRRBlock{}
	for rows.Next() {
		var (
			k dayCur
			b reporting.MRRBlock
		)
		if err := rows.Scan(&k.date, &k.cur, &b.MRRCents, &b.SubscriptionMRRCents, &b.UsageMRRCents); err != nil {
			t.Fatal(err)
		}
		out[k] = b
	}
	return out
}

// apiMRR is GET /api/v1/metrics/mrr?interval=day over the range, per day and currency (zeros left out).
func apiMRR(t *testing.T, e env, req reporting.Request) map[dayCur]reporting.MRRBlock {
	t.Helper()
	s, err := e.store.Series(testenv.Ctx(t), reporting.MetricMRR, reporting.IntervalDay, req)
	if err != nil {
		t.Fatal(err)
	}
	out := map[dayCur]reporting.MRRBlock{}
	for _, p := range s.Points {
		for cur, v := range p.ByCurrency {
			if b := v.(reporting.MRRBlock); b != (reporting.MRRBlock{}) {
				out[dayCur{p.Date.String(), cur}] = b
			}
		}
	}
	return out
}

// moveSums are one day's movements in one currency: cents (positive, as the API's) and customers
// by kind.
type moveSums map[string][2]int64

func viewMovements(t *testing.T, e env, appFilter, excludedFilter string) map[dayCur]moveSums {
	t.Helper()
	q := fmt.Sprintf(`SELECT toString(date), currency, kind, toInt64(sum(abs(movement_cents))), count()
FROM analyst_mrr_movements
WHERE workspace_id = 'ws' AND date BETWEEN '%s' AND '%s' %s %s
GROUP BY date, currency, kind`, rng.From, rng.To, appFilter, excludedFilter)
	rows, err := e.conn.Query(testenv.Ctx(t), q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[dayCur]moveSums{}
	for rows.Next() {
		var (
			k     dayCur
			kind  string
			cents int64
			n     uint64
		)
		if err := rows.Scan(&k.date, &k.cur, &kind, &cents, &n); err != nil {
			t.Fatal(err)
		}
		if out[k] == nil {
			out[k] = moveSums{}
		}
		out[k][kind] = [2]int64{cents, int64(n)}
	}
	return out
}

func apiMovements(t *testing.T, e env, req reporting.Request) map[dayCur]moveSums {
	t.Helper()
	m, err := e.store.Movements(testenv.Ctx(t), reporting.MovementsRequest{Request: req, Interval: reporting.IntervalDay})
	if err != nil {
		t.Fatal(err)
	}
	out := map[dayCur]moveSums{}
	for _, p := range m.Periods {
		for cur, b := range p.ByCurrency {
			s := moveSums{}
			for kind, v := range map[string][2]int64{
				reporting.MoveNew: {b.NewCents, b.NewCustomers}, reporting.MoveExpansion: {b.ExpansionCents, b.ExpansionCustomers},
				reporting.MoveContraction: {b.ContractionCents, b.ContractionCustomers}, reporting.MoveChurn: {b.ChurnCents, b.ChurnedCustomers},
				reporting.MoveReactivation: {b.ReactivationCents, b.ReactivatedCustomers}} {
				if v[1] > 0 {
					s[kind] = v
				}
			}
			if len(s) > 0 {
				out[dayCur{p.Date.String(), cur}] = s
			}
		}
	}
	return out
}

// checkAddsUp: for each day and currency of the range, Σ the daily view = the API's daily MRR series
// and Σ the movements view by kind = the API's daily movements (cents and customers), for every app
// together and each app alone, with the API's default customer scope (excluded = 0) and all.
func checkAddsUp(t *testing.T, e env) (days, moves int) {
	t.Helper()
	type scopeCase struct {
		what, appFilter string
		appIDs          []string
	}
	cases := []scopeCase{{"every app", "", apps}}
	for _, a := range apps {
		cases = append(cases, scopeCase{a, "AND app_id = '" + a + "'", []string{a}})
	}
	for _, c := range cases {
		for _, cs := range []struct {
			scope  reporting.CustomerScope
			filter string
		}{{reporting.ScopeIncluded, "AND excluded = 0"}, {reporting.ScopeAll, ""}, {reporting.ScopeExcluded, "AND excluded = 1"}} {
			req := reporting.Request{Scope: reporting.Scope{WorkspaceID: "ws", AppIDs: c.appIDs}, Range: rng, CustomerScope: cs.scope}
			what := fmt.Sprintf("%s, %s", c.what, cs.scope)
			if got, want := viewMRR(t, e, c.appFilter, cs.filter), apiMRR(t, e, req); !equalMaps(got, want) {
				t.Errorf("%s: daily MRR\n view %v\n  api %v", what, got, want)
			} else if c.appIDs[0] == apps[0] && len(c.appIDs) > 1 && cs.scope == reporting.ScopeIncluded {
				days = len(got)
			}
			got, want := viewMovements(t, e, c.appFilter, cs.filter), apiMovements(t, e, req)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s: daily movements\n view %v\n  api %v", what, got, want)
			} else if len(c.appIDs) > 1 && cs.scope == reporting.ScopeIncluded {
				for _, s := range got {
					for _, v := range s {
						moves += int(v[1])
					}
				}
			}
		}
	}
	return days, moves
}

func equalMaps[K comparable, V comparable](a, b map[K]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestViewsAddUpToTheAPI: after one round on the golden datasets, the views add up to the API's
// daily MRR series and daily movements, every movement type occurs, and a round with nothing
// changed recomputes nothing.
func TestViewsAddUpToTheAPI(t *testing.T) {
	e := setup(t)
	r, err := e.job.RunOnce(testenv.Ctx(t))
	if err != nil || r.Recomputed != len(apps) || r.Spans == 0 || r.Movements == 0 {
		t.Fatalf("round: %+v, %v", r, err)
	}
	days, moves := checkAddsUp(t, e)
	if days < 100 || moves < 10 {
		t.Errorf("the comparison covered %d day-currencies and %d movements: too few to mean anything", days, moves)
	}
	var kinds uint64
	if err := e.conn.QueryRow(testenv.Ctx(t), "SELECT uniqExact(kind) FROM analyst_mrr_movements").Scan(&kinds); err != nil || kinds != 5 {
		t.Errorf("movement kinds: %d (%v), want all 5", kinds, err)
	}
	if r, err := e.job.RunOnce(testenv.Ctx(t)); err != nil || r.Recomputed != 0 {
		t.Errorf("a round with nothing changed: %+v, %v", r, err)
	}
}

// generations are the generations whose rows the tables hold, per table.
func generations(t *testing.T, e env) string {
	t.Helper()
	var out string
	for _, table := range []string{"customer_mrr_spans", "customer_mrr_movements"} {
		var n uint64
		if err := e.conn.QueryRow(testenv.Ctx(t), "SELECT uniqExact(generation) FROM "+table+" WHERE app_id = 'app-n'").Scan(&n); err != nil {
			t.Fatal(err)
		}
		out += fmt.Sprintf("%s:%d ", table, n)
	}
	return out
}

// TestSecondRoundReplacesTheFirst: new data (a customer of app-n who starts paying, and one of app-1
// whose usage lands) is in the views after the next round, which recomputes only what changed
// (every app here: the inputs' version is the tables'), never counted twice; the generation before
// the previous one is deleted, and an app no longer selected leaves the views.
func TestSecondRoundReplacesTheFirst(t *testing.T) {
	e := setup(t)
	ctx := testenv.Ctx(t)
	if _, err := e.job.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	addLateData(e.fx, 0)
	e.fx.Flush(t)
	if r, err := e.job.RunOnce(ctx); err != nil || r.Recomputed != len(apps) {
		t.Fatalf("second round: %+v, %v", r, err)
	}
	checkAddsUp(t, e)
	var zulu uint64
	if err := e.conn.QueryRow(ctx, "SELECT count() FROM analyst_customer_mrr_daily WHERE shop_domain = 'zulu-0.myshopify.com'").Scan(&zulu); err != nil || zulu == 0 {
		t.Errorf("the late customer's days: %d, %v", zulu, err)
	}
	// Two generations kept (the current one and the one a reader may still have chosen), then the
	// oldest deleted by the third round's mutation.
	if got := generations(t, e); got != "customer_mrr_spans:2 customer_mrr_movements:2 " {
		t.Errorf("after two rounds: %s", got)
	}
	addLateData(e.fx, 1)
	e.fx.Flush(t)
	if _, err := e.job.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "the superseded generation's rows to be deleted", func() bool {
		return generations(t, e) == "customer_mrr_spans:2 customer_mrr_movements:2 "
	})
	checkAddsUp(t, e)

	*e.ws = fixedWorkspaces{{ID: "ws", SelectedAppIDs: apps[1:]}}
	if r, err := e.job.RunOnce(ctx); err != nil || r.Recomputed != 1 {
		t.Fatalf("round after app-1 was deselected: %+v, %v", r, err)
	}
	var n uint64
	if err := e.conn.QueryRow(ctx, "SELECT count() FROM analyst_customer_mrr_daily WHERE app_id = 'app-1'").Scan(&n); err != nil || n != 0 {
		t.Errorf("a deselected app's days: %d, %v", n, err)
	}
	if r, err := e.job.RunOnce(ctx); err != nil || r.Recomputed != 0 {
		t.Errorf("the next round: %+v, %v", r, err)
	}
}

// addLateData lands a new paying customer in app-n (a new movement) and usage in app-1.
func addLateData(f *reportingtest.Fixture, n int) {
	shop := reportingtest.Shop(fmt.Sprint(9000 + n))
	f.AddCustomer(reportingtest.Customer{App: "app-n", Shop: shop, Domain: fmt.Sprintf("zulu-%d.myshopify.com", n), Name: "Zulu",
		Installed: "2026-03-01T09:00:00Z"})
	charge := fmt.Sprintf("sub-zulu-%d", n)
	f.AddCharge(reportingtest.Charge{App: "app-n", ID: charge, Shop: shop, Name: "Pro", Amount: 4900, Currency: "USD",
		Interval: "every_30_days", Status: "active", Accepted: "2026-03-01T10:00:00Z", Activated: "2026-03-01T10:00:00Z"})
	f.AddEvent(reportingtest.Event{App: "app-n", Type: "SUBSCRIPTION_CHARGE_ACTIVATED", Shop: shop, At: "2026-03-01T10:00:00Z", Charge: charge})
	f.AddTx(reportingtest.Tx{App: "app-n", ID: "tx-" + charge, Type: "subscription", Shop: shop, Charge: charge, At: "2026-03-02T10:00:00Z",
		Currency: "USD", Gross: 4900, Fee: 735, Net: 4165, Interval: "every_30_days"})
	f.AddTx(reportingtest.Tx{App: "app-1", ID: fmt.Sprintf("tx-late-usage-%d", n), Type: "usage", Shop: reportingtest.Shop("1001"),
		Charge: "sub-alpha", At: "2026-03-25T10:00:00Z", Currency: "USD", Gross: 700 + int64(n), Fee: 105, Net: 595 + int64(n)})
}

// TestReadersSeeOneGeneration: while rounds replace an app's rows, every read of either view sees
// the rows of exactly one computation (one computed_at), never none and never two.
func TestReadersSeeOneGeneration(t *testing.T) {
	e := setup(t)
	ctx := testenv.Ctx(t)
	if _, err := e.job.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var reads, bad atomic.Int64
	readers := make(chan error, 1)
	go func() {
		defer close(readers)
		for {
			select {
			case <-done:
				return
			default:
			}
			for _, view := range []string{"analyst_customer_mrr_daily", "analyst_mrr_movements"} {
				var computations, rows uint64
				if err := e.conn.QueryRow(ctx, "SELECT uniqExact(computed_at), count() FROM "+view+" WHERE app_id = 'app-n'").
					Scan(&computations, &rows); err != nil {
					readers <- err
					return
				}
				reads.Add(1)
				if computations != 1 || rows == 0 {
					bad.Add(1)
					t.Errorf("%s: %d computations, %d rows", view, computations, rows)
				}
			}
		}
	}()
	for n := range 4 {
		addLateData(e.fx, n)
		e.fx.Flush(t)
		if _, err := e.job.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	if err := <-readers; err != nil {
		t.Fatal(err)
	}
	t.Logf("%d reads during 4 rounds, %d saw other than one computation", reads.Load(), bad.Load())
	if reads.Load() < 20 {
		t.Errorf("only %d reads overlapped the rounds", reads.Load())
	}
	checkAddsUp(t, e)
}
