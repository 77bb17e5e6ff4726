package controlplane

import (
	"strings"
	"testing"

	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas"
)

// TestQueriesRunOnCurrentClickHouse runs every control-plane query on the current ClickHouse
// engine; the store tests run them on the local 18.16 server.
func TestQueriesRunOnCurrentClickHouse(t *testing.T) {
	statements, err := schemas.MigrationStatements()
	if err != nil {
		t.Fatal(err)
	}
	bind := func(q string) string {
		q = strings.ReplaceAll(q, "LIMIT ?", "LIMIT 10")
		return strings.ReplaceAll(q, "?", "'x'")
	}
	for _, q := range []string{selectWorkspaces, selectWorkspaceBySlug, selectWorkspaceByID, selectMembers, selectApps,
		selectAPIKeysByWorkspace, selectAPIKeyByHash, selectAPIKeyByID, selectAudit,
		selectSourcesByWorkspace, selectSourceByID, selectSourceByPublicKey, selectSourceByPrivateKey} {
		statements = append(statements, bind(q))
	}
	if _, failures := testenv.OnCurrentClickHouse(t, statements); len(failures) > 0 {
		t.Fatalf("rejected by current ClickHouse: %+v", failures)
	}
}
