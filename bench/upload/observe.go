package main

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// What the benchmark reads besides ClickHouse: the fake Google's record of the requests it received,
// and the metrics of the in-process services (their own registries).

const ingestPath = "/v1/events:ingest"

// fakeRequest is one events:ingest request the fake received.
type fakeRequest struct {
	Index        int // position among all requests the fake received
	At           time.Time
	Events       int
	ValidateOnly bool
}

// ingestBody is the part of an events:ingest body the benchmark reads.
type ingestBody struct {
	Events []struct {
		TransactionID string `json:"transactionId"`
	} `json:"events"`
	ValidateOnly bool `json:"validateOnly"`
}

// fakeIngests returns, for each transaction ID sent in an events:ingest request received at or after
// since, the first request that carried it.
func (e *uploadEnv) fakeIngests(since time.Time) (map[string]*fakeRequest, error) {
	out := map[string]*fakeRequest{}
	for i, rec := range e.fake.Requests() {
		if rec.Path != ingestPath || rec.At.Before(since) {
			continue
		}
		var b ingestBody
		if err := json.Unmarshal(rec.Body, &b); err != nil {
			return nil, fmt.Errorf("recorded ingest body: %w", err)
		}
		req := &fakeRequest{Index: i, At: rec.At, Events: len(b.Events), ValidateOnly: b.ValidateOnly}
		for _, ev := range b.Events {
			if _, ok := out[ev.TransactionID]; !ok {
				out[ev.TransactionID] = req
			}
		}
	}
	return out, nil
}

// ingestCount is how many events:ingest requests the fake received at or after since, and the
// events they carried.
func (e *uploadEnv) ingestCount(since time.Time) (requests, events int, err error) {
	for _, rec := range e.fake.Requests() {
		if rec.Path != ingestPath || rec.At.Before(since) {
			continue
		}
		var b ingestBody
		if err := json.Unmarshal(rec.Body, &b); err != nil {
			return 0, 0, fmt.Errorf("recorded ingest body: %w", err)
		}
		requests++
		events += len(b.Events)
	}
	return requests, events, nil
}

// counterSum is the sum of a counter over all its label values (0 when absent).
func counterSum(g prometheus.Gatherer, name string) float64 {
	var sum float64
	for _, v := range counterBy(g, name, "") {
		sum += v
	}
	return sum
}

// counterBy is a counter's value per value of label ("" sums everything under the key "").
func counterBy(g prometheus.Gatherer, name, label string) map[string]float64 {
	out := map[string]float64{}
	mfs, err := g.Gather()
	if err != nil {
		return out
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			key := ""
			for _, lp := range m.GetLabel() {
				if lp.GetName() == label {
					key = lp.GetValue()
				}
			}
			out[key] += m.GetCounter().GetValue()
		}
	}
	return out
}

// histogramTotals is a histogram's sum and count of samples (0 when absent).
func histogramTotals(g prometheus.Gatherer, name string) (sum float64, count uint64) {
	mfs, err := g.Gather()
	if err != nil {
		return 0, 0
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			sum += m.GetHistogram().GetSampleSum()
			count += m.GetHistogram().GetSampleCount()
		}
	}
	return sum, count
}

// meanBetween is the mean of the samples observed between two histogramTotals readings.
func meanBetween(sum0 float64, count0 uint64, sum1 float64, count1 uint64) time.Duration {
	if count1 <= count0 {
		return 0
	}
	return time.Duration((sum1 - sum0) / float64(count1-count0) * float64(time.Second))
}
