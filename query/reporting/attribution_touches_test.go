package reporting

import (
	"fmt"
	"testing"

	"github.com/revtrack/revtrack/query/reporting/reportingtest"
)

// An event that happened before an acquisition's first touch but lands after it (a browser's
// queued batch, a redelivery) becomes the first touch: acquisition_touches keeps the earliest event
// of each insert and the readers the earliest row, whether or not the rows have merged. A later event
// changes nothing.
func TestAttributionEarlierEventLandsLate(t *testing.T) {
	e := setup(t)
	reportingtest.ExampleAttribution(e.fx)
	reportingtest.JulietLateHistory(e.fx) // acq-juliet first seen 03-15 09:00 (summer), an hour before its install
	e.fx.Flush(t)
	before := rowsByName(attributionOf(t, e, GroupUTMCampaign, "").Rows)
	if before["summer"].Customers != 3 || before["summer"].Acquisitions != 4 || before["spring"].Customers != 5 {
		t.Fatalf("before: summer %+v, spring %+v", before["summer"], before["spring"])
	}

	// A later event (another campaign) lands first: the first touch stays summer.
	e.fx.AddPageView("app-1", "src-1a", "acq-juliet", "pv-juliet-later", "2026-03-16T08:00:00Z", reportingtest.Touch{UTMCampaign: "autumn"})
	e.fx.Flush(t)
	if rows := rowsByName(attributionOf(t, e, GroupUTMCampaign, "").Rows); rows["autumn"].Key != nil || rows["summer"].Customers != 3 {
		t.Fatalf("after a later event: autumn %+v, summer %+v", rows["autumn"], rows["summer"])
	}

	// An earlier event lands: juliet, its install and its acquisition move from summer to spring.
	e.fx.AddPageView("app-1", "src-1a", "acq-juliet", "pv-juliet-earlier", "2026-03-14T08:00:00Z", reportingtest.Touch{UTMCampaign: "spring"})
	e.fx.Flush(t)
	after := attributionOf(t, e, GroupUTMCampaign, "")
	rows := rowsByName(after.Rows)
	summer, spring := rows["summer"], rows["spring"]
	if summer.Customers != 2 || summer.Acquisitions != 3 || summer.Installs != before["summer"].Installs-1 ||
		spring.Customers != 6 || spring.Acquisitions != before["spring"].Acquisitions+1 || spring.Installs != before["spring"].Installs+1 {
		t.Fatalf("after an earlier event: summer %+v, spring %+v", summer, spring)
	}
	if n := countRows(t, e, "SELECT count() FROM acquisition_touches WHERE acquisition_id = 'acq-juliet'"); n < 2 {
		t.Fatalf("acq-juliet has %d rows before the merge; the test needs them unmerged", n)
	}

	// Merged, the table answers the same.
	if err := e.conn.Exec(ctx(t), "OPTIMIZE TABLE acquisition_touches FINAL"); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, e, "SELECT count() FROM acquisition_touches WHERE acquisition_id = 'acq-juliet'"); n != 1 {
		t.Fatalf("acq-juliet has %d rows after the merge", n)
	}
	merged := attributionOf(t, e, GroupUTMCampaign, "")
	jsonEq(t, "merged", merged.Rows, after.Rows)
}

// The first touches attribution reads are acquisitions' merged first touches, acquisition by
// acquisition, on the example data set and its late history (ties included: events of one second
// ordered by millisecond and event ID).
func TestAcquisitionTouchesAgreeWithAcquisitions(t *testing.T) {
	e := setup(t)
	reportingtest.ExampleAttribution(e.fx)
	reportingtest.JulietLateHistory(e.fx)
	e.fx.Flush(t)
	// Three events of one browser in one millisecond, landed one by one, the last the first by ID.
	for _, ev := range []struct{ id, campaign string }{{"t1-b", "b"}, {"t2-c", "c"}, {"t0-a", "a"}} {
		e.fx.AddPageView("app-1", "src-1a", "acq-tie", ev.id, "2026-03-20T12:00:00Z", reportingtest.Touch{UTMCampaign: ev.campaign})
		e.fx.Flush(t)
	}
	const (
		touches = `SELECT source_id, acquisition_id, toUInt32(min(first_at)), argMax(utm_campaign, version), argMax(landing_url, version),
    argMax(gclid, version) FROM acquisition_touches GROUP BY source_id, acquisition_id ORDER BY source_id, acquisition_id`
		merged = `SELECT source_id, acquisition_id, toUInt32(minMerge(first_seen)), argMinMerge(first_utm_campaign),
    argMinMerge(first_landing_url), argMinMerge(first_gclid) FROM acquisitions GROUP BY source_id, acquisition_id
ORDER BY source_id, acquisition_id`
	)
	want := dumpRows(t, e, merged)
	if got := dumpRows(t, e, touches); got != want {
		t.Fatalf("acquisition_touches:\n%s\nacquisitions:\n%s", got, want)
	}
	if err := e.conn.Exec(ctx(t), "OPTIMIZE TABLE acquisition_touches FINAL"); err != nil {
		t.Fatal(err)
	}
	if got := dumpRows(t, e, touches); got != want {
		t.Fatalf("merged acquisition_touches:\n%s\nacquisitions:\n%s", got, want)
	}
}

func countRows(t *testing.T, e env, q string) uint64 {
	t.Helper()
	var n uint64
	if err := e.conn.QueryRow(ctx(t), q).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// dumpRows renders a query's rows of six columns (two strings, a number, three strings) as text.
func dumpRows(t *testing.T, e env, q string) string {
	t.Helper()
	rows, err := e.conn.Query(ctx(t), q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := ""
	for rows.Next() {
		var (
			src, acq, a, b, c string
			first             uint32
		)
		if err := rows.Scan(&src, &acq, &first, &a, &b, &c); err != nil {
			t.Fatal(err)
		}
		out += fmt.Sprintf("%s %s %d %q %q %q\n", src, acq, first, a, b, c)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
