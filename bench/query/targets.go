package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/revtrack/revtrack/bench/internal/benchkit"
)

// A target is one thing the benchmark times: a probe (one request), an optional goal, and the name
// the report shows. A goal may be relative to a target of the same run (MCP's get_summary against
// the REST summary).
type target struct {
	name  string
	probe probe
	goal  goal
	// baseline marks the target the ratios of every other row are taken against.
	baseline bool
	// computed marks a request sent with `Cache-Control: no-cache`: the server computes the response
	// from the data instead of answering with the one it kept, as for the first request after new
	// data. The other reporting rows repeat an identical request on unchanged data, so after the
	// first one they are answered with a kept response.
	computed bool
	// restOf names the REST target this (MCP) target is put beside in the report: the difference
	// of their p50s is what MCP adds.
	restOf string
}

// probe performs request i of a target (targets that go through a sample use i to pick).
type probe func(ctx context.Context, i int) outcome

// outcome is one answer.
type outcome struct {
	status int
	bytes  int64
	// missing: the endpoint does not exist (yet): the router's 404, not the API's JSON error.
	missing bool
	body    string // the start of a non-200 body, for the report
	err     error  // transport error
}

func (o outcome) ok() bool { return o.err == nil && o.status == http.StatusOK }

// goal is a target's pass mark: a p50 at most maxP50, or a p50 at most maxRatio times the p50 of
// the target named relTo, measured in the same run. The zero goal reports without judging.
type goal struct {
	maxP50   time.Duration
	relTo    string
	maxRatio float64
}

func (g goal) set() bool { return g.maxP50 > 0 || g.relTo != "" }

func (g goal) String() string {
	switch {
	case g.maxP50 > 0:
		return "p50 ≤ " + ms(g.maxP50)
	case g.relTo != "":
		return fmt.Sprintf("p50 ≤ %.1f× %s", g.maxRatio, shortName(g.relTo))
	}
	return ""
}

// noGoal is the goal column of a row measured for information only.
const noGoal = "no goal"

// check judges a result against its goal, given the results of the run by target name. ok is false
// when the goal cannot be judged (nothing measured, or the reference is not available).
func (g goal) check(r result, byName map[string]result) (pass, ok bool) {
	if !g.set() || !r.available() || len(r.lat) == 0 {
		return false, false
	}
	if g.maxP50 > 0 {
		return r.p(50) <= g.maxP50, true
	}
	ref, found := byName[g.relTo]
	if !found || !ref.available() || len(ref.lat) == 0 {
		return false, false
	}
	return float64(r.p(50)) <= g.maxRatio*float64(ref.p(50)), true
}

// api calls the reporting REST API of the running query component with a workspace key.
type api struct {
	base, key string
	client    *http.Client
}

func newAPI(base, key string) *api {
	// One connection, reused: the latency of a request, not of a TCP handshake.
	return &api{base: base, key: key, client: &http.Client{Timeout: 2 * time.Minute,
		Transport: &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true}}}
}

// get performs one GET and reads the whole body (the latency includes it); the body is kept when
// keep is set or the answer is not 200.
func (a *api) get(ctx context.Context, path string, keep bool) (outcome, []byte) {
	return a.do(ctx, path, keep, false)
}

// do is get, with `Cache-Control: no-cache` when noCache is set (the response is computed).
func (a *api) do(ctx context.Context, path string, keep, noCache bool) (outcome, []byte) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.base+path, nil)
	if err != nil {
		return outcome{err: err}, nil
	}
	req.Header.Set("Authorization", "Bearer "+a.key)
	if noCache {
		req.Header.Set("Cache-Control", "no-cache")
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return outcome{err: err}, nil
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	var n int64
	if keep || resp.StatusCode != http.StatusOK {
		n, err = buf.ReadFrom(resp.Body)
	} else {
		n, err = io.Copy(io.Discard, resp.Body)
	}
	o := outcome{status: resp.StatusCode, bytes: n, err: err}
	if resp.StatusCode != http.StatusOK {
		o.body = strings.TrimSpace(buf.String())
		if len(o.body) > 200 {
			o.body = o.body[:200] + "…"
		}
		o.missing = routeMissing(resp.StatusCode, resp.Header.Get("Content-Type"), buf.Bytes())
	}
	return o, buf.Bytes()
}

