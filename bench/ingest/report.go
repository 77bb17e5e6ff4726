package main

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"

	"github.com/revtrack/revtrack/bench/internal/benchkit"
)

// target is one server the load is sent to.
type target struct {
	name, url string
	edge      bool
	// batches returns the produce batches and records written so far (0, 0: does not produce).
	batches func() (batches, records float64)
}

// sample is one measured run of one target.
type sample struct {
	res         wrkResult
	batch       int
	cpu         benchkit.CPUUse
	perBatch    float64       // records per produce batch during the run
	produceMean time.Duration // edge only: mean time until Kafka acknowledged, from /metrics
	// admitPerTrip (edge only) is the mean of requests admitted per Redis round trip.
	admitPerTrip float64
	// writes and written: the processors' ClickHouse inserts and the records they wrote during the
	// measured run (what lands the target's events; ClickHouse's CPU is not in the CPU per event).
	writes, written float64
}

func (s sample) rate() float64 { return s.res.AcceptedPerSec() }

// cpuPerEvent is the CPU of this process (the target and, with `revtrack all`, the processors that
// consume what it writes), Kafka and Redis per accepted event, and the three shares.
func (s sample) cpuPerEvent() (all, self, kafka, redis time.Duration) {
	ev := s.rate() * float64(s.batch)
	if ev <= 0 {
		return 0, 0, 0, 0
	}
	per := func(cores float64) time.Duration { return time.Duration(cores / ev * float64(time.Second)) }
	self, kafka, redis = per(s.cpu.Self), per(max(s.cpu.Services["kafka"], 0)), per(max(s.cpu.Services["redis"], 0))
	return self + kafka + redis, self, kafka, redis
}

// result is one section (server events or browser batches) at one concurrency: samples[target][round].
type result struct {
	mode    string
	batch   int
	conns   int
	names   []string
	samples [][]sample
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// med is the median over rounds of f of target t.
func (r result) med(t int, f func(sample) float64) float64 {
	var xs []float64
	for _, s := range r.samples[t] {
		xs = append(xs, f(s))
	}
	return median(xs)
}

// ratio is the median over rounds of target a's f ÷ target b's f in the same round.
func (r result) ratio(a, b int, f func(sample) float64) float64 {
	var xs []float64
	for i := range r.samples[a] {
		if d := f(r.samples[b][i]); d > 0 {
			xs = append(xs, f(r.samples[a][i])/d)
		}
	}
	return median(xs)
}

func µs(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func cpuAll(s sample) float64 { a, _, _, _ := s.cpuPerEvent(); return µs(a) }

// scriptBytes is tracker.js's body size on the wire for each Accept-Encoding, and whether a
// revalidation with its ETag is answered 304.
type scriptBytes struct {
	br, gzip, identity int
	revalidates        bool
	err                error
}

func measureScript(base string) scriptBytes {
	var sb scriptBytes
	var etag string
	for _, enc := range []string{"br", "gzip", "identity"} {
		req, _ := http.NewRequest(http.MethodGet, base+"/v1/tracker.js", nil)
		// Set by hand, so the client does not decompress: the body read is the bytes on the wire.
		req.Header.Set("Accept-Encoding", enc)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			sb.err = err
			return sb
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		switch enc {
		case "br":
			sb.br = int(n)
		case "gzip":
			sb.gzip = int(n)
		default:
			sb.identity = int(n)
		}
		etag = resp.Header.Get("ETag")
	}
	req, _ := http.NewRequest(http.MethodGet, base+"/v1/tracker.js", nil)
	req.Header.Set("Accept-Encoding", "identity") // the coding whose ETag etag is
	req.Header.Set("If-None-Match", etag)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		sb.revalidates = resp.StatusCode == http.StatusNotModified
	}
	return sb
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
func report(w io.Writer, o options, m machine, started time.Time, results []result, sb scriptBytes, f freshResult,
	srv, col drain, problems []string) bool {
	fmt.Fprintf(w, "\n## Ingest benchmark, %s\n\n", started.UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(w, "Machine: %d CPUs, %s, %.1f GiB RAM, Linux %s, %s, %s; load average at start %s, at end %s.\n",
		m.CPUs, m.Model, m.MemGiB, m.Kernel, m.Go, m.Wrk, m.LoadAvg, benchkit.LoadAvg())
	edge := "`revtrack " + o.command + "` in-process, default settings"
	if o.revtrackArgs != "" {
		edge = "`revtrack " + o.command + " " + o.revtrackArgs + "` in-process"
	}
	fmt.Fprintf(w, "Edge: %s. Load: wrk -t%d at %v connections, %d interleaved rounds of bare, floor, edge, each %s measured after a %s warm-up; medians; unique event IDs per request.\n",
		edge, o.threads, o.conns, o.runs, o.duration, o.warmup)
	fmt.Fprintln(w, "CPU per event: this process (the target, and the processors consuming what it writes) + Kafka + Redis, from /proc/<pid>/stat.")
	fmt.Fprintln(w)

	fmt.Fprintln(w, "| Section | conns | Target | req/s (202) | events/s | p50 | p99 | CPU µs/event (process + Kafka + Redis) | records/batch | ÷ floor req/s | ÷ floor CPU |")
	fmt.Fprintln(w, "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	ok := true
	var goals []string
	for _, r := range results {
		floorIdx := slices.Index(r.names, "floor")
		for t, name := range r.names {
			rate := r.med(t, sample.rate)
			self := r.med(t, func(s sample) float64 { _, x, _, _ := s.cpuPerEvent(); return µs(x) })
			kaf := r.med(t, func(s sample) float64 { _, _, x, _ := s.cpuPerEvent(); return µs(x) })
			red := r.med(t, func(s sample) float64 { _, _, _, x := s.cpuPerEvent(); return µs(x) })
			perBatch, rq, rc := "", "", ""
			if pb := r.med(t, func(s sample) float64 { return s.perBatch }); pb > 0 {
				perBatch = fmt.Sprintf("%.1f", pb)
			}
			if t != floorIdx {
				rq = fmt.Sprintf("%.2f×", r.ratio(t, floorIdx, sample.rate))
				rc = fmt.Sprintf("%.2f×", r.ratio(t, floorIdx, cpuAll))
			}
			fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s | %s (%s + %s + %s) | %s | %s | %s |\n", r.mode, r.conns, name,
				benchkit.Num(rate), benchkit.Num(rate*float64(r.batch)),
				ms(time.Duration(r.med(t, func(s sample) float64 { return float64(s.res.P50) }))),
				ms(time.Duration(r.med(t, func(s sample) float64 { return float64(s.res.P99) }))),
				benchkit.Num(r.med(t, cpuAll)), benchkit.Num(self), benchkit.Num(kaf), benchkit.Num(red), perBatch, rq, rc)
		}
		e := slices.Index(r.names, "edge")
		rq, rc := r.ratio(e, floorIdx, sample.rate), r.ratio(e, floorIdx, cpuAll)
		pass := rq >= targetFloorRatio && rc <= targetFloorRatio
		ok = ok && (pass || r.mode != "server")
		goals = append(goals, fmt.Sprintf("| edge ÷ floor, %s @%d: req/s %.2f×, CPU/event %.2f× | ≥ 1.0×, ≤ 1.0× | %s |",
			r.mode, r.conns, rq, rc, verdict(pass)))
	}
	pipeline := o.command == "all"
	if pipeline {
		fmt.Fprintf(w, "\n| Freshness, %d server events/s for %s (2xx → row in ClickHouse, polled every %s) | events | p50 | p90 | p99 | max |\n|---|---:|---:|---:|---:|---:|\n| | %d | %s | %s | %s | %s |\n",
			f.Rate, f.Duration, f.Poll, f.Visible, ms(f.pct(50)), ms(f.pct(90)), ms(f.pct(99)), ms(f.pct(100)))
	}
	fmt.Fprintf(w, "\n| tracker.js on the wire | br | gzip | identity | If-None-Match → 304 |\n|---|---:|---:|---:|---|\n| bytes | %s | %s | %s | %v |\n",
		benchkit.Num(float64(sb.br)), benchkit.Num(float64(sb.gzip)), benchkit.Num(float64(sb.identity)), sb.revalidates)

	freshOK := f.Visible > 0 && f.Visible == f.Sent && f.pct(99) <= targetFreshnessP99
	scriptOK := sb.err == nil && sb.br > 0 && sb.br <= targetScriptBytes && sb.gzip > 0 && sb.gzip <= targetScriptBytes
	fmt.Fprintln(w, "\n| Target | Goal | |")
	fmt.Fprintln(w, "|---|---:|---|")
	for _, g := range goals {
		fmt.Fprintln(w, g)
	}
	fmt.Fprintf(w, "| tracker.js: br %d B, gzip %d B | ≤ %d B each | %s |\n", sb.br, sb.gzip, targetScriptBytes, verdict(scriptOK))
	if pipeline {
		fmt.Fprintf(w, "| freshness p99 %s | ≤ %s | %s |\n", ms(f.pct(99)), targetFreshnessP99, verdict(freshOK))
	} else {
		fmt.Fprintf(w, "| freshness p99: not measured (revtrack %s: no processors) | ≤ %s | |\n", o.command, targetFreshnessP99)
		freshOK = true
	}

	fmt.Fprintln(w, "\nDetails (medians over rounds):")
	for _, r := range results {
		for t, name := range r.names {
			s := r.samples[t][len(r.samples[t])/2]
			fmt.Fprintf(w, "- %s @%d %s: rounds at %v req/s; round %d: CPU in cores: %s", r.mode, r.conns, name,
				roundRates(r.samples[t]), len(r.samples[t])/2+1, s.cpu)
			if s.produceMean > 0 {
				fmt.Fprintf(w, "; mean Kafka produce (acks=all) %s", ms(s.produceMean))
			}
			if s.writes > 0 {
				fmt.Fprintf(w, "; the processors wrote %.0f records in %.0f ClickHouse inserts", s.written, s.writes)
			}
			if s.admitPerTrip > 0 {
				fmt.Fprintf(w, "; %.1f admissions per Redis round trip", s.admitPerTrip)
			}
			fmt.Fprintln(w, ".")
		}
	}
	if pipeline {
		fmt.Fprintf(w, "- freshness: %d sent, %d acknowledged, %d visible", f.Sent, f.Acked, f.Visible)
		if len(f.Failed) > 0 {
			fmt.Fprintf(w, "; failed %v", f.Failed)
		}
		fmt.Fprintln(w, ".")
		fmt.Fprintf(w, "- landed: server_events %d for %d the edge accepted (%s after the load ended), browser_events %d for %d (%s after);"+
			" the floor's events land too, and wrk does not count the answers to requests in flight when it stops.\n",
			srv.landed, srv.want, srv.took.Round(time.Millisecond), col.landed, col.want, col.took.Round(time.Millisecond))
	} else {
		fmt.Fprintf(w, "- revtrack %s: the edge without the processors, so nothing lands in ClickHouse during the runs.\n", o.command)
	}
	if sb.err != nil {
		fmt.Fprintf(w, "- tracker.js: %v\n", sb.err)
	}
	for _, p := range problems {
		fmt.Fprintf(w, "- PROBLEM: %s\n", p)
	}
	return !ok || !freshOK || !scriptOK
}

func roundRates(ss []sample) []string {
	var out []string
	for _, s := range ss {
		out = append(out, benchkit.Num(s.rate()))
	}
	return out
}
