package tracking

import (
	"context"
	"fmt"
	"time"

	"github.com/revtrack/revtrack/query/budget"
)

// LedgerRow is the commissionable money of one first-touch tracker_ref in one currency.
type LedgerRow struct {
	// TrackerRef is the first touch of the events' resolved acquisition; "" ("(none)") holds
	// events with no resolved acquisition, no browser history, or no tracker_ref.
	TrackerRef string `json:"trackerRef"`
	// Currency is the events' three-letter code; "" holds paid or refunded events sent without an
	// amount (not commissionable: counted, zero cents).
	Currency      string `json:"currency"`
	PaidCents     int64  `json:"paidCents"`
	RefundedCents int64  `json:"refundedCents"`
	// NetCents is PaidCents - RefundedCents.
	NetCents      int64  `json:"netCents"`
	PaidCount     uint64 `json:"paidCount"`
	RefundedCount uint64 `json:"refundedCount"`
}

// Ledger sums the paid and refunded events that occurred in [from, to) per first-touch tracker_ref
// of their resolved acquisition (their own acquisitionId, else their shop's first linked
// acquisition) and per currency. Money is never summed across currencies: each currency is its
// own row. Each event ID counts once. Rows are ordered by tracker_ref, then currency.
func (s *Store) Ledger(ctx context.Context, sc Scope, from, to time.Time) ([]LedgerRow, error) {
	if sc.WorkspaceID == "" {
		return nil, invalid("workspaceId is required")
	}
	from, to, err := s.dateRange(from, to)
	if err != nil {
		return nil, err
	}
	if err := budget.Compute(ctx); err != nil {
		return nil, err
	}
	rows, err := s.conn.Query(ctx, selectLedger, sc.WorkspaceID, sc.apps(), epoch(from), epoch(to), sc.WorkspaceID, sc.apps())
	if err != nil {
		return nil, fmt.Errorf("read ledger: %w", err)
	}
	defer rows.Close()
	out := []LedgerRow{}
	for rows.Next() {
		var r LedgerRow
		if err := rows.Scan(&r.TrackerRef, &r.Currency, &r.PaidCents, &r.RefundedCents, &r.PaidCount, &r.RefundedCount); err != nil {
			return nil, err
		}
		r.NetCents = r.PaidCents - r.RefundedCents
		out = append(out, r)
	}
	return out, rows.Err()
}