// routeMissing tells the router's "no such route" (gin answers 404 with a plain-text body) from the
// API's own 404 (a JSON {error, message} body: an unknown customer, say), and treats 405 and 501
// the same way: the endpoint is not there yet.
func routeMissing(status int, contentType string, body []byte) bool {
	switch status {
	case http.StatusMethodNotAllowed, http.StatusNotImplemented:
		return true
	case http.StatusNotFound:
		var e struct {
			Error string `json:"error"`
		}
		return !strings.HasPrefix(contentType, "application/json") || json.Unmarshal(body, &e) != nil || e.Error == ""
	}
	return false
}

// path returns a probe that GETs the path pathFor(i) gives.
func (a *api) path(pathFor func(i int) string) probe {
	return func(ctx context.Context, i int) outcome {
		o, _ := a.get(ctx, pathFor(i), false)
		return o
	}
}

// pathComputed is path with `Cache-Control: no-cache`: every request computes its response.
func (a *api) pathComputed(pathFor func(i int) string) probe {
	return func(ctx context.Context, i int) outcome {
		o, _ := a.do(ctx, pathFor(i), false, true)
		return o
	}
}

func fixed(p string) func(int) string { return func(int) string { return p } }

// cycle goes through a list of paths, one per request.
func cycle(paths []string) func(int) string {
	return func(i int) string { return paths[i%len(paths)] }
}

// metrics are the focused metric endpoints (docs/METRICS.md 3.12).
var metrics = []string{"mrr", "arr", "usage", "net-revenue-retention", "customer-concentration"}

// Targets from the issue.
const (
	targetSummaryP50 = 150 * time.Millisecond
	// targetComputedP50 is issue 17's goal for a report computed from the data (the first request
	// after new data): the computed summary and each focused metric.
	targetComputedP50 = 100 * time.Millisecond
	targetCustomerP50 = 50 * time.Millisecond
	baselineName      = "baseline: tracking events, limit 1"
)

// Row names of what goes through the result cache: kept (a repeated request on unchanged data, what
// dashboard requests between two hourly syncs get; the goals are judged there) and computed (the
// same request with `Cache-Control: no-cache`: what the first request after new data costs).
const (
	keptSuffix      = ", kept"
	computedSuffix  = ", computed (first request after new data)"
	summaryKept     = "summary" + keptSuffix
	summaryComputed = "summary" + computedSuffix
)

// shortName is a row name without the computed row's explanation, for the places that refer to it.
func shortName(name string) string {
	if base, ok := strings.CutSuffix(name, computedSuffix); ok {
		return base + ", computed"
	}
	return name
}

// queryPlan is what the targets need from the data set and the run.
type queryPlan struct {
	from, to   string // summary and metric range (YYYY-MM-DD); empty: the API's default
	lastDay    string // the data set's last whole day: where the series and movements end
	limit      int    // customers per list page
	deepCursor string // cursor of the deep list page ("" when the chain was shorter)
	deepPage   int    // its page number (1 = first page)
	byID       []sampled
	byDomain   []sampled
}

