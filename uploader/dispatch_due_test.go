package uploader_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/revtrack/revtrack/devtools/googlefake"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas"
	"github.com/revtrack/revtrack/uploader"
)

// TestBacklogGoesOutInOneRound: a mapping's backlog of several full batches is sent batch after
// batch in one round, not one batch per DispatchInterval.
func TestBacklogGoesOutInOneRound(t *testing.T) {
	t.Parallel()
	const interval = 5 * time.Second
	e := newUploadEnv(t, googlefake.DefaultConfig(), func(c *uploader.Config) {
		c.BatchSize = 2
		c.DispatchInterval = interval
	})
	off, on := false, true
	if _, err := e.setup.UpdateMapping(e.ctx, setupActor, e.ws, e.m.MappingID, uploader.MappingUpdate{Enabled: &off}); err != nil {
		t.Fatal(err)
	}
	e.start()
	var jobs []schemas.UploadJob
	for i := range 7 {
		jobs = append(jobs, e.job(e.m, fmt.Sprintf("evt-backlog-%d", i), "gclid", fmt.Sprintf("Cj0-backlog-%d", i), e.eventTime()))
	}
	e.produce(jobs...)
	// Every row filed; the oldest batch (the only one a pass reads) held.
	for _, j := range jobs {
		e.waitRow(j.RowID, "filed", func(uploader.Row) bool { return true })
	}
	testenv.Eventually(t, "a batch held", func() bool {
		p, err := e.rows.List(e.ctx, e.ws, uploader.ListFilter{})
		held := 0
		for _, r := range p.Rows {
			if strings.Contains(r.Message, "mapping is disabled") {
				held++
			}
		}
		return err == nil && held == 2
	})
	if _, err := e.setup.UpdateMapping(e.ctx, setupActor, e.ws, e.m.MappingID, uploader.MappingUpdate{Enabled: &on}); err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		e.waitStatus(j.RowID, uploader.StatusValidated)
	}
	sent := e.calls(ingestPath)
	if len(sent) != 4 {
		t.Fatalf("%d ingest requests for 7 rows in batches of 2", len(sent))
	}
	if span := sent[len(sent)-1].At.Sub(sent[0].At); span >= interval {
		t.Fatalf("the backlog took %s, more than one round", span)
	}
}

// TestRowWithoutHintIsFoundByTheRescan: a row queued by a process that keeps no due hints (here a
// Retry through NewRows without WithDueHints) is not seen by the hint-driven rounds, but the
// rescan of the whole queue finds it and it is sent.
func TestRowWithoutHintIsFoundByTheRescan(t *testing.T) {
	t.Parallel()
	e := newUploadEnv(t, googlefake.DefaultConfig(), nil)
	e.start()
	j := e.job(e.m, "evt-unhinted", "gclid", "invalid-unhinted", e.eventTime())
	e.produce(j)
	e.waitStatus(j.RowID, uploader.StatusRejected)
	testenv.Eventually(t, "dispatch hint settled", func() bool {
		err := e.db.Redis.ZScore(e.ctx, e.db.RedisC.KeyPrefix+"ads-due:{dispatch}", e.ws).Err()
		return errors.Is(err, redis.Nil)
	})

	q, err := uploader.NewRows(e.db.Conn).Retry(e.ctx, e.ws, j.RowID)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if r := e.row(j.RowID); r.Status != uploader.StatusQueued || len(e.calls(ingestPath)) != 1 {
		t.Fatalf("a row without a hint was found before the rescan: %+v", r)
	}
	e.advance(time.Minute + time.Second)
	e.waitRow(j.RowID, "sent again", func(r uploader.Row) bool { return r.Status == uploader.StatusRejected && r.Version > q.Version })

	// With the hints, a Retry is sent at the next round.
	q, err = uploader.NewRows(e.db.Conn, uploader.WithDueHints(e.db.Redis, e.db.RedisC.KeyPrefix)).Retry(e.ctx, e.ws, j.RowID)
	if err != nil {
		t.Fatal(err)
	}
	e.waitRow(j.RowID, "sent at once", func(r uploader.Row) bool { return r.Status == uploader.StatusRejected && r.Version > q.Version })
}
