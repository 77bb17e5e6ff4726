package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/revtrack/revtrack/bench/internal/benchkit"
	"github.com/revtrack/revtrack/devtools/partnerfake"
	"github.com/revtrack/revtrack/ingest/platformsync"
	"github.com/revtrack/revtrack/internal/httpserver"
	"github.com/revtrack/revtrack/schemas"
)

const (
	benchSlug = "bench"
	// tokenEnv carries the fake's partner token to `revtrack admin partner connect --token-env`, as an
	// operator would pass a real one.
	tokenEnv = "REVTRACK_BENCH_PARTNER_TOKEN"
	// realPartnerRPS is the Partner API's documented per-client limit (and the fake's default).
	realPartnerRPS = 4
	// productionRowLimit is the sync's default row limit per app.
	productionRowLimit = platformsync.DefaultRowLimit
)

// loadResult is what phase 1 measured; the marker keeps it, so a -reuse run can still say how long
// the cold load took.
type loadResult struct {
	Parallel   bool          `json:"parallel"`   // one `admin sync run --app` per app at once, or one run of all apps
	PartnerRPS float64       `json:"partnerRps"` // the fake's per-token limit during the load (0: off)
	Reset      time.Duration `json:"reset"`
	Start      time.Duration `json:"start"` // `revtrack all` until /readyz: migrations, topics
	Seed       time.Duration `json:"seed"`
	// Sync: from the first `admin sync run` to the last one returning (every page produced to Kafka).
	Sync time.Duration `json:"sync"`
	// Landed: from the first `admin sync run` until ClickHouse held every transaction and event.
	Landed       time.Duration `json:"landed"`
	Pages        int64         `json:"pages"` // GraphQL requests the fake executed
	Throttled    int64         `json:"throttled"`
	Runs         []syncRun     `json:"runs"`
	Transactions landed        `json:"transactions"`
	Events       landed        `json:"events"`
	// Customers derived from the landed records (platform_customers), when the processors derive them.
	Customers     landed        `json:"customers"`
	CustomersTook time.Duration `json:"customersTook"` // from the sync's start
}

// syncRun is one sync run as `revtrack admin sync run` prints it.
type syncRun struct {
	WorkspaceID string `json:"workspaceId"`
	AppID       string `json:"appId"`
	schemas.SyncRun
}

func (r loadResult) records() int64 { return int64(r.Transactions.Distinct + r.Events.Distinct) }

// load is phase 1: from an empty bench stack to the whole data set in ClickHouse, through the same
// path as production: the partner API (the fake, over HTTP), `revtrack admin sync run`, Kafka, the
// land-platform-records consumer of `revtrack all`, ClickHouse.
func load(ctx context.Context, st *stack, ds *dataset, o options) (marker, error) {
	res := loadResult{Parallel: o.parallel, PartnerRPS: o.partnerRPS}
	m := marker{Scale: ds.scale, Facts: ds.facts, Slug: benchSlug}
	var err error
	if m.Migrations, err = migrations(); err != nil {
		return m, err
	}

	t := time.Now()
	progress("resetting the bench stack (database %s, topics, consumer groups, Redis keys %s*)", st.ch.Database, st.redis.KeyPrefix)
	if err := removeMarker(o.stackDir); err != nil {
		return m, err
	}
	if err := st.reset(ctx); err != nil {
		return m, fmt.Errorf("reset: %w", err)
	}
	res.Reset = time.Since(t)

	fake, fakeURL, stopFake, err := serveFake(ds.d, o.partnerRPS)
	if err != nil {
		return m, err
	}
	defer stopFake()
	st.partnerURL = fakeURL

	progress("starting revtrack all in-process (migrations, topics, processors; no scheduled sync)")
	t = time.Now()
	// The on-demand runs below are the only sync runs: a scheduled pass would take an app's lock
	// in the middle of the load.
	if err := st.start(ctx, "all", "--platform-sync-interval", "0"); err != nil {
		return m, err
	}
	defer func() {
		if err := st.stop(); err != nil {
			progress("stopping revtrack all: %v", err)
		}
	}()
	res.Start = time.Since(t)
	if err := st.open(ctx); err != nil {
		return m, err
	}

	t = time.Now()
	if m.WorkspaceID, err = seed(ctx, st, ds, fakeURL); err != nil {
		return m, err
	}
	res.Seed = time.Since(t)

	progress("syncing %d apps from the fake partner API (%s, %s)", len(ds.apps), syncMode(o.parallel), rpsText(o.partnerRPS))
	if o.cpuprofile != "" {
		f, err := os.Create(o.cpuprofile)
		if err != nil {
			return m, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return m, err
		}
		defer pprof.StopCPUProfile()
	}
	start := time.Now()
	stopProgress := st.reportProgress(ctx, m.WorkspaceID, ds.facts, fake, start)
	runs, syncErr := syncApps(ctx, st, ds, o)
	res.Sync = time.Since(start)
	res.Runs = runs
	if syncErr != nil {
		stopProgress()
		return m, syncErr
	}
	progress("every sync run returned after %s; waiting for ClickHouse", res.Sync.Round(time.Second))

	res.Landed, res.Transactions, res.Events, err = st.waitLanded(ctx, m.WorkspaceID, ds.facts, start, o.landTimeout)
	stopProgress()
	stats := fake.Stats()
	res.Pages, res.Throttled = stats.Served, stats.Throttled
	if err != nil {
		return m, err
	}
	progress("ClickHouse holds every transaction and event %s after the sync started", res.Landed.Round(time.Second))

	res.Customers, res.CustomersTook, err = st.waitCustomers(ctx, m.WorkspaceID, ds.facts, start, o.landTimeout)
	if err != nil {
		return m, err
	}
	tr, err := loadTracking(ctx, st, ds, m.WorkspaceID, o.landTimeout)
	if err != nil {
		return m, fmt.Errorf("tracking part: %w", err)
	}
	m.Tracking = &tr
	m.LoadedAt, m.Load = time.Now().UTC(), res
	return m, writeMarker(o.stackDir, m)
}

func syncMode(parallel bool) string {
	if parallel {
		return "one `revtrack admin sync run --app` per app, at the same time"
	}
	return "one `revtrack admin sync run` for all apps, one after the other"
}

func rpsText(rps float64) string {
	if rps <= 0 {
		return "the fake's rate limit and the client's pacing off"
	}
	return fmt.Sprintf("the fake's rate limit and the client's pacing at %g requests/s per token", rps)
}

// serveFake serves the data set over the Partner API's GraphQL on a free loopback port. rps 0 turns
// the per-token limit off.
func serveFake(d *partnerfake.Dataset, rps float64) (*partnerfake.Server, string, func(), error) {
	cfg := partnerfake.DefaultServerConfig()
	cfg.RequestsPerSecond = rps
	fake := partnerfake.NewServer(d, cfg)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", nil, err
	}
	srv := httpserver.NewServer(fake, httpserver.DefaultConfig())
	go func() { _ = srv.Serve(ln) }()
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}
	return fake, "http://" + ln.Addr().String(), stop, nil
}

// seed registers the fake's apps, creates the bench workspace with them selected and connects it to
// the fake partner API, with the same admin commands an operator runs (deploy/local/run's demo flow
// at benchmark scale). It returns the workspace ID.
func seed(ctx context.Context, st *stack, ds *dataset, fakeURL string) (string, error) {
	var ids []string
	for _, a := range ds.apps {
		if _, err := st.admin(ctx, "app", "put", a.ID, a.Name, "--platform-id", a.PlatformID); err != nil {
			return "", err
		}
		ids = append(ids, a.ID)
	}
	var w struct {
		ID string `json:"id"`
	}
	if err := st.adminJSON(ctx, &w, "workspace", "create", benchSlug, "--name", "Query benchmark", "--apps", strings.Join(ids, ",")); err != nil {
		return "", err
	}
	fake := partnerfake.DefaultServerConfig()
	if err := os.Setenv(tokenEnv, fake.Tokens[0]); err != nil {
		return "", err
	}
	if _, err := st.admin(ctx, "partner", "connect", benchSlug, "--org", fake.OrgID, "--token-env", tokenEnv); err != nil {
		return "", err
	}
	return w.ID, nil
}

// syncFlags are the sync settings of the load. The whole data set loads in one run: no row limit
// below the largest app's transactions, no backfill budget. The client paces its requests at the
// fake's limit (unpaced when the limit is off).
func syncFlags(o options) []string {
	return []string{"--timeout", o.syncTimeout.String(), "--platform-sync-row-limit", "1000000000",
		"--platform-sync-backfill-budget", "0", "--platform-sync-requests-per-second", strconv.FormatFloat(o.partnerRPS, 'f', -1, 64)}
}

// syncApps runs the sync with `revtrack admin sync run`: once for every selected app (the apps one
// after the other, as the scheduler and `make run` do: they share the token's rate limit), or, with
// -parallel, once per app with --app at the same time.
func syncApps(ctx context.Context, st *stack, ds *dataset, o options) ([]syncRun, error) {
	if !o.parallel {
		out, err := st.admin(ctx, append([]string{"sync", "run", benchSlug}, syncFlags(o)...)...)
		runs, derr := decodeRuns(out)
		return runs, errors.Join(err, derr, failedRuns(runs))
	}
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		runs []syncRun
		errs []error
	)
	for _, a := range ds.apps {
		wg.Go(func() {
			out, err := st.admin(ctx, append([]string{"sync", "run", benchSlug, "--app", a.ID}, syncFlags(o)...)...)
			rs, derr := decodeRuns(out)
			mu.Lock()
			defer mu.Unlock()
			runs = append(runs, rs...)
			errs = append(errs, err, derr)
		})
	}
	wg.Wait()
	return runs, errors.Join(append(errs, failedRuns(runs))...)
}

// decodeRuns reads the sync runs `revtrack admin sync run` printed (one JSON object per app).
func decodeRuns(out string) ([]syncRun, error) {
	dec := json.NewDecoder(strings.NewReader(out))
	var runs []syncRun
	for dec.More() {
		var r syncRun
		if err := dec.Decode(&r); err != nil {
			return runs, fmt.Errorf("sync run output: %w", err)
		}
		runs = append(runs, r)
	}
	return runs, nil
}

func failedRuns(runs []syncRun) error {
	var errs []error
	for _, r := range runs {
		if r.Status != "succeeded" {
			errs = append(errs, fmt.Errorf("sync run of %s: %s %s", r.AppID, r.Status, r.Error))
		}
	}
	return errors.Join(errs...)
}

// reportProgress prints, every 15 seconds until stopped, how much has landed and how fast.
func (s *stack) reportProgress(ctx context.Context, ws string, f facts, fake *partnerfake.Server, start time.Time) func() {
	pctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		var last uint64
		lastAt := start
		for {
			select {
			case <-pctx.Done():
				return
			case <-time.After(15 * time.Second):
			}
			tx, err1 := s.rows(pctx, rowsTransactions, ws)
			ev, err2 := s.rows(pctx, rowsEvents, ws)
			if err1 != nil || err2 != nil {
				continue
			}
			now := time.Now()
			rate := float64(tx+ev-last) / now.Sub(lastAt).Seconds()
			last, lastAt = tx+ev, now
			progress("%s: %s of %s transactions and %s of %s events in ClickHouse (%s records/s lately); the fake served %s pages",
				now.Sub(start).Round(time.Second), benchkit.Num(float64(tx)), benchkit.Num(float64(f.Transactions)), benchkit.Num(float64(ev)),
				benchkit.Num(float64(f.EventKeys)), benchkit.Num(rate), benchkit.Num(float64(fake.Stats().Served)))
		}
	}()
	return func() { cancel(); <-done }
}

// waitLanded polls until ClickHouse holds at least as many rows as the data set has transactions
// and events (the time this happened is the load's end), then checks that they are all distinct
// keys, waiting on if a redelivered record made up for a missing one.
func (s *stack) waitLanded(ctx context.Context, ws string, f facts, start time.Time, timeout time.Duration) (time.Duration, landed, landed, error) {
	var took time.Duration
	var tx, ev landed
	deadline := time.Now().Add(timeout)
	for {
		txRows, err := s.rows(ctx, rowsTransactions, ws)
		if err != nil {
			return took, tx, ev, err
		}
		evRows, err := s.rows(ctx, rowsEvents, ws)
		if err != nil {
			return took, tx, ev, err
		}
		if txRows >= uint64(f.Transactions) && evRows >= uint64(f.EventKeys) {
			if took == 0 {
				took = time.Since(start)
			}
			if tx, err = s.counts(ctx, countTransactions, ws); err != nil {
				return took, tx, ev, err
			}
			if ev, err = s.counts(ctx, countEvents, ws); err != nil {
				return took, tx, ev, err
			}
			if tx.Distinct == uint64(f.Transactions) && ev.Distinct == uint64(f.EventKeys) {
				return took, tx, ev, nil
			}
		}
		if time.Now().After(deadline) {
			return took, tx, ev, fmt.Errorf("after %s ClickHouse holds %d rows (%d distinct) of %d transactions and %d rows (%d distinct) of %d events",
				timeout, txRows, tx.Distinct, f.Transactions, evRows, ev.Distinct, f.EventKeys)
		}
		select {
		case <-ctx.Done():
			return took, tx, ev, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// waitCustomers waits for the customers the processors derive from the landed records
// (platform_customers), if they derive any: when the table stays empty for 30 seconds, or stops
// growing for a minute, it returns what is there.
func (s *stack) waitCustomers(ctx context.Context, ws string, f facts, start time.Time, timeout time.Duration) (landed, time.Duration, error) {
	var c landed
	deadline := time.Now().Add(timeout)
	lastChange := time.Now()
	for {
		n, err := s.counts(ctx, countCustomers, ws)
		if err != nil {
			return c, 0, err
		}
		if n != c {
			c, lastChange = n, time.Now()
		}
		switch {
		case c.Distinct == uint64(f.CustomerKeys):
			return c, time.Since(start), nil
		case c.Rows == 0 && time.Since(lastChange) > 30*time.Second:
			progress("no customers derived (platform_customers is empty for the workspace)")
			return c, 0, nil
		case time.Since(lastChange) > time.Minute || time.Now().After(deadline):
			progress("platform_customers holds %d of %d customers and stopped growing", c.Distinct, f.CustomerKeys)
			return c, time.Since(start), nil
		}
		select {
		case <-ctx.Done():
			return c, 0, ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
}
