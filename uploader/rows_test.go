package uploader_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/revtrack/revtrack/devtools/googlefake"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/uploader"
)

// TestRetryRules: only a rejected row with click evidence and no local reason is queued again.
func TestRetryRules(t *testing.T) {
	t.Parallel()
	e := newUploadEnv(t, googlefake.DefaultConfig(), nil)
	e.start()
	at := e.eventTime()
	invalid := e.job(e.m, "evt-invalid", "gclid", "invalid-retry", at)
	local := e.job(e.m, "evt-local", "gclid", "Cj0-local", e.m.CreatedAt.Add(-time.Minute))
	unattributed := e.job(e.m, "evt-none", "", "", at)
	ok := e.job(e.m, "evt-ok", "gclid", "Cj0-ok", at)
	e.produce(invalid, local, unattributed, ok)
	e.waitStatus(invalid.RowID, uploader.StatusRejected)
	e.waitStatus(ok.RowID, uploader.StatusValidated)

	refused := func(rowID, reason string) {
		t.Helper()
		_, err := e.rows.Retry(e.ctx, e.ws, rowID)
		var re *uploader.RetryError
		if !errors.Is(err, uploader.ErrNotRetryable) || !errors.As(err, &re) || re.Reason != reason {
			t.Fatalf("retry of %s: %v", rowID, err)
		}
	}
	refused(local.RowID, uploader.RetryRefusedLocalReason)
	refused(unattributed.RowID, uploader.RetryRefusedNotRejected)
	refused(ok.RowID, uploader.RetryRefusedNotRejected)
	if _, err := e.rows.Retry(e.ctx, e.ws, "uq_nonexistent"); !errors.Is(err, uploader.ErrRowNotFound) {
		t.Fatalf("unknown row: %v", err)
	}
	if _, err := e.rows.Retry(e.ctx, "another-workspace", invalid.RowID); !errors.Is(err, uploader.ErrRowNotFound) {
		t.Fatalf("row of another workspace: %v", err)
	}

	// Rejected by the platform: queued again, sent again (and rejected again by the fake).
	q, err := e.rows.Retry(e.ctx, e.ws, invalid.RowID)
	if err != nil || q.Status != uploader.StatusQueued || q.Attempts != 0 || len(q.ReasonCodes) != 0 {
		t.Fatalf("retry: %+v %v", q, err)
	}
	e.waitRow(invalid.RowID, "rejected again", func(r uploader.Row) bool { return r.Status == uploader.StatusRejected && r.Version > q.Version })
	if vs := strings.Join(e.versions(invalid.RowID), ","); vs != "queued,rejected,queued,rejected" {
		t.Fatalf("versions %s", vs)
	}

	// After the 180-day scrub the row holds no click evidence: Retry is refused.
	if err := e.db.Conn.Exec(e.ctx, `ALTER TABLE upload_queue UPDATE click_id = '', acquisition_id = '' WHERE row_id = ?`, invalid.RowID); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, "scrub applied", func() bool { return e.row(invalid.RowID).ClickID == "" })
	refused(invalid.RowID, uploader.RetryRefusedNoClickEvidence)
}

// TestListFilters: status, mapping, creation window, and pages that neither repeat nor skip rows.
func TestListFilters(t *testing.T) {
	t.Parallel()
	e := newUploadEnv(t, googlefake.DefaultConfig(), nil)
	m2 := e.mapping("install", googlefake.DefaultActionID2)
	e.start()
	at := e.eventTime()
	jobs := []struct {
		rowID  string
		status uploader.Status
	}{}
	for _, j := range []struct {
		id, click string
		second    bool
		status    uploader.Status
	}{
		{"evt-1", "Cj0-1", false, uploader.StatusValidated},
		{"evt-2", "", false, uploader.StatusUnattributed},
		{"evt-3", "invalid-3", false, uploader.StatusRejected},
		{"evt-4", "Cj0-4", true, uploader.StatusValidated},
		{"evt-5", "", true, uploader.StatusUnattributed},
	} {
		m, typ := e.m, "gclid"
		if j.second {
			m = m2
		}
		if j.click == "" {
			typ = ""
		}
		job := e.job(m, j.id, typ, j.click, at)
		e.produce(job)
		e.waitStatus(job.RowID, j.status)
		jobs = append(jobs, struct {
			rowID  string
			status uploader.Status
		}{job.RowID, j.status})
	}
	list := func(f uploader.ListFilter) uploader.ListPage {
		t.Helper()
		p, err := e.rows.List(e.ctx, e.ws, f)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	all := list(uploader.ListFilter{})
	if len(all.Rows) != 5 || all.NextCursor != "" {
		t.Fatalf("all: %d rows, cursor %q", len(all.Rows), all.NextCursor)
	}
	for i := 1; i < len(all.Rows); i++ {
		if all.Rows[i].CreatedAt.After(all.Rows[i-1].CreatedAt) {
			t.Fatal("not newest first")
		}
	}
	if p := list(uploader.ListFilter{Status: uploader.StatusRejected}); len(p.Rows) != 1 || p.Rows[0].RowID != jobs[2].rowID ||
		p.Rows[0].ClickID != "invalid-3" || len(p.Rows[0].ReasonCodes) == 0 || p.Rows[0].Message == "" || p.Rows[0].Attempts != 1 {
		t.Fatalf("rejected: %+v", p.Rows)
	}
	if p := list(uploader.ListFilter{MappingID: m2.MappingID}); len(p.Rows) != 2 {
		t.Fatalf("second mapping: %d rows", len(p.Rows))
	}
	if p := list(uploader.ListFilter{MappingID: m2.MappingID, Status: uploader.StatusValidated}); len(p.Rows) != 1 || p.Rows[0].RowID != jobs[3].rowID {
		t.Fatalf("second mapping, validated: %+v", p.Rows)
	}
	if p := list(uploader.ListFilter{From: e.now().Add(time.Hour)}); len(p.Rows) != 0 {
		t.Fatalf("from the future: %d rows", len(p.Rows))
	}
	if p := list(uploader.ListFilter{From: e.now().Add(-time.Hour), To: e.now().Add(time.Hour)}); len(p.Rows) != 5 {
		t.Fatalf("window: %d rows", len(p.Rows))
	}
	var paged []string
	f := uploader.ListFilter{Limit: 2}
	for {
		p := list(f)
		for _, r := range p.Rows {
			paged = append(paged, r.RowID)
		}
		if p.NextCursor == "" {
			break
		}
		f.Cursor = p.NextCursor
	}
	var want []string
	for _, r := range all.Rows {
		want = append(want, r.RowID)
	}
	if !slices.Equal(paged, want) {
		t.Fatalf("pages %v, want %v", paged, want)
	}
	if _, err := e.rows.List(e.ctx, e.ws, uploader.ListFilter{Status: "sent"}); !errors.Is(err, uploader.ErrInvalidFilter) {
		t.Fatalf("bad status: %v", err)
	}
}
