package main

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
)

// report is one run's figures, rendered as Markdown (docs/BENCHMARKS.md, "Faults").
type report struct {
	Started   time.Time
	Opts      options
	Machine   string
	Source    string // the code measured (describeSource)
	Faults    []faultResult
	Malformed []mresult
	Tables    []tableCount
	// UnackedLanded is, per kind, the events never acknowledged but stored anyway.
	UnackedLanded map[string]int
	DeadLetters   map[string][]string
	Events        []sentEvent
	Requests      []request
	Skipped       int64
	Drain         time.Duration
	Duration      time.Duration
}

type check struct {
	ok   bool
	what string
}

func (r report) checks() []check {
	var missing, twice, wrong int
	for _, t := range r.Tables {
		missing += t.Missing
		twice += t.Twice
		wrong += t.Wrong
	}
	over, badShape := 0, 0
	var slowest time.Duration
	for _, q := range r.Requests {
		if q.Abandoned {
			continue
		}
		if q.Duration > r.Opts.bound {
			over++
		}
		if q.BadShape {
			badShape++
		}
		slowest = max(slowest, q.Duration)
	}
	bad := 0
	for _, m := range r.Malformed {
		if m.Problem != "" {
			bad++
		}
	}
	unrecovered := 0
	for _, f := range r.Faults {
		if f.Err != nil {
			unrecovered++
		}
	}
	return []check{
		{missing == 0, fmt.Sprintf("acknowledged events missing from a table they belong to: %d", missing)},
		{twice == 0, fmt.Sprintf("events stored (or counted) twice, as readers see them: %d", twice)},
		{wrong == 0, fmt.Sprintf("acknowledged events stored with another time, browser or click than sent: %d", wrong)},
		{over == 0, fmt.Sprintf("ingest requests answered after the %s bound: %d (slowest %s)", r.Opts.bound, over, round(slowest))},
		{badShape == 0, fmt.Sprintf("refusals under load that are not a JSON {error, message}: %d", badShape)},
		{bad == 0, fmt.Sprintf("malformed-input cases with a 5xx, a refusal not shaped {error, message}, invalid input accepted or a late answer: %d of %d", bad, len(r.Malformed))},
		{unrecovered == 0 && len(r.Faults) > 0, fmt.Sprintf("faults not run or not recovered within %s: %d of %d", r.Opts.recoverCap, unrecovered, len(r.Faults))},
	}
}

func (r report) passed() bool {
	for _, c := range r.checks() {
		if !c.ok {
			return false
		}
	}
	return true
}

func (r report) render() string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	o := r.Opts
	p("# Fault suite, %s", r.Started.UTC().Format("2006-01-02 15:04 UTC"))
	p("")
	p("%s. Whole run %s (drain after the load: %s).", r.Machine, round(r.Duration), round(r.Drain))
	p("Code: %s, %s.", r.Opts.bin, r.Source)
	p("Load: %g server events/s and %g browser batches/s of %d events; %.0f%% of acknowledged events resent, %.0f%% of server events sent twice at once, %.0f%% abandoned by the client on their first send; at most %d attempts per event; %d sends skipped (client saturated). Bound on an ingest answer: %s. Killed services stay down %s.",
		o.load.ServerRate, o.load.BrowserRate, o.load.BatchEvents, 100*o.load.Resend, 100*o.load.Concurrent, 100*o.load.Abandon, o.load.Attempts, r.Skipped, o.bound, o.hold)
	p("")
	p("## Checks")
	p("")
	for _, c := range r.checks() {
		mark := "PASS"
		if !c.ok {
			mark = "FAIL"
		}
		p("- %s %s", mark, c.what)
	}
	p("")
	r.renderFaults(p)
	r.renderTables(p)
	r.renderRequests(p)
	r.renderMalformed(p)
	if len(r.DeadLetters) > 0 {
		p("## Dead letters")
		p("")
		for _, k := range sortedKeys(r.DeadLetters) {
			ids := r.DeadLetters[k]
			p("- %s: %d (%s)", k, len(ids), strings.Join(ids[:min(3, len(ids))], ", "))
		}
		p("")
	}
	return b.String()
}

func (r report) renderFaults(p func(string, ...any)) {
	p("## Faults")
	p("")
	p("Down: from the fault until the target answered again (a component's /readyz, a service's probe). Recovered: until the edge acknowledged again and the first event acknowledged after the return, with every event acknowledged from 5 s before the fault until then, was in server_events, funnel_events and browser_events (query: and the reporting API answered).")
	p("")
	p("| Fault | Down | Recovered | Edge without a 2xx | Requests | 2xx | 5xx | No answer | Slowest | Over bound | /readyz not 200 |")
	p("|---|---|---|---|---|---|---|---|---|---|---|")
	for _, f := range r.Faults {
		rec := round(f.Recover).String()
		if f.Err != nil {
			rec = "**" + f.Err.Error() + "**"
		}
		var nr []string
		for _, k := range sortedKeys(f.NotReady) {
			if d := f.NotReady[k]; d >= 500*time.Millisecond {
				nr = append(nr, fmt.Sprintf("%s %s", k, d.Round(time.Second)))
			}
		}
		p("| %s | %s | %s | %s | %d | %d | %d | %d | %s | %d | %s |", f.Name, round(f.Down), rec, round(f.EdgeGap), f.Requests, f.OK,
			f.Unavailable, f.Transport, round(f.MaxLatency), f.OverBound, orDash(strings.Join(nr, ", ")))
	}
	p("")
}

