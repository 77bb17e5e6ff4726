package syncruns_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/internal/testenv/pipeline"
	"github.com/revtrack/revtrack/query/syncruns"
)

// A run row is rewritten with a higher version as the run progresses; List answers each run's
// latest version, newest first, per app or for every app, within the limit, with UTC instants and
// nulls for what is not known.
func TestListReadsTheLatestVersionOfEachRun(t *testing.T) {
	db := pipeline.Migrated(t)
	ctx := testenv.Ctx(t)
	b, err := db.Conn.PrepareBatch(ctx, `INSERT INTO sync_runs (run_id, workspace_id, app_id, trigger, status, started_at, finished_at,
events_count, transactions_count, coverage_from, coverage_through, truncated, error, version)`)
	if err != nil {
		t.Fatal(err)
	}
	at := func(s string) *time.Time { v, _ := time.Parse(time.RFC3339, s); return &v }
	for _, r := range []struct {
		id, ws, app, status string
		started, finished   *time.Time
		txs                 uint64
		through             *time.Time
		trunc               uint8
		version             uint64
	}{
		{"run-a", "ws", "app-1", "running", at("2026-03-31T04:00:00Z"), nil, 0, nil, 0, 1},
		{"run-a", "ws", "app-1", "succeeded", at("2026-03-31T04:00:00Z"), at("2026-03-31T04:30:00Z"), 5300, at("2026-03-31T04:00:00Z"), 1, 2},
		{"run-b", "ws", "app-2", "running", at("2026-03-31T05:00:00Z"), nil, 0, nil, 0, 3},
		{"run-c", "ws", "app-1", "failed", at("2026-03-31T06:00:00Z"), at("2026-03-31T06:00:09Z"), 0, nil, 0, 4},
		{"run-x", "other", "app-1", "succeeded", at("2026-03-31T07:00:00Z"), at("2026-03-31T07:01:00Z"), 1, nil, 0, 5},
	} {
		if err := b.Append(r.id, r.ws, r.app, "schedule", r.status, *r.started, r.finished, uint64(0), r.txs, nil, r.through, r.trunc, "", r.version); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Send(); err != nil {
		t.Fatal(err)
	}
	s := syncruns.Store{CH: db.Conn}
	ids := func(app string, limit int) []string {
		t.Helper()
		rs, err := s.List(ctx, "ws", app, limit)
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, r := range rs {
			out = append(out, r.RunID+":"+r.Status)
		}
		return out
	}
	for _, c := range []struct {
		app   string
		limit int
		want  string
	}{
		{"", 10, `["run-c:failed","run-b:running","run-a:succeeded"]`},
		{"app-1", 10, `["run-c:failed","run-a:succeeded"]`},
		{"app-1", 1, `["run-c:failed"]`},
		{"", 0, `["run-c:failed"]`}, // clamped to 1
		{"app-3", 10, `[]`},
	} {
		got, _ := json.Marshal(ids(c.app, c.limit))
		if string(got) != c.want {
			t.Errorf("List(%q, %d) = %s, want %s", c.app, c.limit, got, c.want)
		}
	}

	rs, err := s.List(ctx, "ws", "app-1", 10)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(rs[1])
	const want = `{"runId":"run-a","appId":"app-1","trigger":"schedule","status":"succeeded","startedAt":"2026-03-31T04:00:00Z",` +
		`"finishedAt":"2026-03-31T04:30:00Z","eventsCount":0,"transactionsCount":5300,"coverageFrom":null,` +
		`"coverageThrough":"2026-03-31T04:00:00Z","truncated":true,"error":"","progress":null}`
	if string(got) != want {
		t.Errorf("record\n%s\nwant\n%s", got, want)
	}
}
