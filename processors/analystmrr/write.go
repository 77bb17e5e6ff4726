package analystmrr

import (
	"context"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/revtrack/revtrack/query/reporting"
)

// batchRows bounds a batch: a large app's history is sent in several inserts (each one part),
// which readers never see before the generation is recorded.
const batchRows = 100_000

// batch is an insert sent every batchRows rows.
type batch struct {
	conn   driver.Conn
	insert string
	b      driver.Batch
	n      int
}

func (b *batch) append(ctx context.Context, row ...any) error {
	if b.b == nil {
		var err error
		if b.b, err = b.conn.PrepareBatch(ctx, b.insert); err != nil {
			return err
		}
	}
	if err := b.b.Append(row...); err != nil {
		return err
	}
	if b.n++; b.n%batchRows == 0 {
		return b.send()
	}
	return nil
}

func (b *batch) send() error {
	if b.b == nil {
		return nil
	}
	err := b.b.Send()
	b.b = nil
	return err
}

func (b *batch) abort() {
	if b.b != nil {
		_ = b.b.Abort()
		b.b = nil
	}
}

// recompute writes a new generation of one scope: every customer's spans and movements through
// today, then the generation row that makes the views read them. prev is the current generation
// (0: none); the new one is greater, whatever the clock says.
func (j *Job) recompute(ctx context.Context, sc scope, inputs string, today reporting.Date, prev uint64) (spans, moves int, err error) {
	now := j.now().Truncate(time.Second)
	gen := max(uint64(now.UnixNano()), prev+1)
	sp := &batch{conn: j.Conn, insert: insertSpans}
	mv := &batch{conn: j.Conn, insert: insertMovements}
	defer sp.abort()
	defer mv.abort()
	var export reporting.MRRExport
	if inputs != unselected {
		export, err = j.Reports.ExportCustomerMRR(ctx, reporting.Scope{WorkspaceID: sc.ws, AppIDs: []string{sc.app}}, today,
			func(c reporting.CustomerMRR) error {
				excluded := boolByte(c.Excluded)
				for _, s := range c.Spans {
					if err := sp.append(ctx, sc.ws, sc.app, gen, c.PublicID, c.CustomerID, c.ShopDomain, s.Currency, s.From.Start(), s.To.Start(),
						s.MRRCents, s.SubscriptionMRRCents, s.UsageMRRCents, boolByte(s.Paying), excluded, now); err != nil {
						return fmt.Errorf("write spans: %w", err)
					}
				}
				for _, m := range c.Movements {
					if err := mv.append(ctx, sc.ws, sc.app, gen, c.PublicID, c.CustomerID, c.ShopDomain, m.Currency, m.Date.Start(), m.Kind,
						m.MovementCents, m.StartCents, m.EndCents, excluded, now); err != nil {
						return fmt.Errorf("write movements: %w", err)
					}
				}
				return nil
			})
		if err != nil {
			return 0, 0, err
		}
	}
	if err := sp.send(); err != nil {
		return 0, 0, fmt.Errorf("write spans: %w", err)
	}
	if err := mv.send(); err != nil {
		return 0, 0, fmt.Errorf("write movements: %w", err)
	}
	j.Metrics.rows.WithLabelValues("customer_mrr_spans").Add(float64(sp.n))
	j.Metrics.rows.WithLabelValues("customer_mrr_movements").Add(float64(mv.n))
	// Only now do the views read the new rows, all at once.
	g, err := j.Conn.PrepareBatch(ctx, insertGeneration)
	if err != nil {
		return 0, 0, fmt.Errorf("record generation: %w", err)
	}
	if err := g.Append(sc.ws, sc.app, gen, now, today.Start(), inputs, uint64(export.Customers), uint64(sp.n), uint64(mv.n)); err != nil {
		_ = g.Abort()
		return 0, 0, fmt.Errorf("record generation: %w", err)
	}
	if err := g.Send(); err != nil {
		return 0, 0, fmt.Errorf("record generation: %w", err)
	}
	j.Metrics.recomputed.Inc()
	return sp.n, mv.n, nil
}

func boolByte(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}
