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

// metric reads one unlabelled sample (e.g. a histogram's _sum or _count) from the edge's /metrics.
func (s *stack) metric(name string) float64 {
	resp, err := http.Get(s.Revtrack.BaseURL + "/metrics")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	for l := range strings.Lines(buf.String()) {
		if v, ok := strings.CutPrefix(l, name+" "); ok {
			var f float64
			_, _ = fmt.Sscan(strings.TrimSpace(v), &f)
			return f
		}
	}
	return 0
}

// topicMetric sums the edge producer's kprom counter name (e.g. produce_batches_total) over the
// series of one topic.
func (s *stack) topicMetric(name, topic string) float64 {
	resp, err := http.Get(s.Revtrack.BaseURL + "/metrics")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	var sum float64
	for l := range strings.Lines(buf.String()) {
		if !strings.HasPrefix(l, "revtrack_kafka_producer_"+name+"{") || !strings.Contains(l, `topic="`+topic+`"`) {
			continue
		}
		var f float64
		_, _ = fmt.Sscan(strings.TrimSpace(l[strings.LastIndexByte(l, ' '):]), &f)
		sum += f
	}
	return sum
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
