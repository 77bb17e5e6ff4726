package processors

import (
	"strings"
	"testing"

	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas"
)

// uploadMatchFixture: workspace ws-1 is connected (one version) with an enabled install mapping and
// a trial_started mapping whose latest version is disabled; ws-2's latest connection version is
// disconnected; acquisition acq-1 captured a gclid and a gbraid over two months; acq-late first came
// organically, then through an ad; acq-org never clicked.
var uploadMatchFixture = []string{
	`INSERT INTO ad_connections (connection_id, workspace_id, provider, state, version)
SELECT 'conn-1', 'ws-1', 'google', 'connected', 1`,
	`INSERT INTO ad_connections (connection_id, workspace_id, provider, state, version)
SELECT 'conn-2', 'ws-2', 'google', 'connected', 1`,
	`INSERT INTO ad_connections (connection_id, workspace_id, provider, state, version)
SELECT 'conn-2', 'ws-2', 'google', 'disconnected', 2`,
	`INSERT INTO ad_mappings (mapping_id, workspace_id, connection_id, source_id, milestone, enabled, version)
SELECT 'm-1', 'ws-1', 'conn-1', 'src-1', 'install', 1, 1`,
	`INSERT INTO ad_mappings (mapping_id, workspace_id, connection_id, source_id, milestone, enabled, version)
SELECT 'm-2', 'ws-1', 'conn-1', 'src-1', 'trial_started', 1, 1`,
	`INSERT INTO ad_mappings (mapping_id, workspace_id, connection_id, source_id, milestone, enabled, version)
SELECT 'm-2', 'ws-1', 'conn-1', 'src-1', 'trial_started', 0, 2`,
	`INSERT INTO ad_mappings (mapping_id, workspace_id, connection_id, source_id, milestone, enabled, version)
SELECT 'm-3', 'ws-2', 'conn-2', 'src-2', 'install', 1, 1`,
	`INSERT INTO browser_events (event_id, source_id, workspace_id, app_id, acquisition_id, name, occurred_at, first_gclid, first_gbraid)
SELECT 'b-1', 'src-1', 'ws-1', 'app', 'acq-1', 'page_view', toDateTime('2026-10-31 09:00:00', 'UTC'), 'gclid-1', 'gbraid-1'`,
	`INSERT INTO browser_events (event_id, source_id, workspace_id, app_id, acquisition_id, name, occurred_at, first_gclid)
SELECT 'b-2', 'src-1', 'ws-1', 'app', 'acq-1', 'page_view', toDateTime('2026-11-02 09:00:00', 'UTC'), 'gclid-later'`,
	`INSERT INTO browser_events (event_id, source_id, workspace_id, app_id, acquisition_id, name, occurred_at, first_utm_source)
SELECT 'l-1', 'src-1', 'ws-1', 'app', 'acq-late', 'page_view', toDateTime('2026-10-31 09:00:00', 'UTC'), 'news'`,
	`INSERT INTO browser_events (event_id, source_id, workspace_id, app_id, acquisition_id, name, occurred_at, first_utm_source, first_gclid)
SELECT 'l-2', 'src-1', 'ws-1', 'app', 'acq-late', 'page_view', toDateTime('2026-11-03 09:00:00', 'UTC'), 'news', 'gclid-late'`,
	`INSERT INTO browser_events (event_id, source_id, workspace_id, app_id, acquisition_id, name, occurred_at, first_utm_source)
SELECT 'o-1', 'src-1', 'ws-1', 'app', 'acq-org', 'page_view', toDateTime('2026-11-03 09:00:00', 'UTC'), 'news'`,
}

// uploadMatchBeforeClicks lands a browser event before migration 0015: only acquisitions has it.
const uploadMatchBeforeClicks = `INSERT INTO browser_events (event_id, source_id, workspace_id, app_id, acquisition_id, name, occurred_at, first_gclid)
SELECT 'p-1', 'src-1', 'ws-1', 'app', 'acq-pre', 'page_view', toDateTime('2026-10-05 09:00:00', 'UTC'), 'gclid-pre'`

