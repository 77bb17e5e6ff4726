// Command query is the reporting benchmark (`make bench-query`). It is not a test: it measures and
// prints Markdown tables.
//
// Phase 1 (load) generates the benchmark data set (partnerfake.BenchConfig: about 50,000 customers,
// 5 million transactions, 3 currencies), serves it with the fake Partner API, creates a workspace
// connected to it with the admin commands, and runs the real sync (`revtrack admin sync run`) into
// Kafka, where the land-platform-records consumer of an in-process `revtrack all` writes it to
// ClickHouse; it times the whole path until ClickHouse holds every record. Then it adds the tracking
// part (tracking.go: browsers and verified server events for a share of the customers, through the
// tracking topics and consumers), which attribution joins. With -reuse, a data set already loaded on
// the bench stack is used as it is (given the tracking part first if it was loaded without one).
//
// Phase 2 (query latency) starts the query component (`revtrack query`, in-process) and times, one
// request at a time over one keep-alive connection, the reporting endpoints: summary, each focused
// metric, a first and a deep customer list page, and customer detail by ID and by domain, next to a
// trivial authenticated endpoint measured in the same rounds (the baseline). The summary, the
// metrics and the list are answered from kept responses when the data has not changed, which a
// repeated request always finds; the summary, MCP's get_summary, the mrr metric and the first page
// are also timed with `Cache-Control: no-cache`, which the server answers by computing them, as it
// does the first request after new data. The revenue-over-time rows (a 365-day daily MRR series, 12
// months of MRR movements, attribution by campaign) are timed computed only, each judged as a ratio
// to the computed summary of the same rounds (target_revenue.go). Endpoints that do not exist yet are
// reported as not available.
//
// It needs the bench stack (STACK_NAME=bench deploy/local/stack up); the REVTRACK_KAFKA_BROKERS,
// REVTRACK_CLICKHOUSE_ADDR and REVTRACK_REDIS_ADDR variables locate it. The stack holds the data set
// between runs. See docs/BENCHMARKS.md for the method and the recorded results.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/revtrack/revtrack/bench/internal/benchkit"
)

type options struct {
	scale, partnerRPS                float64
	reuse, parallel, loadOnly        bool
	strict, defaultRange             bool
	stackDir, end, queryCommand      string
	cpuprofile                       string
	rounds, warm, samples            int
	limit, deepPage                  int
	syncTimeout, landTimeout, settle time.Duration
}

func main() {
	var o options
	flag.Float64Var(&o.scale, "scale", 1, "data set size as a fraction of partnerfake.BenchConfig (0.02: about 1,000 customers and 100,000 transactions)")
	flag.BoolVar(&o.reuse, "reuse", false, "skip the load when the bench stack already holds this data set (same scale and end, every record in ClickHouse)")
	flag.StringVar(&o.end, "end", "", "last day of the data set, YYYY-MM-DD (default: today; with -reuse, the loaded data set's)")
	flag.Float64Var(&o.partnerRPS, "partner-rps", 0, "the fake Partner API's per-token limit, and the sync's pacing, in requests/s during the load (0: off; the real API allows 4)")
	flag.BoolVar(&o.parallel, "parallel", false, "sync the apps at the same time (one `admin sync run --app` each) instead of one after the other")
	flag.DurationVar(&o.syncTimeout, "sync-timeout", 12*time.Hour, "--timeout of `revtrack admin sync run`")
	flag.DurationVar(&o.landTimeout, "land-timeout", 30*time.Minute, "how long to wait, after the sync returned, for ClickHouse to hold every record")
	flag.BoolVar(&o.loadOnly, "load-only", false, "stop after phase 1")
	flag.DurationVar(&o.settle, "settle", 10*time.Minute, "longest wait for ClickHouse's merges to finish before the query runs")
	flag.IntVar(&o.rounds, "rounds", 100, "measured rounds (each calls every target once)")
	flag.IntVar(&o.warm, "warmup", 5, "unmeasured rounds first")
	flag.IntVar(&o.samples, "samples", 100, "customers sampled (fixed seed) for the detail targets")
	flag.IntVar(&o.limit, "limit", 50, "customers per list page")
	flag.IntVar(&o.deepPage, "deep-page", 0, "the deep list page's number (default: the middle of the list)")
	flag.StringVar(&cursorParam, "cursor-param", cursorParam, "query parameter that carries nextCursor")
	flag.BoolVar(&o.defaultRange, "default-range", false, "call summary and metrics without from/to (the API's last 30 days) instead of the data set's last 30 days")
	flag.StringVar(&o.queryCommand, "query-command", "query", "revtrack command serving the API in phase 2 (query, or all)")
	flag.StringVar(&o.stackDir, "stack-dir", ".stack/bench", "the bench stack's state directory (the loaded data set's marker is kept there)")
	flag.StringVar(&o.cpuprofile, "cpuprofile", "", "write a CPU profile of this process (the sync, the landing consumer and the fake, in-process) from the sync's start until everything landed")
	flag.BoolVar(&o.strict, "strict", false, "exit 1 when a target is missed")
	flag.Parse()
	os.Exit(run(o))
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench-query: "+format+"\n", args...)
}

