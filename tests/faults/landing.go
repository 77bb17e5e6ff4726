package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// landingTables are the tables whose arrival times the landing poll follows (recovery is measured
// on them); the final accounting (verify.go) checks every table an event belongs to.
func landingTables(kind string) []string {
	if kind == kindServer {
		return []string{"server_events", "funnel_events"}
	}
	return []string{"browser_events"}
}

// landingPoll finds, every interval, which acknowledged events have arrived in their landing
// tables, and records when. A failed poll (ClickHouse down) is simply tried again.
type landingPoll struct {
	conn     driver.Conn
	led      *ledger
	sourceID string
	interval time.Duration
}

func (p *landingPoll) run(ctx context.Context) {
	t := time.NewTicker(p.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		_ = p.once(ctx)
	}
}

func (p *landingPoll) once(ctx context.Context) error {
	byTable := map[string][]string{}
	for _, e := range p.led.pending() {
		for _, t := range landingTables(e.Kind) {
			byTable[t] = append(byTable[t], e.ID)
		}
	}
	for table, ids := range byTable {
		found, err := presentIn(ctx, p.conn, table, p.sourceID, ids)
		if err != nil {
			return err
		}
		p.led.landed(table, time.Now(), found)
	}
	return nil
}

// presentIn returns which of ids table holds for the source (any row: arrival, not dedup, is asked).
func presentIn(ctx context.Context, conn driver.Conn, table, sourceID string, ids []string) ([]string, error) {
	var out []string
	for chunk := range slices.Chunk(ids, 2000) {
		set := make([]any, len(chunk))
		for i, id := range chunk {
			set[i] = id
		}
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		rows, err := conn.Query(qctx, "SELECT DISTINCT event_id FROM "+table+" WHERE source_id = ? AND event_id IN ?",
			sourceID, clickhouse.GroupSet{Value: set})
		if err != nil {
			cancel()
			return nil, fmt.Errorf("poll %s: %w", table, err)
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				cancel()
				return nil, err
			}
			out = append(out, id)
		}
		err = rows.Err()
		rows.Close()
		cancel()
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
