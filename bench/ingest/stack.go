package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/revtrack/revtrack/bench/internal/benchkit"
	"github.com/revtrack/revtrack/internal/redisx"
)

// stack is the benchmark's sandbox on the test stack (benchkit.Sandbox: `revtrack all`, or ingest
// alone, in-process on its own database, topics, consumer groups and Redis prefix) with what the
// edge sections read from it.
type stack struct {
	*benchkit.Sandbox
}

func newStack() *stack { return &stack{benchkit.NewSandbox()} }

// countEvents is the number of distinct events of the bench source in a table.
func (s *stack) countEvents(ctx context.Context, table string) (uint64, error) {
	var n uint64
	err := s.Conn.QueryRow(ctx, "SELECT uniqExact(event_id) FROM "+table+" WHERE source_id = ?", s.Source.ID).Scan(&n)
	return n, err
}

// waitLanded waits until table holds at least want events of the bench source; it returns how long
// that took and the count it saw last.
func (s *stack) waitLanded(ctx context.Context, table string, want uint64, timeout time.Duration) (time.Duration, uint64, error) {
	start := time.Now()
	var n uint64
	for {
		var err error
		if n, err = s.countEvents(ctx, table); err != nil {
			return 0, n, err
		}
		if n >= want {
			return time.Since(start), n, nil
		}
		if time.Since(start) > timeout {
			return time.Since(start), n, fmt.Errorf("%s holds %d of %d accepted events after %s", table, n, want, timeout)
		}
		select {
		case <-ctx.Done():
			return time.Since(start), n, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// metrics is the edge's /metrics text ("" when it cannot be read).
func (s *stack) metrics() string {
	resp, err := http.Get(s.Revtrack.BaseURL + "/metrics")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	return buf.String()
}

// sumSamples sums the samples of name whose line contains every one of match.
func sumSamples(text, name string, match ...string) float64 {
	var sum float64
	for l := range strings.Lines(text) {
		if !strings.HasPrefix(l, name+" ") && !strings.HasPrefix(l, name+"{") {
			continue
		}
		ok := true
		for _, m := range match {
			ok = ok && strings.Contains(l, m)
		}
		if !ok {
			continue
		}
		var f float64
		_, _ = fmt.Sscan(strings.TrimSpace(l[strings.LastIndexByte(l, ' '):]), &f)
		sum += f
	}
	return sum
}

// metric reads one unlabelled sample (e.g. a histogram's _sum or _count) from the edge's /metrics.
func (s *stack) metric(name string) float64 { return sumSamples(s.metrics(), name) }

// topicMetric sums the edge producer's kprom counter name (e.g. produce_batches_total) over the
// series of one topic.
func (s *stack) topicMetric(name, topic string) float64 {
	return sumSamples(s.metrics(), "revtrack_kafka_producer_"+name, `topic="`+topic+`"`)
}

// settle waits until the in-process processors have consumed every record written so far and
// ClickHouse merges none of the run's parts: for a whole second no consume loop polled a record (a
// loop with a backlog polls and writes batch after batch) and no merge of the run's database ran. A
// target's round then starts on a drained pipeline, so the landing of the previous target's events,
// and the merging of the parts they became, is neither counted in its CPU per event nor competes
// with it for the machine.
func (s *stack) settle(ctx context.Context, timeout time.Duration) (time.Duration, error) {
	start := time.Now()
	const quiet = time.Second
	last, since := -1.0, time.Now()
	for {
		n := sumSamples(s.metrics(), "revtrack_processor_records_consumed_total")
		var merges uint64
		if err := s.Conn.QueryRow(ctx, "SELECT count() FROM system.merges WHERE database = ?", s.CH.Database).Scan(&merges); err != nil {
			return time.Since(start), err
		}
		busy := merges > 0 || n != last
		last = n
		if busy {
			since = time.Now()
		} else if time.Since(since) >= quiet {
			return time.Since(start) - quiet, nil
		}
		if time.Since(start) > timeout {
			return time.Since(start), fmt.Errorf("the processors still consumed, or ClickHouse still merged, after %s", timeout)
		}
		select {
		case <-ctx.Done():
			return time.Since(start), ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// cleanUpAgain repeats the clean-up of Kafka and Redis with a budget of its own. The sandbox's Stop
// gives the database, the topics and the keys one minute together, which on a loaded machine the
// database drop can take alone, leaving topics and 10⁵ keys behind on the shared test stack.
func (s *stack) cleanUpAgain() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var errs []error
	if adm, err := benchkit.Admin(s.Brokers); err != nil {
		errs = append(errs, err)
	} else {
		errs = append(errs, benchkit.DeleteGroups(ctx, adm, s.GroupPrefix), benchkit.DeleteTopics(ctx, adm, benchkit.TopicNames(s.Suffix)))
		adm.Close()
	}
	if rdb, err := redisx.Open(ctx, s.Redis); err != nil {
		errs = append(errs, err)
	} else {
		errs = append(errs, benchkit.DeleteKeys(ctx, rdb, s.Redis.KeyPrefix))
		_ = rdb.Close()
	}
	return errors.Join(errs...)
}
