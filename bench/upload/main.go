// Command upload is the ad-upload queue benchmark (`make bench-upload`). It is not a test: it
// measures and prints Markdown tables (docs/BENCHMARKS.md, "Ad-upload queue").
//
// It measures the path of docs/ADS_UPLOAD.md with its real parts, each built in this process:
//
//   - the ingest edge: `revtrack ingest` in a benchkit.Sandbox of the test stack (its own database,
//     topic suffix, consumer groups and Redis prefix, removed at the end);
//   - the processors (processors.New: every consumer, the upload matcher `upload-match` among them);
//   - the uploader (uploader.New: queue consumer, dispatcher, diagnostics poller), one instance per
//     measured pass so that each pass has its own dispatch interval;
//   - the connection and the mappings, created through uploader.NewSetup against the fake Google
//     (devtools/googlefake) served on a loopback port, as a user would through the admin API.
//
// `revtrack ingest`, not `revtrack all`, so that no second uploader (the one `all` runs) consumes the
// same jobs. Passes, in this order: the baseline (the Google client alone against the fake), latency
// at each dispatch interval, throughput (Validation only) at each interval, then live throughput.
//
// It needs the test stack (STACK_NAME=test deploy/local/stack up); the REVTRACK_KAFKA_BROKERS,
// REVTRACK_CLICKHOUSE_ADDR and REVTRACK_REDIS_ADDR variables locate it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/revtrack/revtrack/bench/internal/benchkit"
)

// options are the benchmark's flags: where revtrack runs, and the passes' settings.
type options struct {
	stack, revtrackArgs string
	up                  uploadOptions
}

func main() {
	var o options
	flag.StringVar(&o.stack, "stack-dir", ".stack/test", "the test stack's state directory, for the CPU use of its services (optional)")
	flag.StringVar(&o.revtrackArgs, "revtrack-args", "", "extra flags of revtrack ingest, space-separated (e.g. --kafka-linger=1ms)")
	registerUploadFlags(flag.CommandLine, &o.up)
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, o)
	stop()
	os.Exit(code)
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench-upload: "+format+"\n", args...)
}

// uploadOptions are the settings of the passes.
type uploadOptions struct {
	events, liveEvents, latencyEvents, latencyRate int
	batch, liveBatch                               int
	baselineRequests, baselineSingles              int
	intervals                                      durationList
	liveInterval, poll                             time.Duration
}

func registerUploadFlags(fs *flag.FlagSet, u *uploadOptions) {
	u.intervals = durationList{5 * time.Second, 200 * time.Millisecond}
	fs.IntVar(&u.events, "upload-events", 20000, "server events of each Validation only throughput pass")
	fs.IntVar(&u.liveEvents, "upload-live-events", 500, "server events of the live throughput pass")
	fs.IntVar(&u.latencyEvents, "upload-latency-events", 200, "server events (one per request, through the edge) of each latency pass")
	fs.IntVar(&u.latencyRate, "upload-latency-rate", 10, "server events per second during a latency pass")
	fs.IntVar(&u.batch, "upload-batch-size", 2000, "events per Validation only request (the uploader's --ads-batch-size)")
	fs.IntVar(&u.liveBatch, "upload-live-batch-size", 1, "events per live request (the uploader's --ads-live-batch-size)")
	fs.IntVar(&u.baselineRequests, "upload-baseline-requests", 20, "requests of upload-batch-size events in the baseline")
	fs.IntVar(&u.baselineSingles, "upload-baseline-single", 500, "one-event requests in the baseline")
	fs.Var(&u.intervals, "upload-intervals", "dispatch intervals (--ads-dispatch-interval) of the latency and Validation only throughput passes, comma-separated")
	fs.DurationVar(&u.liveInterval, "upload-live-interval", 200*time.Millisecond, "dispatch interval of the live throughput pass")
	fs.DurationVar(&u.poll, "upload-poll", 50*time.Millisecond, "ClickHouse poll interval of the latency passes")
}

