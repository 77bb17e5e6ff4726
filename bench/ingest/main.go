// Command ingest is the ingest benchmark (`make bench-ingest`). It is not a test: it measures and
// prints a table.
//
// In one run, on one machine, with one load tool (wrk) and the same threads, connections and
// duration for every target, it measures:
//
//   - server events (POST /api/tracking/server-events) through the whole edge of an in-process
//     `revtrack all` (auth, validation, Redis dedup and rate limit, Kafka acks=all), next to two
//     baselines: the floor (floor.go: decode, one Redis script, one ProduceSync, 202) and a bare
//     net/http handler that only reads and JSON-decodes the same body; at each of -conns, in
//     -runs interleaved rounds, with the CPU per event and the records per produce batch;
//   - browser batches (POST /v1/collect) the same way;
//   - tracker.js: its bytes on the wire with br, gzip and identity;
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
	"os"
	"os/exec"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/revtrack/revtrack/bench/internal/benchkit"
	"github.com/revtrack/revtrack/schemas"
)

// Targets from the issue.
const (
	targetFloorRatio   = 1.0 // edge ÷ floor, requests/s; the CPU per event at most the floor's
	targetScriptBytes  = 3 << 10
	targetFreshnessP99 = time.Second // issue 17, item 4
)

type options struct {
	threads, batch, freshRate, runs       int
	conns                                 []int
	duration, warmup, freshDuration, poll time.Duration
	landTimeout, settle                   time.Duration
	wrk, cpuprofile, revtrackArgs, stack  string
	command                               string
	verbose, strict                       bool
}

func main() {
	var o options
	flag.IntVar(&o.threads, "threads", 2, "wrk threads (the same for every target)")
	connList := flag.String("conns", "64,256", "wrk connections, comma-separated: every target is measured at each")
	flag.DurationVar(&o.landTimeout, "land-timeout", 2*time.Minute, "how long every accepted event may take to land after the load (more tells lag from loss on a loaded machine)")
	flag.IntVar(&o.runs, "runs", 3, "interleaved rounds (bare, floor, edge) per concurrency; the table shows medians")
	flag.DurationVar(&o.settle, "settle", 3*time.Minute, "longest wait, before each target's round, for the processors to land what earlier rounds wrote (0: no wait)")
	flag.DurationVar(&o.duration, "duration", 10*time.Second, "measured wrk run per target and round")
	flag.DurationVar(&o.warmup, "warmup", 2*time.Second, "unmeasured wrk run before each target and round")
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
	for _, f := range strings.Split(*connList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < o.threads {
			fmt.Fprintf(os.Stderr, "bench-ingest: -conns: %q is not a number of connections >= -threads\n", f)
			os.Exit(2)
		}
		o.conns = append(o.conns, n)
	}
	os.Exit(run(o))
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench-ingest: "+format+"\n", args...)
}

