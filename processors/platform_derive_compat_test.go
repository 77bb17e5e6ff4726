package processors

import (
	"strings"
	"testing"

	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas"
)

// TestPlatformDeriveQueriesRunOnCurrentClickHouse runs the derivation's SQL and the usage-charge
// insert on the current engine (the integration tests run them on 18.16).
func TestPlatformDeriveQueriesRunOnCurrentClickHouse(t *testing.T) {
	statements, err := schemas.MigrationStatements()
	if err != nil {
		t.Fatal(err)
	}
	statements = append(statements, selectCompleteCopies)
	for _, q := range []string{selectDeriveEvents, selectCustomerIntervals, selectChargeIntervals, selectLatestCharges,
		selectDeriveEventsByCustomer, selectCustomerIntervalsByCustomer, selectDeriveUsageByCustomer,
		selectDeriveUsageRecordsByCustomer} {
		// The driver renders the sets bound by keyArgs as (('a'), ('b'), …).
		statements = append(statements, strings.ReplaceAll(q, "IN (?)", "IN (('x'), ('y'))"))
	}
	for _, q := range []string{insertPlatformCharges, insertPlatformCustomers, insertPlatformUsageCharges} {
		table := strings.Fields(q)[2]
		cols := q[strings.Index(q, "(")+1 : strings.LastIndex(q, ")")]
		statements = append(statements, q+" SELECT "+cols+" FROM "+table+" WHERE 0")
	}
	if _, failures := testenv.OnCurrentClickHouse(t, statements); len(failures) > 0 {
		t.Fatalf("rejected by current ClickHouse: %+v", failures)
	}
}