func run(o options) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.scale <= 0 || o.rounds < 1 || o.warm < 0 || o.limit < 1 || o.samples < 1 || (o.queryCommand != "query" && o.queryCommand != "all") {
		progress("invalid flags")
		return 2
	}
	started := time.Now()
	st := newStack()
	defer st.close()
	mach := describeMachine(ctx, st, o.stackDir)

	prev, prevErr := readMarker(o.stackDir)
	end, err := dataEnd(o, prev, prevErr)
	if err != nil {
		progress("%v", err)
		return 2
	}
	progress("generating the data set (scale %v, ending %s)", o.scale, end.Format(time.DateOnly))
	ds := generate(end, o.scale, o.samples)
	progress("%s", ds.facts.describe(o.scale, ds.took))

	rep := report{started: started, mach: mach, ds: ds, opts: o}
	m := prev
	reuse := false
	if o.reuse {
		why := "no data set loaded on the bench stack yet"
		if prevErr == nil {
			if why, err = st.reusable(ctx, prev, ds.facts); err != nil {
				progress("checking the loaded data set: %v", err)
				return 1
			}
			if why == "" {
				why = trackingReuse(prev, ds)
			}
		}
		if reuse = why == ""; !reuse {
			progress("loading: %s", why)
		}
	}
	if reuse {
		progress("reusing the data set loaded on %s", prev.LoadedAt.Format(time.RFC3339))
		rep.reused = true
		if err := ensureTracking(ctx, st, ds, &m, o); err != nil {
			progress("tracking part: %v", err)
			rep.problems = append(rep.problems, "tracking part: "+err.Error())
			rep.print(os.Stdout)
			return 1
		}
	} else if m, err = load(ctx, st, ds, o); err != nil {
		progress("load: %v", err)
		rep.problems = append(rep.problems, "load: "+err.Error())
		rep.print(os.Stdout)
		return 1
	}
	rep.marker = m

	if !o.loadOnly {
		if err := queryPhase(ctx, st, ds, m, o, &rep); err != nil {
			progress("query phase: %v", err)
			rep.problems = append(rep.problems, "query phase: "+err.Error())
		}
	}
	missed := rep.print(os.Stdout)
	switch {
	case len(rep.problems) > 0:
		return 1
	case missed && o.strict:
		return 1
	}
	return 0
}

// dataEnd is the data set's last day: -end, else with -reuse the loaded data set's, else today (UTC).
func dataEnd(o options, prev marker, prevErr error) (time.Time, error) {
	switch {
	case o.end != "":
		t, err := time.Parse(time.DateOnly, o.end)
		if err != nil {
			return t, fmt.Errorf("-end: %w", err)
		}
		return t, nil
	case o.reuse && prevErr == nil:
		return time.Parse(time.DateOnly, prev.Facts.End)
	}
	return time.Now().UTC().Truncate(24 * time.Hour), nil
}

