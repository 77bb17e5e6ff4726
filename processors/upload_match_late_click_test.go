package processors

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas"
)

// TestUploadMatchKeepsAClickAfterAnOrganicFirstVisit: a browser whose first visit was organic and
// which later arrived through an ad captured a click, so its mapped conversion carries that click,
// while its first touch stays the organic visit. Acquisitions landed before migration 0015 (no
// acquisition_clicks row) keep the first touch's click.
func TestUploadMatchKeepsAClickAfterAnOrganicFirstVisit(t *testing.T) {
	e := setup(t)
	putAdConnection(t, e, "ws", "conn-1", "connected", 1)
	putAdMapping(t, e, testMapping{"m-install", "ws", "conn-1", "src", "install", true}, 1)

	organic := schemas.FirstTouch{UTMSource: "news"}
	// Each insert is its own batch, as the sessionizer lands them: the view writes a row per insert.
	landBrowser(t, e, clickView("late-1", "acq-late", 0, organic))
	landBrowser(t, e, clickView("late-2", "acq-late", time.Hour, schemas.FirstTouch{UTMSource: "news", Gclid: "gclid-late"}))
	landBrowser(t, e, clickView("late-3", "acq-late", 2*time.Hour, schemas.FirstTouch{UTMSource: "news", Gclid: "gclid-late"}))
	// Organic in October, an app-campaign click in November; the click lands first.
	landBrowser(t, e, clickView("months-2", "acq-months", 24*time.Hour, schemas.FirstTouch{Gbraid: "gbraid-nov"}))
	landBrowser(t, e, clickView("months-1", "acq-months", -30*24*time.Hour, organic))
	landBrowser(t, e, clickView("first-1", "acq-first", 0, schemas.FirstTouch{Gclid: "gclid-first"}),
		clickView("organic-1", "acq-organic", 0, organic), clickView("organic-2", "acq-organic", time.Hour, organic))
	// acq-pre landed before acquisition_clicks existed: only acquisitions holds its click.
	if err := e.ch.Exec(testenv.Ctx(t), `INSERT INTO acquisitions (source_id, acquisition_id, event_month, workspace_id, app_id,
first_seen, last_seen, first_gclid, events)
SELECT 'src', 'acq-pre', toDate('2026-10-01'), 'ws', 'app', minState(toDateTime('2026-10-05 09:00:00', 'UTC')),
    maxState(toDateTime('2026-10-05 09:00:00', 'UTC')), argMinState('gclid-pre', (toDateTime('2026-10-05 09:00:00', 'UTC'), toUInt16(0), 'pre-1')),
    uniqExactState('pre-1')`); err != nil {
		t.Fatal(err)
	}

	sink := &UploadMatchSink{Conn: e.ch, Producer: e.producer, Topic: e.kc.Topic(schemas.TopicUploadJobs),
		Metrics: NewUploadMatchMetrics(prometheus.NewRegistry(), "upload-match"), Log: quiet}
	acqs := []string{"acq-late", "acq-months", "acq-first", "acq-organic", "acq-pre"}
	var batch []schemas.ServerEvent
	for i, acq := range acqs {
		batch = append(batch, serverEvent("install-"+acq, "install", acq, "", time.Duration(i)*time.Minute))
	}
	if err := sink.Write(testenv.Ctx(t), batch); err != nil {
		t.Fatal(err)
	}

	clicks := map[string]string{}
	for _, j := range decodeJobs(t, readUploadJobs(t, e)) {
		clicks[j.AcquisitionID] = j.ClickIDType + ":" + j.ClickID
	}
	want := map[string]string{
		"acq-late": "gclid:gclid-late", "acq-months": "gbraid:gbraid-nov", "acq-first": "gclid:gclid-first",
		"acq-organic": ":", "acq-pre": "gclid:gclid-pre",
	}
	if len(clicks) != len(want) {
		t.Fatalf("jobs by acquisition %v, want %v", clicks, want)
	}
	for acq, w := range want {
		if clicks[acq] != w {
			t.Errorf("job of %s has click %q, want %q", acq, clicks[acq], w)
		}
	}

	// The first touch is still the organic visit.
	var gclid, utm string
	if err := e.ch.QueryRow(testenv.Ctx(t), `SELECT argMinMerge(first_gclid), argMinMerge(first_utm_source) FROM acquisitions
WHERE acquisition_id = 'acq-late' GROUP BY source_id, acquisition_id`).Scan(&gclid, &utm); err != nil {
		t.Fatal(err)
	}
	if gclid != "" || utm != "news" {
		t.Fatalf("first touch of acq-late: gclid %q, utm_source %q; want the organic visit", gclid, utm)
	}
}
