package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/revtrack/revtrack/bench/internal/benchkit"
)

// report is everything the run prints.
type report struct {
	started      time.Time
	mach         machine
	ds           *dataset
	opts         options
	marker       marker
	reused       bool
	settled      time.Duration
	parts        []tableParts
	plan         queryPlan
	results      []result
	queryLoadAvg string
	walkTook     time.Duration
	notes        []string
	problems     []string
}

func seconds(d time.Duration) string {
	switch {
	case d >= time.Hour:
		return fmt.Sprintf("%dh%02dm%02ds", int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60)
	case d >= time.Minute:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

func perSec(n float64, d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return benchkit.Num(n / d.Seconds())
}

func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}

// print writes the report as Markdown (a terminal reads it as tables; docs/BENCHMARKS.md takes it as
// is) and says whether a judged target was missed.
func (r *report) print(w io.Writer) bool {
	m := r.mach
	fmt.Fprintf(w, "\n## Query benchmark, %s\n\n", r.started.UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(w, "Machine: %d CPUs, %s, %.1f GiB RAM, Linux %s, %s; ClickHouse %s (one node), Kafka %s, Redis %s (bench stack); "+
		"load average at start %s, at end %s.\n", m.CPUs, m.Model, m.MemGiB, m.Kernel, m.Go, m.ClickHouse, m.Kafka, m.Redis, m.LoadAvg, benchkit.LoadAvg())
	fmt.Fprintf(w, "Data set: %s.\n", r.ds.facts.describe(r.ds.scale, r.ds.took))
	r.printLoad(w)
	if r.opts.loadOnly || len(r.results) == 0 {
		r.printProblems(w)
		return false
	}
	missed := r.printQueries(w)
	r.printProblems(w)
	return missed
}

func (r *report) printLoad(w io.Writer) {
	l := r.marker.Load
	f := r.ds.facts
	fmt.Fprintln(w, "\n### Load: fake Partner API → `revtrack admin sync run` → Kafka → land-platform-records → ClickHouse")
	fmt.Fprintln(w)
	if r.marker.LoadedAt.IsZero() {
		fmt.Fprintln(w, "No data set loaded.")
		return
	}
	if r.reused {
		fmt.Fprintf(w, "Reused (-reuse): the data set loaded on %s; the numbers below are that cold load's.\n\n",
			r.marker.LoadedAt.Format("2006-01-02 15:04 MST"))
	}
	fmt.Fprintf(w, "Sync: %s; %s during the load.\n\n", syncMode(l.Parallel), rpsText(l.PartnerRPS))
	records := float64(l.records())
	fmt.Fprintln(w, "| Step | Time | Volume | Rate |")
	fmt.Fprintln(w, "|---|---:|---:|---:|")
	fmt.Fprintf(w, "| reset the bench stack, start `revtrack all`, seed (admin commands) | %s | | |\n", seconds(l.Reset+l.Start+l.Seed))
	fmt.Fprintf(w, "| sync: every `admin sync run` returned (all pages produced to Kafka) | %s | %s pages, %s records | %s pages/s, %s records/s |\n",
		seconds(l.Sync), benchkit.Num(float64(l.Pages)), benchkit.Num(records), perSec(float64(l.Pages), l.Sync), perSec(records, l.Sync))
	fmt.Fprintf(w, "| **end to end**: sync start → every transaction and event in ClickHouse | **%s** | %s transactions + %s events | **%s transactions/s**, %s records/s |\n",
		seconds(l.Landed), benchkit.Num(float64(l.Transactions.Distinct)), benchkit.Num(float64(l.Events.Distinct)),
		perSec(float64(l.Transactions.Distinct), l.Landed), perSec(records, l.Landed))
	if l.Pages > 0 && (l.PartnerRPS <= 0 || l.PartnerRPS > realPartnerRPS) {
		// Paging is sequential per app and token, so at the real limit the sync takes pages ÷ 4
		// seconds, unless the pipeline is slower than that anyway.
		real := max(time.Duration(float64(l.Pages)/realPartnerRPS*float64(time.Second)), l.Landed)
		fmt.Fprintf(w, "| extrapolated to the real limit, %d requests/s per token (%s pages ÷ %d) | %s | | %s transactions/s, %s records/s |\n",
			realPartnerRPS, benchkit.Num(float64(l.Pages)), realPartnerRPS, seconds(real),
			perSec(float64(l.Transactions.Distinct), real), perSec(records, real))
	}
	switch {
	case l.Customers.Rows == 0:
		fmt.Fprintln(w, "| customers derived (platform_customers) | | none: not derived by the processors yet | |")
	default:
		fmt.Fprintf(w, "| customers derived (platform_customers), from the sync's start | %s | %s of %s (app, shop) | |\n",
			seconds(l.CustomersTook), benchkit.Num(float64(l.Customers.Distinct)), benchkit.Num(float64(f.CustomerKeys)))
	}
	fmt.Fprintf(w, "\nLanded: platform_transactions %s distinct of %s (%s rows inserted), platform_lifecycle_events %s distinct (app, event key) of %s "+
		"(%s rows inserted; the data set has %s events, %s of them share a key with another).",
		benchkit.Num(float64(l.Transactions.Distinct)), benchkit.Num(float64(f.Transactions)), benchkit.Num(float64(l.Transactions.Rows)),
		benchkit.Num(float64(l.Events.Distinct)), benchkit.Num(float64(f.EventKeys)), benchkit.Num(float64(l.Events.Rows)),
		benchkit.Num(float64(f.Events)), benchkit.Num(float64(f.Events-f.EventKeys)))
	if f.CustomerKeys != f.Customers {
		fmt.Fprintf(w, " The generator's truth lists %s customers for %s distinct (app, shop) pairs: %d pair(s) twice.",
			benchkit.Num(float64(f.Customers)), benchkit.Num(float64(f.CustomerKeys)), f.Customers-f.CustomerKeys)
	}
	if l.Throttled > 0 {
		fmt.Fprintf(w, " The fake answered %s requests with 429.", benchkit.Num(float64(l.Throttled)))
	}
	fmt.Fprintln(w)
	var apps []string
	over := 0
	for i, n := range f.AppTransactions {
		apps = append(apps, fmt.Sprintf("%s %s", appID(r.ds.d.Apps[i]), benchkit.Num(float64(n))))
		if n > productionRowLimit {
			over++
		}
	}
	fmt.Fprintf(w, "Transactions per app: %s. The load lifts the sync's row limit (production: %s transactions per app, newest first) "+
		"so that all of them load; with it, %d of %d apps would be truncated.\n", strings.Join(apps, ", "), benchkit.Num(productionRowLimit), over, len(apps))
	var runs []string
	for _, run := range l.Runs {
		d := time.Duration(0)
		if run.FinishedAt != nil {
			d = run.FinishedAt.Sub(run.StartedAt)
		}
		runs = append(runs, fmt.Sprintf("%s %s in %s (%s transactions, %s events)", run.AppID, run.Status, seconds(d),
			benchkit.Num(float64(run.TransactionsCount)), benchkit.Num(float64(run.EventsCount))))
	}
	if len(runs) > 0 {
		fmt.Fprintf(w, "Sync runs: %s.\n", strings.Join(runs, "; "))
	}
	r.printTracking(w)
}

func (r *report) printQueries(w io.Writer) bool {
	fmt.Fprintln(w, "\n### Query latency: `revtrack "+r.opts.queryCommand+"` over HTTP, one request at a time")
	fmt.Fprintln(w)
	rng := "the API's default range (last 30 days)"
	if r.plan.from != "" {
		rng = fmt.Sprintf("from=%s&to=%s (the data set's last 30 days)", r.plan.from, r.plan.to)
	}
	fmt.Fprintf(w, "%d warm-up rounds, then %d rounds; each round calls every target once, in this order, over one keep-alive "+
		"connection with a read key. Summary and metrics: %s. Load average after the rounds %s. ClickHouse settled for %s before "+
		"the rounds; active parts: %s.", r.opts.warm, r.opts.rounds, rng, r.queryLoadAvg, seconds(r.settled), partsText(r.parts))
	if r.plan.deepPage > 0 {
		fmt.Fprintf(w, " The cursor of page %d took %s to walk to.", r.plan.deepPage, seconds(r.walkTook))
	}
	fmt.Fprint(w, " Rows marked *kept* repeat an identical request on data that does not change, so after the first one the "+
		"server answers with the response it kept (what repeated dashboard requests get between two hourly syncs); rows marked "+
		"*computed (first request after new data)* send the same request with `Cache-Control: no-cache`, which the server "+
		"answers by computing it from the data. The summary and list goals are judged on the kept rows; the computed summary "+
		"and each computed metric against 100 ms; MCP's ratio on the computed pair; the revenue-over-time rows (series, "+
		"movements, attribution) are computed only, each judged as a ratio to the computed summary of the same rounds; the "+
		"other computed rows have no goal.")
	fmt.Fprint(w, "\n\n")

	byName := map[string]result{}
	var base *result
	for i, res := range r.results {
		byName[res.name] = res
		if res.baseline && res.available() {
			base = &r.results[i]
		}
	}
	fmt.Fprintln(w, "| Target | p50 | p99 | mean | max | answers | bytes/answer | p50 / baseline | Goal | |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---|---|")
	missed := false
	var verdicts []string
	for _, res := range r.results {
		if !res.available() {
			why := res.unavailable
			if why == "" {
				why = "FAILED: " + res.failed
				r.problems = append(r.problems, res.name+": "+res.failed)
			}
			fmt.Fprintf(w, "| %s | %s | | | | | | | %s | |\n", res.name, why, goalText(res, byName))
			continue
		}
		ratio := ""
		if base != nil && base.p(50) > 0 {
			ratio = fmt.Sprintf("%.1f×", float64(res.p(50))/float64(base.p(50)))
		}
		mark := ""
		if pass, ok := res.goal.check(res, byName); ok {
			mark = verdict(pass)
			missed = missed || !pass
			verdicts = append(verdicts, fmt.Sprintf("| %s | %s | %s | %s |", res.name, ms(res.p(50)), goalText(res, byName), mark))
		}
		answers := fmt.Sprintf("%d", len(res.lat))
		if res.errors > 0 {
			answers += fmt.Sprintf(" + %d failed", res.errors)
			r.problems = append(r.problems, fmt.Sprintf("%s: %d requests failed, last: %s", res.name, res.errors, res.lastErr))
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", res.name, ms(res.p(50)), ms(res.p(99)), ms(mean(res.lat)),
			ms(res.p(100)), answers, benchkit.Num(float64(res.meanBytes())), ratio, goalText(res, byName), mark)
	}
	if len(verdicts) > 0 {
		fmt.Fprintln(w, "\n| Target | p50 | Goal | |")
		fmt.Fprintln(w, "|---|---:|---|---|")
		for _, v := range verdicts {
			fmt.Fprintln(w, v)
		}
	}
	r.printMCPPairs(w, byName)
	for _, n := range r.notes {
		fmt.Fprintf(w, "- %s\n", n)
	}
	return missed
}

// goalText is a row's goal column: its goal, with the measured ratio for a relative one; "no goal"
// for the rows measured for information beside a judged one (the computed rows, MCP's kept row).
func goalText(res result, byName map[string]result) string {
	switch {
	case res.goal.relTo != "":
		ref, ok := byName[res.goal.relTo]
		if !ok || !ref.available() || !res.available() || len(ref.lat) == 0 || len(res.lat) == 0 || ref.p(50) <= 0 {
			return res.goal.String()
		}
		return fmt.Sprintf("%s (%.2f×)", res.goal, float64(res.p(50))/float64(ref.p(50)))
	case res.goal.set():
		return res.goal.String()
	case res.computed || res.restOf != "":
		return noGoal
	}
	return ""
}

// printMCPPairs puts each MCP row beside the REST row of the same rounds it calls into: the ratio
// of their p50s (judged on the computed pair, where the goal was set) and what MCP adds in
// milliseconds (its session, the JSON-RPC framing, the in-process call into the REST handler).
func (r *report) printMCPPairs(w io.Writer, byName map[string]result) {
	header := false
	for _, res := range r.results {
		if res.restOf == "" {
			continue
		}
		rest, ok := byName[res.restOf]
		if !ok || !res.available() || !rest.available() || len(res.lat) == 0 || len(rest.lat) == 0 {
			continue
		}
		if !header {
			fmt.Fprintln(w, "\n| MCP get_summary beside the REST summary (same rounds) | MCP p50 | REST p50 | MCP p99 | REST p99 | MCP − REST (p50) | MCP ÷ REST (p50) | Goal | |")
			fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---|---|")
			header = true
		}
		pair := "kept"
		if res.computed {
			pair = "computed (first request after new data)"
		}
		goalCol, mark := noGoal, ""
		if res.goal.relTo == res.restOf {
			goalCol = fmt.Sprintf("≤ %.1f×", res.goal.maxRatio)
			if pass, ok := res.goal.check(res, byName); ok {
				mark = verdict(pass)
			}
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %.2f× | %s | %s |\n", pair, ms(res.p(50)), ms(rest.p(50)), ms(res.p(99)),
			ms(rest.p(99)), signedMs(res.p(50)-rest.p(50)), float64(res.p(50))/float64(rest.p(50)), goalCol, mark)
	}
}

// signedMs prints a difference of durations in milliseconds with its sign.
func signedMs(d time.Duration) string {
	if d >= 0 {
		return "+" + ms(d)
	}
	return "−" + ms(-d)
}

func (r *report) printProblems(w io.Writer) {
	if len(r.problems) == 0 {
		return
	}
	fmt.Fprintln(w)
	for _, p := range r.problems {
		fmt.Fprintf(w, "- PROBLEM: %s\n", p)
	}
}

func mean(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	var s time.Duration
	for _, v := range d {
		s += v
	}
	return s / time.Duration(len(d))
}

func partsText(ps []tableParts) string {
	if len(ps) == 0 {
		return "none"
	}
	var out []string
	for _, p := range ps {
		out = append(out, fmt.Sprintf("%s %d (%s rows)", p.Table, p.Parts, benchkit.Num(float64(p.Rows))))
	}
	return strings.Join(out, ", ")
}