func (r report) renderTables(p func(string, ...any)) {
	counts := map[string]int{}
	for _, e := range r.Events {
		k := e.Kind + " " + e.Origin
		counts[k+" sent"]++
		if !e.AckedAt.IsZero() {
			counts[k+" acknowledged"]++
		}
	}
	p("## Events")
	p("")
	p("Server events: %d sent, %d acknowledged; browser events: %d sent, %d acknowledged. Not acknowledged but landed anyway (allowed: a 503'd or timed-out send may have been written): %d server, %d browser. Malformed-input events with odd times acknowledged: %d server, %d browser.",
		counts["server load sent"], counts["server load acknowledged"], counts["browser load sent"], counts["browser load acknowledged"],
		r.UnackedLanded[kindServer], r.UnackedLanded[kindBrowser],
		counts["server malformed acknowledged"], counts["browser malformed acknowledged"])
	p("")
	p("| Table | Counts | Expected | Missing | Stored twice | Stored wrong | Rows awaiting merge |")
	p("|---|---|---|---|---|---|---|")
	for _, t := range r.Tables {
		p("| %s | %s | %d | %d | %d | %d | %d |", t.Table, t.Unit, t.Expected, t.Missing, t.Twice, t.Wrong, t.RawExtra)
	}
	p("")
	for _, t := range r.Tables {
		for _, e := range t.Examples {
			p("- %s: %s", t.Table, e)
		}
	}
	p("")
}

func (r report) renderRequests(p func(string, ...any)) {
	var ok, refused, unavailable, none, over, abandoned int
	var slow, kept []request
	for _, q := range r.Requests {
		if q.Abandoned {
			abandoned++
			continue
		}
		kept = append(kept, q)
		switch {
		case q.Status/100 == 2:
			ok++
		case q.Status == 0:
			none++
		case q.Status >= 500:
			unavailable++
		default:
			refused++
		}
		if q.Duration > r.Opts.bound {
			over++
			slow = append(slow, q)
		}
	}
	d := sortedDurations(kept)
	p("## Ingest requests")
	p("")
	p("%d requests: %d 2xx, %d 4xx, %d 5xx, %d without an answer. Latency p50 %s, p99 %s, max %s; %d over the %s bound.",
		len(kept), ok, refused, unavailable, none, pct(d, 0.5), pct(d, 0.99), pct(d, 1), over, r.Opts.bound)
	var events, inProgress, hit int
	phases := map[string]int{}
	for _, e := range r.Events {
		if e.Abandoned {
			events++
			inProgress += len(e.InProgress)
			if len(e.InProgress) > 0 {
				hit++
			}
			for _, ph := range e.InProgress {
				phases[ph]++
			}
		}
	}
	var during []string
	for _, ph := range sortedKeys(phases) {
		during = append(during, fmt.Sprintf("%s %d", ph, phases[ph]))
	}
	p("")
	p("Client gone mid-request: %d server events had their first send abandoned after 1–30 ms (%d requests, not counted above) and retried 0.5–0.75 s later; the retries were answered `503 event_in_progress` %d times, for %d of them (%s): the ID still reserved after its write should have settled (with Kafka down the write may legitimately still be pending).",
		events, abandoned, inProgress, hit, orDash(strings.Join(during, ", ")))
	p("")
	slices.SortFunc(slow, func(a, b request) int { return int(b.Duration - a.Duration) })
	for _, q := range slow[:min(10, len(slow))] {
		answer := fmt.Sprint(q.Status)
		if q.Status == 0 {
			answer = q.Err
		}
		p("- %s %s during %s: %s", q.Route, round(q.Duration), q.Phase, answer)
	}
	p("")
}

func (r report) renderMalformed(p func(string, ...any)) {
	p("## Malformed input")
	p("")
	bad := 0
	for _, m := range r.Malformed {
		if m.Problem != "" {
			bad++
		}
	}
	p("%d cases (bad JSON, oversized bodies, wrong types, bad and odd times, unknown names, wrong keys, on the ingest, query and admin edges); %d with a problem.", len(r.Malformed), bad)
	p("")
	for _, m := range r.Malformed {
		if m.Problem != "" || m.Acked > 0 {
			note := m.Problem
			if note == "" {
				note = "acknowledged, so accounted for in the tables above like any event"
			}
			p("- %s: %d, %s", m.Case, m.Status, note)
		}
	}
	p("")
}

func pct(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	i := min(len(d)-1, int(q*float64(len(d))))
	return d[i].Round(time.Millisecond)
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// describeMachine names what the figures were measured on.
func describeMachine() string {
	model, mem := "unknown CPU", ""
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var kb int64
			if _, err := fmt.Sscanf(sc.Text(), "MemTotal: %d kB", &kb); err == nil {
				mem = fmt.Sprintf(", %.0f GB RAM", float64(kb)/(1<<20))
				break
			}
		}
		f.Close()
	}
	return fmt.Sprintf("%d × %s%s, %s/%s", runtime.NumCPU(), model, mem, runtime.GOOS, runtime.GOARCH)
}