// walkLimit is the page size the walk to the deep page asks for (the API's maximum).
const walkLimit = 200

// queryPhase is phase 2: a fresh read key, `revtrack query` in-process, the targets.
func queryPhase(ctx context.Context, st *stack, ds *dataset, m marker, o options, rep *report) error {
	if err := st.open(ctx); err != nil {
		return err
	}
	progress("waiting for ClickHouse's merges to finish (at most %s)", o.settle)
	var err error
	if rep.settled, rep.parts, err = st.settle(ctx, o.settle); err != nil {
		return err
	}
	var key struct {
		ID  string `json:"id"`
		Key string `json:"key"`
	}
	if err := st.adminJSON(ctx, &key, "key", "create", m.Slug, "--name", "bench-query "+time.Now().UTC().Format(time.RFC3339), "--scope", "read"); err != nil {
		return err
	}
	defer func() {
		if _, err := st.admin(context.WithoutCancel(ctx), "key", "revoke", key.ID); err != nil {
			progress("revoking the benchmark's key: %v", err)
		}
	}()
	progress("starting revtrack %s in-process", o.queryCommand)
	if err := st.start(ctx, o.queryCommand); err != nil {
		return err
	}
	defer func() {
		if err := st.stop(); err != nil {
			progress("stopping revtrack %s: %v", o.queryCommand, err)
		}
	}()
	a := newAPI(st.revtrack.BaseURL, key.Key)
	plan := queryPlan{limit: o.limit, byID: ds.sample, byDomain: ds.byDom}
	end, _ := time.Parse(time.DateOnly, ds.facts.End)
	to := end.AddDate(0, 0, -1) // the data set's last whole day
	plan.lastDay = to.Format(time.DateOnly)
	if !o.defaultRange {
		plan.from, plan.to = to.AddDate(0, 0, -29).Format(time.DateOnly), to.Format(time.DateOnly)
	}
	want := o.deepPage
	if want <= 0 {
		want = max(2, ds.facts.Customers/o.limit/2)
	}
	step := max(1, min(walkLimit/o.limit, want-1))
	progress("walking the customer list towards page %d (%d customers per request)", want, step*o.limit)
	walkStart := time.Now()
	cur, page, missing, err := a.walk(ctx, o.limit, step, want)
	rep.walkTook = time.Since(walkStart)
	switch {
	case err != nil:
		rep.problems = append(rep.problems, "customer list walk: "+err.Error())
	case missing:
	case cur == "":
		rep.notes = append(rep.notes, "the customer list has a single page: no deep page measured")
	default:
		plan.deepCursor, plan.deepPage = cur, page
		if page < 1+(want-1)/step*step {
			rep.notes = append(rep.notes, fmt.Sprintf("the customer list ends at page %d (asked for page %d)", page, want))
		}
	}
	rep.plan = plan
	ts := a.targets(plan)
	progress("measuring %d targets: %d warm-up rounds, then %d rounds", len(ts), o.warm, o.rounds)
	rep.results = measure(ctx, ts, o.warm, o.rounds)
	rep.queryLoadAvg = benchkit.LoadAvg()
	if sf, _, _ := revenueRanges(plan.lastDay); sf != "" {
		progress("checking the movement invariant on the daily movements of %s to %s", sf, plan.lastDay)
		switch c, err := a.checkMovements(ctx, sf, plan.lastDay); {
		case err != nil:
			rep.problems = append(rep.problems, "movement invariant: "+err.Error())
		case len(c.Violations) > 0:
			rep.problems = append(rep.problems, fmt.Sprintf("movement invariant broken in %d of %d period-currency blocks, first: %s",
				len(c.Violations), c.Blocks, c.Violations[0]))
		default:
			rep.notes = append(rep.notes, fmt.Sprintf("movement invariant (METRICS 3.14) holds on the bench data: %d daily periods, "+
				"%d period-currency blocks, 0 violations", c.Periods, c.Blocks))
		}
	}
	return ctx.Err()
}

// ms prints a duration in milliseconds.
func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }
