// Command ingest is the ingest benchmark (`make bench-ingest`). It is not a test: it measures and
// prints a table.
//
// In one run, on one machine, with one load tool (wrk) and the same threads, connections and
// duration for every target, it measures:
//
//   - server events (POST /api/tracking/server-events) through the whole edge of an in-process
//     `revtrack all` (auth, validation, Redis dedup and rate limit, Kafka acks=all), next to a bare
//     net/http handler that only reads and JSON-decodes the same body (the baseline);
//   - browser batches (POST /v1/collect) through the edge, next to the same bare handler decoding
//     the same batch;
//   - end-to-end freshness: at a steady rate of server events, the time from each 2xx to the first
//     ClickHouse poll that returns the event's row.
//
// The ad-upload queue has its own benchmark, bench/upload (`make bench-upload`).
//
// It needs the test stack (STACK_NAME=test deploy/local/stack up) and wrk; the REVTRACK_KAFKA_BROKERS,
// REVTRACK_CLICKHOUSE_ADDR and REVTRACK_REDIS_ADDR variables locate the stack. Everything it creates
// (database, topics, consumer groups, Redis keys) carries a random suffix and is removed at the end.
// See docs/BENCHMARKS.md for the method and the recorded results.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/revtrack/revtrack/bench/internal/benchkit"
)

// Targets from the issue.
const (
	targetRatio        = 0.6
	targetFreshnessP99 = 2 * time.Second
)

type options struct {
	threads, connections, batch, freshRate int
	duration, warmup, freshDuration, poll  time.Duration
	wrk, cpuprofile, revtrackArgs, stack   string
	command                                string
	verbose, strict                        bool
}

func main() {
	var o options
	flag.IntVar(&o.threads, "threads", 2, "wrk threads (the same for every target)")
	flag.IntVar(&o.connections, "connections", 32, "wrk connections (the same for every target)")
	flag.DurationVar(&o.duration, "duration", 15*time.Second, "measured wrk run per target")
	flag.DurationVar(&o.warmup, "warmup", 3*time.Second, "unmeasured wrk run before each target")
	flag.IntVar(&o.batch, "batch", 20, "page views per browser batch")
	flag.IntVar(&o.freshRate, "fresh-rate", 50, "server events per second during the freshness measurement")
	flag.DurationVar(&o.freshDuration, "fresh-duration", 20*time.Second, "length of the freshness measurement")
	flag.DurationVar(&o.poll, "fresh-poll", 50*time.Millisecond, "ClickHouse poll interval of the freshness measurement")
	flag.StringVar(&o.wrk, "wrk", "wrk", "wrk binary")
	flag.StringVar(&o.cpuprofile, "cpuprofile", "", "write a CPU profile of this process (revtrack in-process) during the measured edge server-event run")
	flag.StringVar(&o.command, "command", "all", "revtrack command to run in-process: all (the benchmark), or ingest (the edge without the processors; no freshness)")
	flag.StringVar(&o.revtrackArgs, "revtrack-args", "", "extra flags for `revtrack all`, space-separated (e.g. --kafka-linger=1ms)")
	flag.StringVar(&o.stack, "stack-dir", ".stack/test", "the test stack's state directory, for the CPU use of its services (optional)")
	flag.BoolVar(&o.verbose, "v", false, "print wrk's own output of every measured run")
	flag.BoolVar(&o.strict, "strict", false, "exit 1 when a target is missed")
	flag.Parse()
	os.Exit(run(o))
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench-ingest: "+format+"\n", args...)
}

// row is one measured target.
type row struct {
	name        string
	batch       int
	res         wrkResult
	cpu         benchkit.CPUUse
	produceMean time.Duration // edge only: mean time until Kafka acknowledged, from /metrics
}

func (r row) eventsPerSec() float64 { return r.res.AcceptedPerSec() * float64(r.batch) }

