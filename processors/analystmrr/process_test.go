package analystmrr_test

import (
	"testing"

	"github.com/revtrack/revtrack/cmd/revtrack/runapp"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/internal/testenv/pipeline"
	"github.com/revtrack/revtrack/query/reporting"
	"github.com/revtrack/revtrack/query/reporting/reportingtest"
)

// TestProcessComponentFillsTheViews: `revtrack all` (the process component) runs the job on its
// schedule: a workspace's selected app gets its rows without anyone calling the job, and the view's
// MRR on a day equals the API's.
func TestProcessComponentFillsTheViews(t *testing.T) {
	db := pipeline.Migrated(t)
	ctx := testenv.Ctx(t)
	if err := db.Conn.Exec(ctx, `INSERT INTO workspaces (workspace_id, slug, name, subscription_status, selected_app_ids, created_at, updated_at, version)
SELECT 'ws', 'acme', 'Acme', 'active', ['app-n'], now(), now(), 1`); err != nil {
		t.Fatal(err)
	}
	fx := reportingtest.New(db.Conn, "ws")
	reportingtest.ExampleNRR(fx, "app-n")
	fx.Flush(t)
	runapp.Start(t, testenv.KafkaConfig(t), db.CH, db.RedisC, "--analyst-mrr-interval", "1s", "--platform-sync-interval", "0",
		"--log-level", "warn")
	var got int64
	testenv.Eventually(t, "the process component to fill analyst_customer_mrr_daily", func() bool {
		err := db.Conn.QueryRow(ctx, `SELECT toInt64(sum(mrr_cents)) FROM analyst_customer_mrr_daily
WHERE workspace_id = 'ws' AND app_id = 'app-n' AND excluded = 0 AND date = '2026-03-31'`).Scan(&got)
		return err == nil && got > 0
	})
	sum, err := reporting.New(db.Conn).Summary(ctx, reporting.Request{Scope: reporting.Scope{WorkspaceID: "ws", AppIDs: []string{"app-n"}},
		Range: reporting.Range{From: reporting.MustDate("2026-03-02"), To: reporting.MustDate("2026-03-31")}, CustomerScope: reporting.ScopeIncluded})
	if err != nil {
		t.Fatal(err)
	}
	if want := sum.ByCurrency["USD"].MRRCents; got != want {
		t.Errorf("2026-03-31: the view's MRR %d, the API's %d", got, want)
	}
}