// run runs the sections: server events and browser batches against the bare baseline, and
// freshness.
func run(o options) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if _, err := exec.LookPath(o.wrk); err != nil {
		progress("wrk not found (apt-get install wrk; `make bench-ingest` installs it): %v", err)
		return 1
	}
	if (o.command != "all" && o.command != "ingest") || o.freshRate < 1 || o.batch < 1 || o.threads < 1 || o.runs < 1 {
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
	ld := load{bin: o.wrk, threads: o.threads, script: script}

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
			progress("cleanup: %v; cleaning Kafka and Redis up again", err)
			if err := st.cleanUpAgain(); err != nil {
				progress("cleanup: %v", err)
			}
		}
	}()
	progress("starting revtrack %s in-process (database %s, topic suffix %s)", o.command, st.CH.Database, st.Suffix)
	// The run's dedup keys expire within the hour even if the clean-up at the end does not finish
	// (it has a minute for the database, the topics and some 10⁵ keys on a loaded machine).
	if err := st.Start(ctx, o.command, append([]string{"--ingest-dedup-ttl", "1h"}, strings.Fields(o.revtrackArgs)...)); err != nil {
		progress("%v", err)
		return 1
	}
	if err := st.Seed(ctx); err != nil {
		progress("%v", err)
		return 1
	}

	var problems []string
	accepted := map[string]int64{} // by mode: what the edge answered 202, warm-ups included
	profiled := false
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

	fl, err := startFloor(ctx, st)
	if err != nil {
		progress("floor: %v", err)
		return 1
	}
	defer fl.stop()

	occurred := time.Now().UTC().Format(time.RFC3339)
	args := wrkArgs{private: st.Private, public: st.Source.PublicKey, slug: benchkit.TeamSlug, occurred: occurred, origin: benchkit.Origin}
	// measure runs one target once: a warm-up, then the measured run with the CPU of this process
	// (revtrack in-process, the floor, the bare handler), Kafka and Redis sampled around it.
	measure := func(t target, mode, tag string, batch, conns int) (sample, error) {
		a := args
		a.mode, a.batch = mode, batch
		ld := ld
		ld.connections = conns
		if pipeline && o.settle > 0 {
			took, err := st.settle(ctx, o.settle)
			if err != nil {
				return sample{}, err
			}
			progress("%s @%d: the earlier rounds' events landed and merged in %s", t.name, conns, took.Round(100*time.Millisecond))
		}
		progress("%s @%d: warm-up %s, then %s (wrk -t%d -c%d)", t.name, conns, o.warmup, o.duration, o.threads, conns)
		a.tag = tag + "w-" + st.ID
		warm, err := ld.run(ctx, t.url, o.warmup, a)
		if err != nil {
			return sample{}, err
		}
		a.tag = tag + "-" + st.ID
		pSum, pCount := st.metric("revtrack_ingest_produce_seconds_sum"), st.metric("revtrack_ingest_produce_seconds_count")
		aSum, aCount := st.metric("revtrack_ingest_admission_batch_size_sum"), st.metric("revtrack_ingest_admission_batch_size_count")
		w0, wr0 := st.metric("revtrack_processor_batch_write_seconds_count"), st.metric("revtrack_processor_records_written_total")
		b0, r0 := t.batches()
		if t.edge && mode == "server" && o.cpuprofile != "" && !profiled {
			profiled = true
			f, err := os.Create(o.cpuprofile)
			if err != nil {
				return sample{}, err
			}
			defer f.Close()
			if err := pprof.StartCPUProfile(f); err != nil {
				return sample{}, err
			}
			defer pprof.StopCPUProfile()
		}
		before := benchkit.SampleCPU(o.stack)
		res, err := ld.run(ctx, t.url, o.duration, a)
		after := benchkit.SampleCPU(o.stack)
		if err != nil {
			return sample{}, err
		}
		b1, r1 := t.batches()
		w1, wr1 := st.metric("revtrack_processor_batch_write_seconds_count"), st.metric("revtrack_processor_records_written_total")
		smp := sample{writes: w1 - w0, written: wr1 - wr0, res: res, batch: batch, cpu: benchkit.CPUBetween(before, after, res.WrkCPU)}
		if b1 > b0 {
			smp.perBatch = (r1 - r0) / (b1 - b0)
		}
		if t.edge {
			if n := st.metric("revtrack_ingest_produce_seconds_count") - pCount; n > 0 {
				smp.produceMean = time.Duration((st.metric("revtrack_ingest_produce_seconds_sum") - pSum) / n * float64(time.Second))
			}
			if n := st.metric("revtrack_ingest_admission_batch_size_count") - aCount; n > 0 {
				smp.admitPerTrip = (st.metric("revtrack_ingest_admission_batch_size_sum") - aSum) / n
			}
		}
		if o.verbose {
			fmt.Fprintf(os.Stderr, "--- %s @%d ---\n%s\n", t.name, conns, res.Raw)
		}
		for _, x := range []wrkResult{warm, res} {
			if x.Other > 0 || x.SocketErrors > 0 {
				problems = append(problems, fmt.Sprintf("%s @%d: %d answers other than 202 (last %d), %d socket errors",
					t.name, conns, x.Other, x.LastOther, x.SocketErrors))
			}
		}
		if t.edge {
			accepted[mode] += warm.Accepted + res.Accepted
		}
		return smp, nil
	}

	// 2. Server events, then browser batches: at each concurrency, o.runs rounds of bare, floor and
	// edge back to back, so that the machine's load (shared with other work) falls on all three alike
	// and the ratios of one round are what count.
	srvTopic, colTopic := schemas.TopicServerEvents+st.Suffix, schemas.TopicBrowserEvents+st.Suffix
	sections := []struct {
		mode, path, tag, topic string
		batch                  int
	}{{"server", "/api/tracking/server-events", "s", srvTopic, 1}, {"browser", "/v1/collect", "b", colTopic, o.batch}}
	var results []result
	for _, sec := range sections {
		targets := []target{
			{name: "bare net/http", url: bareURL + sec.path, batches: func() (float64, float64) { return 0, 0 }},
			{name: "floor", url: fl.url + sec.path, batches: func() (float64, float64) {
				return float64(fl.counts.batches.Load()), float64(fl.counts.records.Load())
			}},
			{name: "edge", url: st.Revtrack.BaseURL + sec.path, edge: true, batches: func() (float64, float64) {
				return st.topicMetric("produce_batches_total", sec.topic), st.topicMetric("produce_records_total", sec.topic)
			}},
		}
		for _, conns := range o.conns {
			res := result{mode: sec.mode, batch: sec.batch, conns: conns, samples: make([][]sample, len(targets))}
			for t := range targets {
				res.names = append(res.names, targets[t].name)
			}
			for round := range o.runs {
				for t, tg := range targets {
					smp, err := measure(tg, sec.mode, fmt.Sprintf("%s%d%d%d", sec.tag, conns, round, t), sec.batch, conns)
					if err != nil {
						progress("%v", err)
						return 1
					}
					res.samples[t] = append(res.samples[t], smp)
				}
			}
			results = append(results, res)
		}
	}
	// Every event the edge accepted must land; waiting also tells how far the pipeline lags.
	srvDrain := drain{want: uint64(prime.Acked+fresh.Acked) + uint64(accepted["server"])}
	colDrain := drain{want: uint64(accepted["browser"]) * uint64(o.batch)}
	if pipeline {
		for _, d := range []struct {
			table string
			dr    *drain
		}{{"server_events", &srvDrain}, {"browser_events", &colDrain}} {
			if d.dr.took, d.dr.landed, err = st.waitLanded(ctx, d.table, d.dr.want, o.landTimeout); err != nil {
				problems = append(problems, err.Error())
			}
			progress("%s holds %d events (the edge accepted %d; the floor's land too), %s after the load ended", d.table,
				d.dr.landed, d.dr.want, d.dr.took.Round(time.Millisecond))
		}
	}

	sb := measureScript(st.Revtrack.BaseURL)
	missed := report(os.Stdout, o, mach, started, results, sb, fresh, srvDrain, colDrain, problems)
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
