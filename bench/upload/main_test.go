package main

import (
	"bytes"
	"flag"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/revtrack/revtrack/devtools/googlefake"
)

func defaultUploadOptions(t *testing.T) uploadOptions {
	t.Helper()
	var u uploadOptions
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	registerUploadFlags(fs, &u)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	return u
}

func TestUploadFlags(t *testing.T) {
	u := defaultUploadOptions(t)
	if err := u.validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	if got := u.intervals.String(); got != "5s,200ms" {
		t.Fatalf("default intervals %q", got)
	}
	if err := u.intervals.Set("1s, 250ms"); err != nil || len(u.intervals) != 2 || u.intervals[1] != 250*time.Millisecond {
		t.Fatalf("set: %v %v", u.intervals, err)
	}
	if err := u.intervals.Set("1s,soon"); err == nil {
		t.Fatal("a malformed interval was accepted")
	}
	for name, breakIt := range map[string]func(*uploadOptions){
		"interval below the uploader's minimum": func(u *uploadOptions) { u.intervals = durationList{50 * time.Millisecond} },
		"live batch above the batch":            func(u *uploadOptions) { u.liveBatch = u.batch + 1 },
		"batch above the platform's limit":      func(u *uploadOptions) { u.batch = 2001 },
		"no events":                             func(u *uploadOptions) { u.events = 0 },
	} {
		bad := defaultUploadOptions(t)
		breakIt(&bad)
		if bad.validate() == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// Each pass counts its rows by a LIKE on the acquisition ID: no pass (nor its priming) may match
// another's.
func TestPassPatternsAreDisjoint(t *testing.T) {
	tags := []string{"p1", "p1w", "p10", "p10w", "p2"}
	for _, a := range tags {
		prefix := strings.TrimSuffix(acqPattern(a), "%")
		for _, b := range tags {
			if got := strings.HasPrefix(passAcq(b, 7), prefix); got != (a == b) {
				t.Errorf("pattern of %s matches %s: %v", a, b, got)
			}
		}
	}
}

// fakeIngests reads what the fake recorded: the request that first carried each transaction ID,
// only from the given time on.
func TestFakeIngests(t *testing.T) {
	f := googlefake.New(googlefake.DefaultConfig())
	srv := httptest.NewServer(f)
	defer srv.Close()
	post := func(body string) {
		resp, err := http.Post(srv.URL+ingestPath, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	post(`{"events":[{"transactionId":"old"}]}`)
	since := time.Now()
	post(`{"events":[{"transactionId":"a"},{"transactionId":"b"}],"validateOnly":true}`)
	post(`{"events":[{"transactionId":"b"}]}`)
	e := &uploadEnv{fake: f}
	got, err := e.fakeIngests(since)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["old"] != nil || got["a"] != got["b"] || got["a"].Events != 2 || !got["a"].ValidateOnly {
		t.Fatalf("%+v", got)
	}
	if n, events, err := e.ingestCount(since); err != nil || n != 2 || events != 3 {
		t.Fatalf("ingestCount = %d, %d, %v", n, events, err)
	}
}

func TestMetricReaders(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "x_total"}, []string{"outcome"})
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "x_seconds"})
	reg.MustRegister(c, h)
	c.WithLabelValues("validated").Add(3)
	c.WithLabelValues("transient").Add(1)
	if got := counterBy(reg, "x_total", "outcome"); got["validated"] != 3 || got["transient"] != 1 {
		t.Fatalf("counterBy %v", got)
	}
	if counterSum(reg, "x_total") != 4 || counterSum(reg, "absent_total") != 0 {
		t.Fatal("counterSum")
	}
	s0, n0 := histogramTotals(reg, "x_seconds")
	h.Observe(0.1)
	h.Observe(0.3)
	s1, n1 := histogramTotals(reg, "x_seconds")
	if got := meanBetween(s0, n0, s1, n1); got != 200*time.Millisecond {
		t.Fatalf("mean %v", got)
	}
	if meanBetween(s1, n1, s1, n1) != 0 {
		t.Fatal("mean of no sample")
	}
}

// The report prints every table from whatever a run measured, also passes that reached nothing.
func TestReportUpload(t *testing.T) {
	o := options{up: defaultUploadOptions(t)}
	lat := []time.Duration{time.Second, 2 * time.Second}
	r := uploadResults{started: time.Now(),
		baseBatch:  baselineResult{Requests: 2, PerRequest: 2000, Took: 100 * time.Millisecond, Lat: lat},
		single:     baselineResult{Requests: 10, PerRequest: 1, Took: 10 * time.Millisecond, Lat: lat},
		latency:    []latencyResult{{Interval: 5 * time.Second, Events: 2, Validated: 2, Filed: lat, AtFake: lat, Done: lat, Post: lat}},
		throughput: []throughputResult{{Interval: 5 * time.Second, Events: 4000, Final: statusValidated, Done: 10 * time.Second}},
		live:       throughputResult{Live: true, Interval: time.Second, Events: 10, Final: statusAccepted},
		problems:   []string{"something"},
	}
	var b bytes.Buffer
	reportUpload(&b, o, r)
	for _, want := range []string{
		"| queue, Validation only, dispatch every 5s | 4,000 | 0 | 10.00 s | 400 | 0.010× |",
		"| baseline: Google client alone, 2,000-event requests, validateOnly | 4,000 | 2 | 100.0 ms | 40,000 events/s (20.0 req/s) | 1.00× |",
		"| queue, live, dispatch every 1s, 1 event per request | 10 | 0 | – | 0.0 | – |",
		"| 5s | 2 of 2 | 1.00 s / 2.00 s | 1.00 s / 2.00 s | 1.00 s | 2.00 s | 2.00 s |",
		"- PROBLEM: something",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}
