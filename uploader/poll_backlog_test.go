package uploader_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/revtrack/revtrack/devtools/googlefake"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas"
	"github.com/revtrack/revtrack/uploader"
)

// TestPollBacklogInOneRound: more due diagnostics than one pass over a workspace reads (2,000
// rows) are all polled in one round, not one pass per DispatchInterval.
func TestPollBacklogInOneRound(t *testing.T) {
	t.Parallel()
	const (
		interval = 5 * time.Second
		rows     = 2001
	)
	e := newUploadEnv(t, googlefake.DefaultConfig(), func(c *uploader.Config) {
		c.DispatchInterval = interval
		// A handful of requests carry the backlog; a request's status lands on each of its rows.
		c.LiveBatchSize = c.BatchSize
	})
	e.goLive()
	jobs := make([]schemas.UploadJob, rows)
	for i := range jobs {
		jobs[i] = e.job(e.m, fmt.Sprintf("evt-poll-backlog-%d", i), "gclid", fmt.Sprintf("Cj0-poll-backlog-%d", i), e.eventTime())
	}
	e.produce(jobs...)
	e.start()
	// Every row waits for its diagnostics before the clock makes them due together.
	testenv.Eventually(t, "every row accepted", func() bool {
		return e.countRows(func(r uploader.Row) bool {
			return r.Status == uploader.StatusAccepted && r.NextAttemptAt != nil && r.DiagnosticsStatus == ""
		}) == rows
	})
	e.advance(time.Minute + time.Second)
	testenv.Eventually(t, "every row processed", func() bool {
		return e.countRows(func(r uploader.Row) bool { return r.DiagnosticsStatus == "SUCCESS" }) == rows
	})
	polls := e.calls(retrievePath)
	if len(polls) < 2 {
		t.Fatalf("%d polls for %d rows, more than one pass reads", len(polls), rows)
	}
	// Without a second pass, the rest would wait for the next round, a whole interval later.
	if span := polls[len(polls)-1].At.Sub(polls[0].At); span >= interval/2 {
		t.Fatalf("the diagnostics backlog took %s, more than one round", span)
	}
}

// countRows counts the workspace's rows for which cond holds.
func (e *uploadEnv) countRows(cond func(uploader.Row) bool) int {
	e.t.Helper()
	n := 0
	f := uploader.ListFilter{Limit: uploader.MaxListLimit}
	for {
		p, err := e.rows.List(e.ctx, e.ws, f)
		if err != nil {
			e.t.Fatal(err)
		}
		for _, r := range p.Rows {
			if cond(r) {
				n++
			}
		}
		if p.NextCursor == "" {
			return n
		}
		f.Cursor = p.NextCursor
	}
}
