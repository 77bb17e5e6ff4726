package processors

import (
	"context"
	"sync"
	"time"
)

// copySources says where the derivation reads: from the copies ordered by customer (migration
// 0012) once copy_backfills records them complete, from platform_lifecycle_events and
// platform_transactions until then. A copy lacks the rows landed before its materialized view
// existed until a backfill copies them (schemas/reportingbackfill, run by the migrations when the
// copy is empty), and a fold over some of a customer's events would write wrong rows; the source
// tables give the same answer, only more slowly. Until both copies are complete it looks again at
// most once a minute, then never again.
type copySources struct {
	mu      sync.Mutex
	known   readSources
	checked time.Time
	// sourcesOnly keeps the derivation on the source tables (tests compare the two).
	sourcesOnly bool
}

// readSources says which copies to read.
type readSources struct{ events, sales bool }

// copyRecheck is how often an incomplete copy is looked at again.
const copyRecheck = time.Minute

func (c *copySources) read(ctx context.Context, conn PlatformConn, now time.Time) readSources {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sourcesOnly || (c.known.events && c.known.sales) || (!c.checked.IsZero() && now.Sub(c.checked) < copyRecheck) {
		return c.known
	}
	c.checked = now
	rows, err := conn.Query(ctx, selectCompleteCopies)
	if err != nil {
		return c.known // a schema before 0012, or a refusal: the sources answer too
	}
	defer rows.Close()
	var known readSources
	for rows.Next() {
		var table string
		if err := rows.Scan(&table); err != nil {
			return c.known
		}
		switch table {
		case "platform_events_by_customer":
			known.events = true
		case "platform_subscription_sales_by_customer":
			known.sales = true
		}
	}
	if rows.Err() == nil {
		c.known = known
	}
	return c.known
}