// run runs the sections: server events and browser batches against the bare baseline, and
// freshness.
func run(o options) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if _, err := exec.LookPath(o.wrk); err != nil {
		progress("wrk not found (apt-get install wrk; `make bench-ingest` installs it): %v", err)
		return 1
	}
	if (o.command != "all" && o.command != "ingest") || o.freshRate < 1 || o.batch < 1 || o.threads < 1 || o.connections < o.threads {
		progress("invalid flags")
		return 2
	}
	mach := describeMachine(o.wrk)
	started := time.Now()
	tmp, err := os.MkdirTemp("", "bench-ingest-")
	if err != nil {
		progress("%v", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	script, err := writeScript(tmp)
	if err != nil {
		progress("%v", err)
		return 1
	}
	ld := load{bin: o.wrk, threads: o.threads, connections: o.connections, script: script}

	bareURL, stopBare, err := startBare(ctx)
	if err != nil {
		progress("bare handler: %v", err)
		return 1
	}
	defer stopBare()

	st := newStack()
	defer func() {
		progress("cleaning up (revtrack, database %s, topics *%s, Redis keys %s*)", st.CH.Database, st.Suffix, st.Redis.KeyPrefix)
		if err := st.Stop(); err != nil {
			progress("cleanup: %v", err)
		}
	}()
	progress("starting revtrack %s in-process (database %s, topic suffix %s)", o.command, st.CH.Database, st.Suffix)
	if err := st.Start(ctx, o.command, strings.Fields(o.revtrackArgs)); err != nil {
		progress("%v", err)
		return 1
	}
	if err := st.Seed(ctx); err != nil {
		progress("%v", err)
		return 1
	}

	var problems []string
	pipeline := o.command == "all"
	var prime, fresh freshResult
	if pipeline {
		// 1. Freshness first, on an otherwise idle pipeline. A few events first make sure the
		// consumer group has joined, so the measurement does not include the group's start-up.
		progress("priming the pipeline (consumer group join)")
		prime, err = st.freshness(ctx, "prime-"+st.ID, 10, 500*time.Millisecond, o.poll, 90*time.Second)
		if err != nil || prime.Visible != prime.Sent {
			progress("priming failed (%d of %d visible): %v\n%s", prime.Visible, prime.Sent, err, st.Revtrack.Logs)
			return 1
		}
		progress("freshness: %d server events/s for %s, polling ClickHouse every %s", o.freshRate, o.freshDuration, o.poll)
		fresh, err = st.freshness(ctx, "fresh-"+st.ID, o.freshRate, o.freshDuration, o.poll, 30*time.Second)
		if err != nil {
			progress("freshness: %v", err)
			return 1
		}
		if fresh.Acked != fresh.Sent || fresh.Visible != fresh.Acked {
			problems = append(problems, fmt.Sprintf("freshness: %d sent, %d acknowledged, %d visible in ClickHouse; failures %v",
				fresh.Sent, fresh.Acked, fresh.Visible, fresh.Failed))
		}
	}

	occurred := time.Now().UTC().Format(time.RFC3339)
	args := wrkArgs{private: st.Private, public: st.Source.PublicKey, slug: benchkit.TeamSlug, occurred: occurred, origin: benchkit.Origin}
	measure := func(name, url, mode, tag string, batch int, edge bool) (row, int64, error) {
		a := args
		a.mode, a.batch = mode, batch
		progress("%s: warm-up %s, then %s (wrk -t%d -c%d)", name, o.warmup, o.duration, o.threads, o.connections)
		a.tag = tag + "w-" + st.ID
		warm, err := ld.run(ctx, url, o.warmup, a)
		if err != nil {
			return row{}, 0, err
		}
		a.tag = tag + "-" + st.ID
		pSum, pCount := st.metric("revtrack_ingest_produce_seconds_sum"), st.metric("revtrack_ingest_produce_seconds_count")
		if edge && mode == "server" && o.cpuprofile != "" {
			f, err := os.Create(o.cpuprofile)
			if err != nil {
				return row{}, 0, err
			}
			defer f.Close()
			if err := pprof.StartCPUProfile(f); err != nil {
				return row{}, 0, err
			}
			defer pprof.StopCPUProfile()
		}
		before := benchkit.SampleCPU(o.stack)
		res, err := ld.run(ctx, url, o.duration, a)
		after := benchkit.SampleCPU(o.stack)
		if err != nil {
			return row{}, 0, err
		}
		r := row{name: name, batch: batch, res: res, cpu: benchkit.CPUBetween(before, after, res.WrkCPU)}
		if edge {
			if n := st.metric("revtrack_ingest_produce_seconds_count") - pCount; n > 0 {
				r.produceMean = time.Duration((st.metric("revtrack_ingest_produce_seconds_sum") - pSum) / n * float64(time.Second))
			}
		}
		if o.verbose {
			fmt.Fprintf(os.Stderr, "--- %s ---\n%s\n", name, res.Raw)
		}
		for _, x := range []wrkResult{warm, res} {
			if x.Other > 0 || x.SocketErrors > 0 {
				problems = append(problems, fmt.Sprintf("%s: %d answers other than 202 (last %d), %d socket errors",
					name, x.Other, x.LastOther, x.SocketErrors))
			}
		}
		return r, warm.Accepted + res.Accepted, nil
	}

	// 2. Server events: the baseline, then the edge, back to back.
	srvPath, colPath := "/api/tracking/server-events", "/v1/collect"
	bareSrv, _, err := measure("bare net/http, server event", bareURL+srvPath, "server", "bs", 1, false)
	if err != nil {
		progress("%v", err)
		return 1
	}
	edgeSrv, edgeSrvAccepted, err := measure("edge, server event", st.Revtrack.BaseURL+srvPath, "server", "es", 1, true)
	if err != nil {
		progress("%v", err)
		return 1
	}
	// Every accepted server event must land; waiting also keeps the backlog out of the next runs.
	srvDrain := drain{want: uint64(prime.Acked + fresh.Acked + int(edgeSrvAccepted))}
	if pipeline {
		if srvDrain.took, srvDrain.landed, err = st.waitLanded(ctx, "server_events", srvDrain.want, 90*time.Second); err != nil {
			problems = append(problems, err.Error())
		}
		progress("server_events holds %d of %d accepted events, %s after the load ended", srvDrain.landed, srvDrain.want,
			srvDrain.took.Round(time.Millisecond))
	}

	// 3. Browser batches: the baseline, then the edge.
	bareCol, _, err := measure(fmt.Sprintf("bare net/http, browser batch of %d", o.batch), bareURL+colPath, "browser", "bb", o.batch, false)
	if err != nil {
		progress("%v", err)
		return 1
	}
	edgeCol, edgeColAccepted, err := measure(fmt.Sprintf("edge, browser batch of %d", o.batch), st.Revtrack.BaseURL+colPath, "browser", "eb", o.batch, true)
	if err != nil {
		progress("%v", err)
		return 1
	}
	colDrain := drain{want: uint64(edgeColAccepted) * uint64(o.batch)}
	if pipeline {
		if colDrain.took, colDrain.landed, err = st.waitLanded(ctx, "browser_events", colDrain.want, 90*time.Second); err != nil {
			problems = append(problems, err.Error())
		}
		progress("browser_events holds %d of %d accepted events, %s after the load ended", colDrain.landed, colDrain.want,
			colDrain.took.Round(time.Millisecond))
	}

	missed := report(os.Stdout, o, mach, started, []row{bareSrv, edgeSrv, bareCol, edgeCol}, fresh, srvDrain, colDrain, problems)
	switch {
	case len(problems) > 0:
		return 1
	case missed && o.strict:
		return 1
	}
	return 0
}

type drain struct {
	landed, want uint64
	took         time.Duration
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}

// report prints the results as Markdown (a terminal reads it as a table; docs/BENCHMARKS.md takes it
// as is) and says whether a target was missed.
func report(w io.Writer, o options, m machine, started time.Time, rows []row, f freshResult, srv, col drain, problems []string) bool {
	fmt.Fprintf(w, "\n## Ingest benchmark, %s\n\n", started.UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(w, "Machine: %d CPUs, %s, %.1f GiB RAM, Linux %s, %s, %s; load average at start %s, at end %s.\n",
		m.CPUs, m.Model, m.MemGiB, m.Kernel, m.Go, m.Wrk, m.LoadAvg, benchkit.LoadAvg())
	edge := "`revtrack " + o.command + "` in-process, default settings"
	if o.revtrackArgs != "" {
		edge = "`revtrack " + o.command + " " + o.revtrackArgs + "` in-process"
	}
	fmt.Fprintf(w, "Edge: %s. Load: wrk -t%d -c%d, %s measured after a %s warm-up per target, unique event IDs per request.\n\n",
		edge, o.threads, o.connections, o.duration, o.warmup)

	fmt.Fprintln(w, "| Target | req/s (202) | events/s | p50 | p99 | edge / bare |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|")
	ratios := make([]float64, len(rows))
	for i, r := range rows {
		ratio := ""
		if i%2 == 1 && rows[i-1].res.AcceptedPerSec() > 0 {
			ratios[i] = r.res.AcceptedPerSec() / rows[i-1].res.AcceptedPerSec()
			ratio = fmt.Sprintf("%.2f×", ratios[i])
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", r.name, benchkit.Num(r.res.AcceptedPerSec()), benchkit.Num(r.eventsPerSec()),
			ms(r.res.P50), ms(r.res.P99), ratio)
	}
	pipeline := o.command == "all"
	if pipeline {
		fmt.Fprintf(w, "| freshness, %d server events/s for %s (2xx → row in ClickHouse, polled every %s) | | %d events | %s | %s | |\n",
			f.Rate, f.Duration, f.Poll, f.Visible, ms(f.pct(50)), ms(f.pct(99)))
	}

	ratioOK := ratios[1] >= targetRatio
	freshOK := f.Visible > 0 && f.Visible == f.Sent && f.pct(99) <= targetFreshnessP99
	fmt.Fprintln(w, "\n| Target | Measured | Goal | |")
	fmt.Fprintln(w, "|---|---:|---:|---|")
	fmt.Fprintf(w, "| edge / bare, server events (req/s) | %.2f× | ≥ %.1f× | %s |\n", ratios[1], targetRatio, verdict(ratioOK))
	if pipeline {
		fmt.Fprintf(w, "| freshness p99 | %s | ≤ %s | %s |\n", ms(f.pct(99)), targetFreshnessP99, verdict(freshOK))
	} else {
		fmt.Fprintf(w, "| freshness p99 | not measured (revtrack %s: no processors) | ≤ %s | |\n", o.command, targetFreshnessP99)
		freshOK = true
	}

	fmt.Fprintln(w, "\nDetails:")
	for _, r := range rows {
		fmt.Fprintf(w, "- %s: %d requests in %s, p90 %s, max %s, mean %s", r.name, r.res.Requests, r.res.Duration.Round(time.Millisecond),
			ms(r.res.P90), ms(r.res.Max), ms(r.res.Mean))
		if r.produceMean > 0 {
			fmt.Fprintf(w, "; mean Kafka produce (acks=all) %s", ms(r.produceMean))
		}
		self, all := r.cpu.PerRequest(r.res.AcceptedPerSec())
		fmt.Fprintf(w, "; CPU in cores: %s; CPU per request: %s µs in the bench process, %s µs with wrk, Kafka, ClickHouse and Redis.\n",
			r.cpu, benchkit.Num(float64(self)/float64(time.Microsecond)), benchkit.Num(float64(all)/float64(time.Microsecond)))
	}
	if pipeline {
		fmt.Fprintf(w, "- freshness: %d sent, %d acknowledged, %d visible; p90 %s, max %s", f.Sent, f.Acked, f.Visible,
			ms(f.pct(90)), ms(f.pct(100)))
		if len(f.Failed) > 0 {
			fmt.Fprintf(w, "; failed %v", f.Failed)
		}
		fmt.Fprintln(w, ".")
		fmt.Fprintf(w, "- landed: server_events %d of %d accepted (%s after the load ended), browser_events %d of %d (%s after);"+
			" more than accepted because wrk does not count the answers to requests in flight when it stops.\n",
			srv.landed, srv.want, srv.took.Round(time.Millisecond), col.landed, col.want, col.took.Round(time.Millisecond))
	} else {
		fmt.Fprintf(w, "- revtrack %s: the edge without the processors, so nothing lands in ClickHouse during the runs.\n", o.command)
	}
	for _, p := range problems {
		fmt.Fprintf(w, "- PROBLEM: %s\n", p)
	}
	return !ratioOK || !freshOK
}
