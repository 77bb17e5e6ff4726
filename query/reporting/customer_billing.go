package reporting

import (
	"context"
	"fmt"
	"time"
)

// billing assembles a customer's billing facts on the facts' date.
func (f *customerFacts) billing(k string) CustomerBilling {
	s := f.summary[k]
	b := CustomerBilling{LastUninstall: s.LastUninstall, Paid: f.paid[k]}
	for _, c := range f.charges[k] {
		if c.Kind != "subscription" {
			continue
		}
		ev, hasEvents := f.chargeEvents[chargeKey{k, c.ID}]
		b.Charges = append(b.Charges, ChargeFacts{Charge: c, LastOwn: ev.LastA, FirstActivated: ev.FirstActivated,
			Ended: endedAt(ev.OwnEnd, ev.FirstActivated, s.Uninstalls, c.EndedAt, hasEvents)})
	}
	return b
}

// readCustomerPayments reads, per customer, the latest positive subscription payment before end for
// each charge and currency (METRICS 2.3), whatever its age.
func (s *Store) readCustomerPayments(ctx context.Context, sc Scope, page []any, end time.Time) (map[string]Payments, error) {
	rows, err := s.conn.Query(ctx, selectCustomerPayments, append([]any{epoch(end), sc.WorkspaceID, sc.apps()}, page...)...)
	if err != nil {
		return nil, fmt.Errorf("read customer payments: %w", err)
	}
	defer rows.Close()
	out := map[string]Payments{}
	for rows.Next() {
		var (
			k, charge, cur string
			at             uint32
		)
		if err := rows.Scan(&k, &charge, &cur, &at); err != nil {
			return nil, fmt.Errorf("read customer payments: %w", err)
		}
		out[k] = out[k].with(charge, cur, unix(at))
	}
	return out, rows.Err()
}
