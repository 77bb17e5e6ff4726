package reporting

import (
	"context"
	"fmt"
	"slices"
)

// MovementCustomer is one customer behind a movement (METRICS 3.14): its subscription MRR in the
// currency at the interval's opening and on its last date, and the movement (end − start).
type MovementCustomer struct {
	ID            string `json:"id"`
	AppID         string `json:"appId"`
	Name          string `json:"name"`
	Domain        string `json:"domain"`
	Currency      string `json:"currency"`
	StartMRRCents int64  `json:"startMrrCents"`
	EndMRRCents   int64  `json:"endMrrCents"`
	MovementCents int64  `json:"movementCents"`
}

// MovementCustomersRequest names one interval (the one of the range that contains Period) and one
// movement type; paged like the customer list.
type MovementCustomersRequest struct {
	MovementsRequest
	Type   string
	Period Date
	Cursor string
	Limit  int
}

// MovementCustomerList is GET /api/v1/mrr-movements/customers.
type MovementCustomerList struct {
	Envelope
	Interval   string             `json:"interval"`
	Type       string             `json:"type"`
	PeriodFrom Date               `json:"periodFrom"`
	Date       Date               `json:"date"`
	Customers  []MovementCustomer `json:"customers"`
	NextCursor *string            `json:"nextCursor"`
}

// MovementCustomers lists the customers behind one movement of one interval, ordered by ID (then
// currency: a currency switch is a movement in each currency).
func (s *Store) MovementCustomers(ctx context.Context, req MovementCustomersRequest) (MovementCustomerList, error) {
	if !slices.Contains(MovementTypes, req.Type) {
		return MovementCustomerList{}, fmt.Errorf("%w: type must be one of %v", ErrInvalid, MovementTypes)
	}
	if req.Cursor != "" && !customerIDPattern.MatchString(req.Cursor) {
		return MovementCustomerList{}, fmt.Errorf("%w: cursor must be a nextCursor value of a previous page", ErrInvalid)
	}
	periods, err := Periods(req.Range, req.Interval)
	if err != nil {
		return MovementCustomerList{}, err
	}
	i := slices.IndexFunc(periods, func(p Range) bool { return !req.Period.Before(p.From) && !req.Period.After(p.To) })
	if i < 0 {
		return MovementCustomerList{}, fmt.Errorf("%w: period must be a date of the range %s … %s", ErrInvalid, req.Range.From, req.Range.To)
	}
	limit := req.Limit
	if limit <= 0 {
		limit = DefaultCustomerLimit
	}
	generatedAt := s.now().UTC()
	p := periods[i]
	points := []Date{p.From.AddDays(-1), p.To}
	f, err := s.loadMovements(ctx, req.Scope, points)
	if err != nil {
		return MovementCustomerList{}, err
	}
	var all []MovementCustomer
	f.eachMove(req.CustomerScope, points, func(c *tlCustomer, _ int, cur string, m customerMove) {
		id := c.key.publicID()
		if m.kind != req.Type || (req.Currency != "" && cur != req.Currency) || id <= req.Cursor {
			return
		}
		all = append(all, MovementCustomer{ID: id, Currency: cur, StartMRRCents: m.start, EndMRRCents: m.end, MovementCents: m.end - m.start})
	})
	slices.SortFunc(all, func(a, b MovementCustomer) int {
		if a.ID != b.ID {
			return cmpString(a.ID, b.ID)
		}
		return cmpString(a.Currency, b.Currency)
	})
	out := MovementCustomerList{Envelope: s.envelope(req.Request, generatedAt, f.view, f.view.coverage(req.Range, false)),
		Interval: req.Interval, Type: req.Type, PeriodFrom: p.From, Date: p.To, Customers: []MovementCustomer{}}
	currencies := map[string]bool{}
	for _, c := range all {
		currencies[c.Currency] = true
	}
	out.Currencies = sortedKeys(currencies) // of every customer behind the movement, not only this page's
	out.MixedCurrencies = len(out.Currencies) > 1
	// A page ends between customers, never between the currencies of one.
	n := 0
	for n < len(all) && (n < limit || (n > 0 && all[n].ID == all[n-1].ID)) {
		n++
	}
	page := all[:n]
	if n < len(all) {
		next := page[n-1].ID
		out.NextCursor = &next
	}
	if err := s.nameMovementCustomers(ctx, req.Scope, page); err != nil {
		return MovementCustomerList{}, err
	}
	out.Customers = append(out.Customers, page...)
	return out, nil
}

// nameMovementCustomers fills the app, name and domain of a page's customers from their rows.
func (s *Store) nameMovementCustomers(ctx context.Context, sc Scope, page []MovementCustomer) error {
	if len(page) == 0 {
		return nil
	}
	ids := make([]string, len(page))
	for i, c := range page {
		ids[i] = c.ID
	}
	ws := sc.WorkspaceID
	q := new(stmt).add(customersFinalHead, ws, ws, ws, sc.apps()).add(andPageCustomers, pageArgs(ids)...).add(customersFinalTail)
	text, args := q.query()
	rows, err := s.readCustomerRows(ctx, text, args...)
	if err != nil {
		return err
	}
	byID := map[string]customerRow{}
	for _, r := range rows {
		byID[r.PublicID] = r
	}
	for i := range page {
		r := byID[page[i].ID]
		page[i].AppID, page[i].Name, page[i].Domain = r.AppID, r.Name, r.Domain
	}
	return nil
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
