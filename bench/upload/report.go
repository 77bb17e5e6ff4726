package main

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"github.com/revtrack/revtrack/bench/internal/benchkit"
)

// reportUpload prints the results as Markdown, in the form docs/BENCHMARKS.md takes.
func reportUpload(w io.Writer, o options, r uploadResults) {
	u, m := o.up, r.host
	fmt.Fprintf(w, "\n## Ad-upload queue benchmark, %s\n\n", r.started.UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(w, "Machine: %d CPUs, %s, %.1f GiB RAM, Linux %s, %s; load average at start %s, at end %s.\n",
		m.CPUs, m.Model, m.MemGiB, m.Kernel, m.Go, r.loadAvg, benchkit.LoadAvg())
	fmt.Fprintf(w, "In this process: `revtrack ingest` (the edge), the processors (every consumer, `upload-match` among them), "+
		"the uploader (one instance per pass; default settings except the dispatch interval, --ads-batch-size %d, "+
		"--ads-live-batch-size %d) and the fake Google on a loopback port. paid is mapped with Validation only, "+
		"trial_converted live; every event's acquisition captured a gclid.\n\n", u.batch, u.liveBatch)

	fmt.Fprintln(w, "### Throughput")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| Pass | events | events:ingest requests | time | rows/s | / baseline |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|")
	b, s := r.baseBatch, r.single
	fmt.Fprintf(w, "| baseline: Google client alone, %s-event requests, validateOnly | %s | %d | %s | %s events/s (%s req/s) | 1.00× |\n",
		benchkit.Num(float64(b.PerRequest)), benchkit.Num(float64(b.Requests*b.PerRequest)), b.Requests, dur(b.Took), benchkit.Num(b.EventsPerSec()), dec(b.RequestsPerSec()))
	for _, t := range r.throughput {
		fmt.Fprintf(w, "| queue, %s | %s | %d | %s | %s | %s |\n", t.name(), benchkit.Num(float64(t.Events)), t.Requests, dur(t.Done),
			benchkit.Num(t.RowsPerSec()), ratio(t.RowsPerSec(), b.EventsPerSec()))
	}
	fmt.Fprintf(w, "| baseline: Google client alone, 1-event live requests | %s | %d | %s | %s events/s (%s req/s) | 1.00× |\n",
		benchkit.Num(float64(s.Requests)), s.Requests, dur(s.Took), benchkit.Num(s.EventsPerSec()), dec(s.RequestsPerSec()))
	l := r.live
	fmt.Fprintf(w, "| queue, %s, %d event per request | %s | %d | %s | %s | %s |\n", l.name(), u.liveBatch, benchkit.Num(float64(l.Events)),
		l.Requests, dur(l.Done), dec(l.RowsPerSec()), ratio(l.RowsPerSec(), s.EventsPerSec()))

	fmt.Fprintln(w, "\nStages of each queue pass, from the first produce (events produced to the server-events topic at once):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| Pass | all produced | all jobs matched | all rows filed | all rows final | mean events:ingest request | CPU, cores of 2 |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---|")
	for _, t := range append(r.throughput[:len(r.throughput):len(r.throughput)], r.live) {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s (%s) | %s | %s |\n", t.name(), dur(t.Produced), dur(t.Matched), dur(t.Filed),
			dur(t.Done), t.Final, dur(t.ReqMean), cpuShort(t.CPU))
	}

	fmt.Fprintln(w, "\n### Latency: verified server event (2xx at the edge) → row validated")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "%d `paid` events per pass, one per request through the edge at %d/s, the queue polled every %s "+
		"(times are upper bounds by one poll).\n\n", u.latencyEvents, u.latencyRate, u.poll)
	fmt.Fprintln(w, "| Dispatch interval | validated | → row filed p50 / p99 | → request at the fake p50 / p99 | → validated p50 | p99 | max |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|")
	for _, lr := range r.latency {
		fmt.Fprintf(w, "| %s | %d of %d | %s / %s | %s / %s | %s | %s | %s |\n", lr.Interval, lr.Validated, lr.Events,
			pct(lr.Filed, 50), pct(lr.Filed, 99), pct(lr.AtFake, 50), pct(lr.AtFake, 99),
			pct(lr.Done, 50), pct(lr.Done, 99), pct(lr.Done, 100))
	}

	fmt.Fprintln(w, "\nDetails:")
	for _, lr := range r.latency {
		fmt.Fprintf(w, "- latency, dispatch every %s: edge answer p50 %s, p99 %s; %d events:ingest requests carried the events "+
			"(up to %d per request); CPU %s; clicks seeded in %s; matcher late-click waits %.0f.\n", lr.Interval,
			pct(lr.Post, 50), pct(lr.Post, 99), lr.Requests, lr.MaxPerReq, cpuShort(lr.CPU), dur(lr.Seeded), lr.MatchWaited)
	}
	for _, t := range append(r.throughput[:len(r.throughput):len(r.throughput)], r.live) {
		fmt.Fprintf(w, "- throughput, %s: %d events:ingest requests carried %s events; uploader request outcomes %s; "+
			"upload_queue held up to %d active parts; %s clicks seeded (through Kafka and the sessionizer) in %s; matcher late-click waits %.0f.\n",
			t.name(), t.Requests, benchkit.Num(float64(t.RequestEvents)), outcomes(t.Outcomes), t.MaxParts, benchkit.Num(float64(t.Events)), dur(t.Seeded), t.MatchWaited)
	}
	fmt.Fprintf(w, "- baseline request time: %s-event requests p50 %s, p99 %s; 1-event requests p50 %s, p99 %s.\n",
		benchkit.Num(float64(b.PerRequest)), pct(b.Lat, 50), pct(b.Lat, 99), pct(s.Lat, 50), pct(s.Lat, 99))
	for _, p := range r.problems {
		fmt.Fprintf(w, "- PROBLEM: %s\n", p)
	}
}

// pct prints the p-th percentile of sorted durations as dur does.
func pct(sorted []time.Duration, p float64) string { return dur(benchkit.Percentile(sorted, p)) }

// dur prints a duration in the unit a reader compares: milliseconds below a second, else seconds.
func dur(d time.Duration) string {
	switch {
	case d <= 0:
		return "–"
	case d < time.Second:
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

// dec prints a rate with one decimal below 100, as an integer with separators above.
func dec(f float64) string {
	if f < 100 {
		return fmt.Sprintf("%.1f", f)
	}
	return benchkit.Num(f)
}

func ratio(a, b float64) string {
	if b <= 0 || a <= 0 {
		return "–"
	}
	if a/b < 0.1 {
		return fmt.Sprintf("%.3f×", a/b)
	}
	return fmt.Sprintf("%.2f×", a/b)
}

// cpuShort is where the CPU went during a pass, in cores: this process (edge, processors,
// uploader, fake Google, the polls), the stack's services, and the whole machine.
func cpuShort(u benchkit.CPUUse) string {
	s := fmt.Sprintf("process %.2f", u.Self)
	for _, k := range []string{"kafka", "clickhouse", "redis"} {
		if v, ok := u.Services[k]; ok {
			s += fmt.Sprintf(", %s %.2f", k, v)
		}
	}
	return s + fmt.Sprintf("; machine %.2f of %d", u.Machine, runtime.NumCPU())
}

func outcomes(m map[string]float64) string {
	var parts []string
	for _, k := range []string{statusValidated, statusAccepted, "transient", "quota", "permanent", "unauthenticated"} {
		if v := m[k]; v > 0 {
			parts = append(parts, fmt.Sprintf("%s %.0f", k, v))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