// targets lists what phase 2 measures, in the order of the report.
func (a *api) targets(p queryPlan) []target {
	rng := ""
	if p.from != "" {
		rng = "from=" + p.from + "&to=" + p.to
	}
	withRange := func(path string) string {
		if rng == "" {
			return path
		}
		return path + "?" + rng
	}
	summary := withRange("/api/v1/summary")
	ts := []target{
		{name: baselineName, probe: a.path(fixed(baselinePath(p.lastDay))), baseline: true},
		{name: summaryKept, probe: a.path(fixed(summary)), goal: goal{maxP50: targetSummaryP50}},
		{name: summaryComputed, probe: a.pathComputed(fixed(summary)), computed: true, goal: goal{maxP50: targetComputedP50}},
		// MCP's goal is set on what it adds to the work of a summary, so it is judged on the
		// computed pair; on a kept summary its own fixed cost is reported in milliseconds.
		{name: mcpSummaryName + keptSuffix, probe: a.mcpSummary(p.from, p.to, false), restOf: summaryKept},
		{name: mcpSummaryName + computedSuffix, probe: a.mcpSummary(p.from, p.to, true), computed: true, restOf: summaryComputed,
			goal: goal{relTo: summaryComputed, maxRatio: 1.2}},
	}
	for _, m := range metrics {
		ts = append(ts, target{name: "metric " + m + keptSuffix, probe: a.path(fixed(withRange("/api/v1/metrics/" + m)))})
	}
	for _, m := range metrics {
		ts = append(ts, target{name: "metric " + m + computedSuffix, probe: a.pathComputed(fixed(withRange("/api/v1/metrics/" + m))),
			computed: true, goal: goal{maxP50: targetComputedP50}})
	}
	ts = append(ts, a.revenueTargets(p, rng)...)
	list := fmt.Sprintf("/api/v1/customers?limit=%d", p.limit)
	first := fmt.Sprintf("customers, first page of %d", p.limit)
	ts = append(ts,
		target{name: first + keptSuffix, probe: a.path(fixed(list)), goal: goal{maxP50: targetCustomerP50}},
		target{name: first + computedSuffix, probe: a.pathComputed(fixed(list)), computed: true})
	if p.deepCursor != "" {
		ts = append(ts, target{name: fmt.Sprintf("customers, page %d of %d", p.deepPage, p.limit) + keptSuffix,
			probe: a.path(fixed(list + "&" + cursorParam + "=" + url.QueryEscape(p.deepCursor))), goal: goal{maxP50: targetCustomerP50}})
	}
	if len(p.byID) > 0 {
		var paths []string
		for _, s := range p.byID {
			paths = append(paths, "/api/v1/customers/"+url.PathEscape(s.ID))
		}
		ts = append(ts, target{name: fmt.Sprintf("customer detail by ID (%d sampled)", len(paths)), probe: a.path(cycle(paths)),
			goal: goal{maxP50: targetCustomerP50}})
	}
	if len(p.byDomain) > 0 {
		var paths []string
		for _, s := range p.byDomain {
			paths = append(paths, "/api/v1/customers/"+url.PathEscape(s.Domain))
		}
		ts = append(ts, target{name: fmt.Sprintf("customer detail by domain (%d sampled)", len(paths)), probe: a.path(cycle(paths)),
			goal: goal{maxP50: targetCustomerP50}})
	}
	return ts
}

// cursorParam is the query parameter carrying nextCursor back (docs/METRICS.md 5.1); -cursor-param
// overrides it for a server that names it otherwise.
var cursorParam = "cursor"

// listPage is the part of a customer list response the benchmark reads.
type listPage struct {
	Customers  []json.RawMessage `json:"customers"`
	NextCursor *string           `json:"nextCursor"`
}

