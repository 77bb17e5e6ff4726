package processors

import (
	"strings"
	"testing"

	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas"
)

// uploadMatchFixture: workspace ws-1 is connected (one version) with an enabled install mapping and
// a trial_started mapping whose latest version is disabled; ws-2's latest connection version is
// disconnected; acquisition acq-1 captured a gclid and a gbraid over two months.
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
}

// TestUploadMatchQueriesRunOnCurrentClickHouse runs the matcher's SQL on the current ClickHouse
// engine with bound lists rendered as the driver renders them, and checks there what the
// integration tests check on 18.16: only enabled mappings of connected workspaces, latest version
// first; click evidence merged over months.
func TestUploadMatchQueriesRunOnCurrentClickHouse(t *testing.T) {
	ms, err := schemas.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	var statements []string
	for _, m := range ms {
		statements = append(statements, m.Statements...)
	}
	statements = append(statements, uploadMatchFixture...)
	mappings := strings.ReplaceAll(selectUploadMappings, "IN (?)", "IN (('ws-1'), ('ws-2'))")
	clicks := strings.NewReplacer("workspace_id IN (?)", "workspace_id IN (('ws-1'))", "source_id IN (?)", "source_id IN (('src-1'))",
		"acquisition_id IN (?)", "acquisition_id IN (('acq-1'), ('acq-2'))").Replace(selectClickEvidence)
	statements = append(statements, mappings, clicks,
		`SELECT throwIf(ok != 1) FROM (SELECT count() = 1 AND any(mapping_id) = 'm-1' AND any(m_source_id) = 'src-1'
AND any(m_milestone) = 'install' AS ok FROM (`+mappings+`))`,
		`SELECT throwIf(ok != 1) FROM (SELECT count() = 1 AND any(g) = 'gclid-1' AND any(b) = 'gbraid-1' AND any(w) = '' AS ok
FROM (SELECT source_id, acquisition_id, argMinMerge(first_gclid) AS g, argMinMerge(first_gbraid) AS b, argMinMerge(first_wbraid) AS w
FROM acquisitions WHERE acquisition_id IN (('acq-1'), ('acq-2')) GROUP BY source_id, acquisition_id))`,
		// A check that does not hold proves that a failing check is reported.
		"SELECT throwIf(ok != 1) FROM (SELECT toUInt8(0) AS ok, 'upload_match_control' AS marker)",
	)
	_, failures := testenv.OnCurrentClickHouse(t, statements)
	if len(failures) != 1 || !strings.Contains(failures[0].Statement, "upload_match_control") {
		t.Fatalf("want only the control statement rejected, got %+v", failures)
	}
}
