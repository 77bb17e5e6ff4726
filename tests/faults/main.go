// Command faults is the fault suite (`make test-faults`; tests/faults/README.md). On its own local
// stack (STACK_NAME=faults) it runs revtrack's components as separate processes of bin/revtrack,
// sends a steady load of server and browser events with deliberate resends, and, one at a time,
// kills (-9) and stops (SIGTERM) each component and kills Kafka, ClickHouse and Redis, bringing each
// back. Then it counts the acknowledged events missing or stored twice in every table they belong
// to, the requests answered later than the stated bound, and the time each fault took to recover.
// It also sends malformed input: no 5xx, and every refusal a JSON {error, message}.
//
// It prints a report (docs/BENCHMARKS.md, "Faults") and exits 1 when a check fails.
package main

import (
	"context"
	"debug/buildinfo"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"
)

type options struct {
	bin, stackScript, stackName, stackDir, logDir, report, only string

	load loadConfig
	// bound is the longest an ingest request may take to be answered, whatever the broker does.
	bound                                                 time.Duration
	hold, settle, recoverCap, warmup, drain, budget, poll time.Duration
	keep, stackDown                                       bool
}

func main() {
	var o options
	flag.StringVar(&o.bin, "bin", "bin/revtrack", "the revtrack binary whose components are run")
	flag.StringVar(&o.stackScript, "stack-script", "deploy/local/stack", "the local stack script")
	flag.StringVar(&o.stackName, "stack-name", "faults", "STACK_NAME of the suite's own stack (never a shared one: its services are killed)")
	flag.StringVar(&o.stackDir, "stack-dir", ".stack/faults", "STACK_DIR of that stack")
	flag.StringVar(&o.logDir, "log-dir", "bin/faults-logs", "where each component's log (appended across restarts) and the stack's log go")
	flag.StringVar(&o.report, "report", "", "also write the report to this file")
	flag.StringVar(&o.only, "only", "", "run only the faults whose names contain one of these comma-separated words (e.g. kafka,ingest)")
	flag.Float64Var(&o.load.ServerRate, "server-rate", 8, "server events per second")
	flag.Float64Var(&o.load.BrowserRate, "browser-rate", 4, "browser batches per second")
	flag.IntVar(&o.load.BatchEvents, "batch-events", 4, "events per browser batch")
	flag.Float64Var(&o.load.Resend, "resend", 0.1, "share of acknowledged events sent again")
	flag.Float64Var(&o.load.Concurrent, "concurrent", 0.03, "share of server events sent twice at once")
	flag.Float64Var(&o.load.Abandon, "abandon", 0.03, "share of server events whose first send the client abandons mid-request")
	flag.IntVar(&o.load.Attempts, "attempts", 6, "sends per event before the client gives up")
	flag.IntVar(&o.load.MaxInFlight, "max-in-flight", 400, "events being sent at once")
	flag.DurationVar(&o.load.Timeout, "client-timeout", 70*time.Second, "the load's HTTP client timeout (above the bound: a slow answer is measured, not cut)")
	flag.DurationVar(&o.bound, "bound", 0, "the longest an ingest request may take to be answered (0: what the binary states, see statedBound)")
	flag.DurationVar(&o.hold, "hold", 5*time.Second, "how long a killed service stays down before it is brought back")
	flag.DurationVar(&o.settle, "settle", 3*time.Second, "steady load before each fault")
	flag.DurationVar(&o.recoverCap, "recover-cap", 90*time.Second, "a fault not recovered after this fails")
	flag.DurationVar(&o.warmup, "warmup", 8*time.Second, "steady load before the first fault")
	flag.DurationVar(&o.drain, "drain", 60*time.Second, "longest wait, after the load stops, for acknowledged events to land")
	flag.DurationVar(&o.budget, "budget", 8*time.Minute+30*time.Second, "the run's time budget (make test-faults has 10 minutes, builds and the stack included): faults that would not fit are reported as not run")
	flag.DurationVar(&o.poll, "poll", 500*time.Millisecond, "landing and readiness poll interval")
	flag.BoolVar(&o.keep, "keep", false, "keep the run's database, topics and keys (for a look afterwards)")
	flag.BoolVar(&o.stackDown, "stack-down", false, "stop the stack at the end (make test-faults sets it unless FAULTS_KEEP_STACK=1)")
	flag.Parse()
	os.Exit(run(o))
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "faults %s: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func run(o options) int {
	started := time.Now()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.bound == 0 {
		b, from, err := statedBound(ctx, o.bin)
		if err != nil {
			progress("%v", err)
			return 1
		}
		o.bound = b
		progress("bound on an ingest answer: %s (%s)", b, from)
	}
	s, err := setup(ctx, o)
	if s != nil {
		defer s.teardown(o.keep)
	}
	if err != nil {
		progress("setup failed: %v", err)
		return 1
	}
	rep := report{Started: started, Opts: o, Machine: describeMachine(), Source: describeSource(o.bin)}

	stopLoad := make(chan struct{})
	loadDone := make(chan struct{})
	go func() { s.load.run(ctx, stopLoad); close(loadDone) }()
	s.led.setPhase("warmup")
	sleep(ctx, o.warmup)
	if s.led.firstAckAfter(started).IsZero() {
		close(stopLoad)
		<-loadDone
		progress("the edge acknowledged nothing during the warm-up: see %s", o.logDir)
		return 1
	}

	progress("malformed input")
	s.led.setPhase("malformed")
	rep.Malformed = s.malformed.run(ctx)

	r := &runner{opts: o, stack: s.stack, stackLog: s.stackLog, comps: s.byName, led: s.led, ready: s.ready,
		queryKey: s.seeded.adminKey, deadline: started.Add(o.budget - o.drain - 30*time.Second)}
	rep.Faults = r.runFaults(ctx, selectFaults(o.only))

	progress("load stopped; waiting for acknowledged events to land")
	s.led.setPhase("drain")
	close(stopLoad)
	<-loadDone
	rep.Skipped = s.load.skipped.Load()
	rep.Drain = s.awaitLanding(ctx, o.drain)

	vctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	events := s.led.snapshot()
	if rep.Tables, rep.UnackedLanded, err = verify(vctx, s.conn, s.seeded.src.ID, events); err != nil {
		progress("final accounting failed: %v", err)
		return 1
	}
	rep.DeadLetters, err = deadLetters(vctx, s.brokers, "revtrack.dead-letters.v1"+s.names.topicSuffix)
	if err != nil {
		progress("reading dead letters: %v", err)
	}
	rep.Events = events
	rep.Requests = s.led.requestsIn("")
	rep.Duration = time.Since(started)
	text := rep.render()
	fmt.Print(text)
	if o.report != "" {
		if err := os.WriteFile(o.report, []byte(text), 0o644); err != nil {
			progress("write report: %v", err)
		}
	}
	if !rep.passed() {
		return 1
	}
	return 0
}