func (u uploadOptions) validate() error {
	var errs []error
	if u.events < 1 || u.liveEvents < 1 || u.latencyEvents < 1 || u.latencyRate < 1 {
		errs = append(errs, errors.New("upload-events, upload-live-events, upload-latency-events and upload-latency-rate must be positive"))
	}
	if u.batch < 1 || u.batch > 2000 || u.liveBatch < 1 || u.liveBatch > u.batch {
		errs = append(errs, errors.New("upload-batch-size must be 1..2000 and upload-live-batch-size 1..upload-batch-size"))
	}
	if u.baselineRequests < 1 || u.baselineSingles < 1 {
		errs = append(errs, errors.New("upload-baseline-requests and upload-baseline-single must be positive"))
	}
	if len(u.intervals) == 0 || slices.Min(u.intervals) < 100*time.Millisecond || u.liveInterval < 100*time.Millisecond {
		errs = append(errs, errors.New("dispatch intervals must be at least 100ms (the uploader's minimum)"))
	}
	if u.poll <= 0 {
		errs = append(errs, errors.New("upload-poll must be positive"))
	}
	return errors.Join(errs...)
}

// durationList is a comma-separated list of durations.
type durationList []time.Duration

func (d *durationList) String() string {
	parts := make([]string, len(*d))
	for i, v := range *d {
		parts[i] = v.String()
	}
	return strings.Join(parts, ",")
}

func (d *durationList) Set(s string) error {
	var out durationList
	for p := range strings.SplitSeq(s, ",") {
		v, err := time.ParseDuration(strings.TrimSpace(p))
		if err != nil {
			return err
		}
		out = append(out, v)
	}
	*d = out
	return nil
}

// uploadResults is everything the run measured, for the report.
type uploadResults struct {
	started           time.Time
	host              benchkit.Host
	loadAvg           string // at the start
	baseBatch, single baselineResult
	latency           []latencyResult
	throughput        []throughputResult
	live              throughputResult
	problems          []string
}

func run(ctx context.Context, o options) int {
	u := o.up
	if err := u.validate(); err != nil {
		progress("invalid flags: %v", err)
		return 2
	}
	res := uploadResults{started: time.Now(), host: benchkit.DescribeHost(), loadAvg: benchkit.LoadAvg()}
	e := &uploadEnv{stackDir: o.stack}
	defer func() {
		progress("cleaning up (uploader, processors, fake Google, revtrack ingest, database, topics, Redis keys)")
		if err := e.close(); err != nil {
			progress("cleanup: %v", err)
		}
	}()
	progress("starting revtrack ingest, the processors and the fake Google in-process")
	if err := e.open(ctx, strings.Fields(o.revtrackArgs)); err != nil {
		progress("%v", err)
		return 1
	}
	progress("database %s, topic suffix %s, Redis prefix %s", e.st.CH.Database, e.st.Suffix, e.st.Redis.KeyPrefix)
	progress("workspace connected; mappings paid (Validation only) %s and trial_converted (live) %s",
		e.validation.MappingID, e.live.MappingID)

	var err error
	progress("baseline, %d requests of %d events then %d requests of 1 event through the Google client", u.baselineRequests, u.batch, u.baselineSingles)
	if res.baseBatch, err = e.baseline(ctx, "base-batch", u.baselineRequests, u.batch, true); err != nil {
		progress("baseline: %v", err)
		return 1
	}
	if res.single, err = e.baseline(ctx, "base-single", u.baselineSingles, 1, false); err != nil {
		progress("baseline: %v", err)
		return 1
	}

	pass := 0
	tag := func() string { pass++; return fmt.Sprintf("p%d", pass) }
	for _, iv := range u.intervals {
		progress("latency, %d events through the edge at %d/s, dispatch every %s", u.latencyEvents, u.latencyRate, iv)
		r, err := e.latencyPass(ctx, tag(), iv, u)
		if err != nil {
			progress("latency: %v\n%s", err, e.logs())
			return 1
		}
		res.latency = append(res.latency, r)
		res.problems = append(res.problems, r.problems()...)
	}
	for _, iv := range u.intervals {
		progress("throughput, %d events, Validation only, dispatch every %s", u.events, iv)
		r, err := e.throughputPass(ctx, tag(), iv, u, e.validation, u.events)
		if err != nil {
			progress("throughput: %v\n%s", err, e.logs())
			return 1
		}
		res.throughput = append(res.throughput, r)
		res.problems = append(res.problems, r.problems()...)
	}
	progress("throughput, %d events, live, %d per request, dispatch every %s", u.liveEvents, u.liveBatch, u.liveInterval)
	if res.live, err = e.throughputPass(ctx, tag(), u.liveInterval, u, e.live, u.liveEvents); err != nil {
		progress("live throughput: %v\n%s", err, e.logs())
		return 1
	}
	res.problems = append(res.problems, res.live.problems()...)

	reportUpload(os.Stdout, o, res)
	if len(res.problems) > 0 {
		return 1
	}
	return 0
}
