package analystmrr

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/query/reporting"
)

// docExample is the SQL block of docs/ANALYSTS.md's example queries that follows the paragraph
// starting with lead.
func docExample(t *testing.T, lead string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "ANALYSTS.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), "\n"+lead)
	if !ok {
		t.Fatalf("docs/ANALYSTS.md has no paragraph %q", lead)
	}
	_, q, _ := strings.Cut(after, "```sql\n")
	q, _, _ = strings.Cut(q, "```")
	return q
}

// TestDocumentedExamplesMatchTheAPI runs two example queries of docs/ANALYSTS.md on the golden
// datasets with today() set to a date of the data: last month's movements equal the API's
// interval=month movements of March 2026 (new and reactivation together), and the daily MRR
// example's paying customers on 2026-03-31 equal the summary's payingCustomers.
func TestDocumentedExamplesMatchTheAPI(t *testing.T) {
	e := setup(t)
	ctx := testenv.Ctx(t)
	if err := e.conn.Exec(ctx, `INSERT INTO workspaces (workspace_id, slug, name, subscription_status, selected_app_ids, created_at, updated_at, version)
SELECT 'ws', 'acme', 'Acme', 'active', ['app-1'], now(), now(), 1`); err != nil {
		t.Fatal(err)
	}
	if _, err := e.job.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	req := reporting.Request{Scope: reporting.Scope{WorkspaceID: "ws", AppIDs: apps}, CustomerScope: reporting.ScopeIncluded,
		Range: reporting.Range{From: reporting.MustDate("2026-03-01"), To: reporting.MustDate("2026-03-31")}}
	m, err := e.store.Movements(ctx, reporting.MovementsRequest{Request: req, Interval: reporting.IntervalMonth})
	if err != nil {
		t.Fatal(err)
	}
	q := strings.ReplaceAll(docExample(t, "Last month's movements"), "today()", "toDate('2026-04-01')")
	rows, err := e.conn.Query(ctx, q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	seen := 0
	for rows.Next() {
		var (
			cur                                   string
			start, end, newCents, exp, con, churn int64
			newN, expN, conN, churnN              uint64
		)
		if err := rows.Scan(&cur, &start, &end, &newCents, &newN, &exp, &expN, &con, &conN, &churn, &churnN); err != nil {
			t.Fatal(err)
		}
		b := m.Periods[0].ByCurrency[cur]
		want := []int64{b.StartMRRCents, b.EndMRRCents, b.NewCents + b.ReactivationCents, b.NewCustomers + b.ReactivatedCustomers,
			b.ExpansionCents, b.ExpansionCustomers, b.ContractionCents, b.ContractionCustomers, b.ChurnCents, b.ChurnedCustomers}
		got := []int64{start, end, newCents, int64(newN), exp, int64(expN), con, int64(conN), churn, int64(churnN)}
		if !equalSlices(got, want) {
			t.Errorf("%s: the example gives %v, the API %v", cur, got, want)
		}
		seen++
	}
	rows.Close()
	if moved := len(m.Periods[0].ByCurrency); seen == 0 || seen > moved {
		t.Errorf("the example answered %d currencies, the API has %d", seen, moved)
	}

	sum, err := e.store.Summary(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	q = strings.ReplaceAll(docExample(t, "MRR per day and currency over the last 30 days"), "today()", "toDate('2026-03-31')")
	rows, err = e.conn.Query(ctx, "SELECT currency, mrr_cents, toInt64(paying_customers) FROM ("+q+") WHERE date = '2026-03-31'")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var (
			cur         string
			mrr, paying int64
		)
		if err := rows.Scan(&cur, &mrr, &paying); err != nil {
			t.Fatal(err)
		}
		if b := sum.ByCurrency[cur]; b.MRRCents != mrr || b.PayingCustomers != paying {
			t.Errorf("%s on 2026-03-31: the example gives MRR %d and %d paying, the summary %d and %d", cur, mrr, paying, b.MRRCents, b.PayingCustomers)
		}
		n++
	}
	if n == 0 {
		t.Error("the daily MRR example answered nothing on 2026-03-31")
	}
}

func equalSlices(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