func selectFaults(only string) []fault {
	if only == "" {
		return allFaults
	}
	var out []fault
	for _, f := range allFaults {
		for _, w := range strings.Split(only, ",") {
			if w != "" && strings.Contains(strings.ToLower(f.Name), strings.ToLower(strings.TrimSpace(w))) {
				out = append(out, f)
				break
			}
		}
	}
	return out
}

// childEnv is the suite's environment without any REVTRACK_* variable (a shell pointed at another
// stack must not leak into a component), plus the faults stack's addresses.
func childEnv(stackEnv map[string]string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "REVTRACK_") {
			out = append(out, kv)
		}
	}
	for k, v := range stackEnv {
		out = append(out, k+"="+v)
	}
	return out
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// boundFlags state how long the edge may wait for Kafka, most specific first: the edge's own bound
// on a request (--ingest-produce-timeout), else the producer's delivery timeout, which the flag help
// of earlier versions called the bound that turns a stuck broker into a 503.
var boundFlags = []string{"ingest-produce-timeout", "kafka-delivery-timeout"}

// requestSlack is what an ingest request may take beyond its wait for Kafka: reading the body,
// the key lookup and the dedup and rate-limit round trips to Redis, on a loaded 2-core machine.
const requestSlack = time.Second

// statedBound is the bound the binary states on an ingest answer: the default of the first of
// boundFlags its --help lists, plus requestSlack.
func statedBound(ctx context.Context, bin string) (time.Duration, string, error) {
	out, err := exec.CommandContext(ctx, bin, "--help").Output()
	if err != nil {
		return 0, "", fmt.Errorf("%s --help: %w", bin, err)
	}
	d, from, err := parseBound(out)
	if err != nil {
		return 0, "", fmt.Errorf("%s --help: %w", bin, err)
	}
	return d, from, nil
}

// parseBound finds the bound in a --help text (see statedBound).
func parseBound(out []byte) (time.Duration, string, error) {
	for _, f := range boundFlags {
		m := regexp.MustCompile(`--` + f + ` duration .*\(default ([0-9a-z.]+)\)`).FindSubmatch(out)
		if m == nil {
			continue
		}
		d, err := time.ParseDuration(string(m[1]))
		if err != nil {
			return 0, "", fmt.Errorf("--%s default %q: %w", f, m[1], err)
		}
		return d + requestSlack, fmt.Sprintf("--%s %s + %s for the rest of the request", f, d, requestSlack), nil
	}
	return 0, "", fmt.Errorf("states none of --%s: pass -bound", strings.Join(boundFlags, ", --"))
}

// describeSource names the code the figures come from, as the Go toolchain stamped it into the
// binary, else as the checkout the suite runs in.
func describeSource(bin string) string {
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		// Built with -buildvcs=false (GOFLAGS here sets it): name the checkout instead.
		return "no version stamp; working tree " + describeCheckout()
	}
	out := "commit " + rev[:min(len(rev), 12)]
	if modified == "true" {
		out += " with uncommitted changes"
	}
	return out
}

func describeCheckout() string {
	commit, err := exec.Command("git", "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return "unknown (not a git checkout)"
	}
	out := "at commit " + strings.TrimSpace(string(commit))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
		out += " with uncommitted changes"
	}
	return out
}