// walk follows the customer list's cursor chain from the first page towards page want of limit
// customers, asking for step pages' worth (step × limit customers) per request, so that reaching a
// deep page costs a step-th of the requests; a cursor is the same whatever page size fetched it. It
// returns the cursor that fetches page `page` of limit customers (page = 1 + hops × step, at most
// want, less where the list ends first) and no cursor if the list has a single page. missing is set
// when the list endpoint does not exist.
func (a *api) walk(ctx context.Context, limit, step, want int) (cursor string, page int, missing bool, err error) {
	step = max(1, min(step, want-1))
	hops := (want - 1) / step
	page = 1
	for range hops {
		p := fmt.Sprintf("/api/v1/customers?limit=%d", limit*step)
		if cursor != "" {
			p += "&" + cursorParam + "=" + url.QueryEscape(cursor)
		}
		o, body := a.get(ctx, p, true)
		if o.err != nil {
			return cursor, page, false, o.err
		}
		if o.status != http.StatusOK {
			if cursor == "" && o.status == http.StatusNotFound {
				return "", 0, true, nil
			}
			return cursor, page, false, fmt.Errorf("GET %s: %d %s", p, o.status, o.body)
		}
		var lp listPage
		if err := json.Unmarshal(body, &lp); err != nil {
			return cursor, page, false, fmt.Errorf("GET %s: %w", p, err)
		}
		if lp.NextCursor == nil || *lp.NextCursor == "" || len(lp.Customers) < limit*step {
			break // the list ends within this request's pages
		}
		cursor, page = *lp.NextCursor, page+step
	}
	return cursor, page, false, nil
}

// result is a target's measurements.
type result struct {
	target
	lat     []time.Duration // sorted
	bytes   int64           // summed over the measured requests
	errors  int             // answers other than 200 among the measured requests
	lastErr string
	// unavailable says why the target was not measured: its endpoint answered 404 (it does not
	// exist yet, or what it reads does not); failed, that every warm-up request failed otherwise.
	unavailable, failed string
}

func (r result) available() bool { return r.unavailable == "" && r.failed == "" }

func (r result) p(q float64) time.Duration { return benchkit.Percentile(r.lat, q) }

func (r result) meanBytes() int64 {
	if len(r.lat) == 0 {
		return 0
	}
	return r.bytes / int64(len(r.lat)+r.errors)
}

// measure runs warm rounds, then rounds, of every target. A round calls each target once, in list
// order, so that every target sees the same machine over the same minutes: the baseline's ratio
// compares like with like on a shared, noisy box. A target none of whose warm-up requests answered
// 200 is not measured: not available when it answered 404 (the route is missing, or nothing it
// reads exists yet), failed otherwise.
func measure(ctx context.Context, ts []target, warm, rounds int) []result {
	res := make([]result, len(ts))
	for i, t := range ts {
		res[i].target = t
	}
	okWarm := make([]int, len(ts))
	last := make([]outcome, len(ts))
	for w := range max(warm, 1) {
		for i := range res {
			if w > 0 && okWarm[i] == 0 && last[i].status == http.StatusNotFound {
				continue // the first answer was 404: no use asking again
			}
			last[i] = res[i].probe(ctx, w)
			if last[i].ok() {
				okWarm[i]++
			}
		}
	}
	for i := range res {
		o := last[i]
		switch {
		case okWarm[i] > 0:
		case o.status == http.StatusNotFound && o.missing:
			res[i].unavailable = "not available: no such route yet (HTTP 404)"
		case o.status == http.StatusNotFound:
			res[i].unavailable = "not available: HTTP 404 " + o.body
		case o.missing:
			res[i].unavailable = fmt.Sprintf("not available: HTTP %d", o.status)
		case o.err != nil:
			res[i].failed = "every warm-up request failed: " + o.err.Error()
		default:
			res[i].failed = fmt.Sprintf("every warm-up request failed: HTTP %d %s", o.status, o.body)
		}
	}
	for r := range rounds {
		if ctx.Err() != nil {
			break
		}
		for i := range res {
			if !res[i].available() {
				continue
			}
			start := time.Now()
			o := res[i].probe(ctx, warm+r)
			took := time.Since(start)
			res[i].bytes += o.bytes
			if !o.ok() {
				res[i].errors++
				if o.err != nil {
					res[i].lastErr = o.err.Error()
				} else {
					res[i].lastErr = fmt.Sprintf("HTTP %d %s", o.status, o.body)
				}
				continue
			}
			res[i].lat = append(res[i].lat, took)
		}
		if rounds >= 10 && (r+1)%(rounds/10) == 0 {
			progress("round %d of %d", r+1, rounds)
		}
	}
	for i := range res {
		slices.Sort(res[i].lat)
	}
	return res
}