// TestUploadMatchQueriesRunOnCurrentClickHouse runs the matcher's SQL on the current ClickHouse
// engine with bound lists rendered as the driver renders them, and checks there what the
// integration tests check on 18.16: only enabled mappings of connected workspaces, latest version
// first; click evidence merged over months, the first non-empty click of each acquisition, else
// (landed before migration 0015) its first touch's.
func TestUploadMatchQueriesRunOnCurrentClickHouse(t *testing.T) {
	ms, err := schemas.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	var statements []string
	for _, m := range ms {
		if m.Version == 15 {
			statements = append(statements, uploadMatchBeforeClicks)
		}
		statements = append(statements, m.Statements...)
	}
	statements = append(statements, uploadMatchFixture...)
	mappings := strings.ReplaceAll(selectUploadMappings, "IN (?)", "IN (('ws-1'), ('ws-2'))")
	clicks := strings.NewReplacer("IN ($1)", "IN (('ws-1'))", "IN ($2)", "IN (('src-1'))",
		"IN ($3)", "IN (('acq-1'), ('acq-2'), ('acq-late'), ('acq-org'), ('acq-pre'))").Replace(selectClickEvidence)
	if strings.Contains(clicks, "$") {
		t.Fatalf("unbound parameter left in %s", clicks)
	}
	// The click evidence with named columns, to check.
	named := strings.Replace(clicks, "if(c_gclid != '', c_gclid, f_gclid), if(c_gbraid != '', c_gbraid, f_gbraid),\n    if(c_wbraid != '', c_wbraid, f_wbraid)",
		"if(c_gclid != '', c_gclid, f_gclid) AS g, if(c_gbraid != '', c_gbraid, f_gbraid) AS b,\n    if(c_wbraid != '', c_wbraid, f_wbraid) AS w", 1)
	if named == clicks {
		t.Fatal("selectClickEvidence's columns changed: update the check")
	}
	statements = append(statements, mappings, clicks,
		`SELECT throwIf(ok != 1) FROM (SELECT count() = 1 AND any(mapping_id) = 'm-1' AND any(m_source_id) = 'src-1'
AND any(m_milestone) = 'install' AS ok FROM (`+mappings+`))`,
		`SELECT throwIf(ok != 1) FROM (SELECT count() = 1 AND any(g) = 'gclid-1' AND any(b) = 'gbraid-1' AND any(w) = '' AS ok
FROM (SELECT source_id, acquisition_id, argMinMerge(first_gclid) AS g, argMinMerge(first_gbraid) AS b, argMinMerge(first_wbraid) AS w
FROM acquisitions WHERE acquisition_id IN (('acq-1'), ('acq-2')) GROUP BY source_id, acquisition_id))`,
		`SELECT throwIf(ok != 1) FROM (SELECT count() = 4
AND groupArray((acquisition_id, g, b, w)) = [('acq-1', 'gclid-1', 'gbraid-1', ''), ('acq-late', 'gclid-late', '', ''), ('acq-org', '', '', ''), ('acq-pre', 'gclid-pre', '', '')] AS ok
FROM (SELECT acquisition_id, g, b, w FROM (`+named+`) ORDER BY acquisition_id))`,
		// The first touch of acq-late is still its organic visit.
		`SELECT throwIf(ok != 1) FROM (SELECT argMinMerge(first_gclid) = '' AND argMinMerge(first_utm_source) = 'news' AS ok
FROM acquisitions WHERE acquisition_id = 'acq-late' GROUP BY source_id, acquisition_id)`,
		// A check that does not hold proves that a failing check is reported.
		"SELECT throwIf(ok != 1) FROM (SELECT toUInt8(0) AS ok, 'upload_match_control' AS marker)",
	)
	_, failures := testenv.OnCurrentClickHouse(t, statements)
	if len(failures) != 1 || !strings.Contains(failures[0].Statement, "upload_match_control") {
		t.Fatalf("want only the control statement rejected, got %+v", failures)
	}
}
