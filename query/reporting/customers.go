package reporting

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"time"

	"golang.org/x/sync/errgroup"
)

// Customer is a list item and the detail's customer (METRICS 5). Optional fields are omitted when
// the data does not have them.
type Customer struct {
	ID                  string           `json:"id"`
	AppID               string           `json:"appId"`
	Name                string           `json:"name"`
	Domain              string           `json:"domain"`
	Status              string           `json:"status"`
	Paying              bool             `json:"paying"`
	ReportExcluded      bool             `json:"reportExcluded"`
	AMRCents            int64            `json:"amrCents"`
	AMRCurrency         string           `json:"amrCurrency,omitempty"`
	LTVByCurrencyCents  map[string]int64 `json:"ltvByCurrencyCents,omitempty"`
	Plan                string           `json:"plan,omitempty"`
	Tags                []string         `json:"tags,omitempty"`
	Health              string           `json:"health"`
	FirstSeen           string           `json:"firstSeen,omitempty"`
	LastActive          string           `json:"lastActive,omitempty"`
	StoreClassification string           `json:"storeClassification"`
}

// Health values (METRICS 5).
const (
	HealthChurned   = "churned"
	HealthAtRisk    = "at_risk"
	HealthHealthy   = "healthy"
	HealthNotPaying = "not_paying"
)

// Customer list limits: default and maximum page size.
const (
	DefaultCustomerLimit = 50
	MaxCustomerLimit     = 200
)

// ListRequest is a customer-list request, validated by the query edge.
type ListRequest struct {
	Scope         Scope
	Range         Range // only Range.To matters: the reporting date
	CustomerScope CustomerScope
	Cursor        string // the previous page's nextCursor; "" for the first page
	Limit         int
	Search        string // q: a substring of the shop domain or name, any case; "" for every customer
	Paying        *bool  // paying on the reporting date; nil for both
}

// payingScanFactor bounds the customers a paying-filtered page reads: paying is only known once a
// customer's facts are computed, so a page reads ID pages in turn and stops after this many times
// its limit. A page may then hold fewer than limit customers (even none) with a nextCursor.
const payingScanFactor = 10

// CustomerList is GET /api/v1/customers.
type CustomerList struct {
	Customers     []Customer    `json:"customers"`
	NextCursor    *string       `json:"nextCursor"`
	Range         Range         `json:"range"`
	CustomerScope CustomerScope `json:"customerScope"`
	Source        string        `json:"source"`
}

// customerIDPattern is the shape of schemas.CustomerPublicID; a cursor is the last ID of a page.
var customerIDPattern = regexp.MustCompile(`^cus_[0-9a-f]{20}$`)

// Customers lists one page of customers ordered by ID. The list is not filtered by its range; the
// range only sets the reporting date of the computed fields. The page may be a kept one (cache.go):
// the caller must not modify it.
func (s *Store) Customers(ctx context.Context, req ListRequest) (CustomerList, error) {
	if req.Cursor != "" && !customerIDPattern.MatchString(req.Cursor) {
		return CustomerList{}, fmt.Errorf("%w: cursor must be a nextCursor value of a previous page", ErrInvalid)
	}
	limit := req.Limit
	if limit <= 0 {
		limit = DefaultCustomerLimit
	}
	parts := []string{string(req.CustomerScope), req.Cursor, strconv.Itoa(limit), req.Range.From.String(), req.Range.To.String()}
	if req.Search != "" || req.Paying != nil {
		parts = append(parts, "q="+req.Search, "paying="+payingKey(req.Paying))
	}
	key := cacheKey("customers", req.Scope, parts...)
	return cached(ctx, s, []string{key}, listTables, func() (CustomerList, error) { return s.customerList(ctx, req, limit) },
		func(CustomerList) bool { return true })
}

func payingKey(p *bool) string {
	if p == nil {
		return ""
	}
	return strconv.FormatBool(*p)
}

// customerList computes a page; the result may be kept (cache.go), so it must not be changed.
// Without the paying filter it is one read of limit customers. With it, pages of limit customers are
// read in turn and their customers of the wanted paying kept, until limit are kept or
// payingScanFactor×limit were read; nextCursor is then the last customer read (or kept), so the
// next page goes on from there and every match is listed exactly once.
func (s *Store) customerList(ctx context.Context, req ListRequest, limit int) (CustomerList, error) {
	if req.Paying == nil {
		return s.customerPageList(ctx, req, limit)
	}
	want := *req.Paying
	out := CustomerList{Customers: []Customer{}, Range: req.Range, CustomerScope: req.CustomerScope, Source: SourceList}
	for scanned := 0; ; {
		page, err := s.customerPageList(ctx, req, limit)
		if err != nil {
			return CustomerList{}, err
		}
		scanned += len(page.Customers)
		for _, c := range page.Customers {
			if c.Paying != want {
				continue
			}
			if len(out.Customers) == limit {
				// A match beyond a full page: the next page starts after the last kept customer.
				next := out.Customers[limit-1].ID
				out.NextCursor = &next
				return out, nil
			}
			out.Customers = append(out.Customers, c)
		}
		if page.NextCursor == nil {
			return out, nil // every customer after the cursor was read
		}
		if len(out.Customers) == limit || scanned >= payingScanFactor*limit {
			// Full, or the scan's bound: the next page goes on after the last customer read.
			out.NextCursor = page.NextCursor
			return out, nil
		}
		req.Cursor = *page.NextCursor
	}
}

// customerPageList reads the first limit customers after req.Cursor that the scope and q admit.
func (s *Store) customerPageList(ctx context.Context, req ListRequest, limit int) (CustomerList, error) {
	sc, d := req.Scope, req.Range.To
	var (
		rows    []customerRow
		facts   *customerFacts
		guessed []string // the customers the facts were read for
	)
	if req.CustomerScope == ScopeExcluded {
		var err error
		if rows, err = s.excludedPage(ctx, sc, req.Search, req.Cursor, limit+1); err != nil {
			return CustomerList{}, err
		}
	} else {
		// The page is almost always the first customers after the cursor, so their facts are read
		// while their rows are, and read again only when exclusions or missing rows changed the page.
		first, err := s.readPageIDs(ctx, sc, req.Search, req.Cursor, 2*(limit+1))
		if err != nil {
			return CustomerList{}, err
		}
		guessed = firstDistinct(first, limit)
		g, gctx := errgroup.WithContext(ctx)
		g.Go(func() (err error) {
			rows, err = s.customerPage(gctx, sc, req.CustomerScope, req.Search, req.Cursor, limit+1, first)
			return
		})
		g.Go(func() (err error) { facts, err = s.loadListFacts(gctx, sc, guessed, d); return })
		if err := g.Wait(); err != nil {
			return CustomerList{}, err
		}
	}
	out := CustomerList{Customers: []Customer{}, Range: req.Range, CustomerScope: req.CustomerScope, Source: SourceList}
	if len(rows) > limit {
		rows = rows[:limit]
		next := rows[limit-1].PublicID
		out.NextCursor = &next
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.PublicID
	}
	if facts == nil || !slices.Equal(ids, guessed) {
		var err error
		if facts, err = s.loadListFacts(ctx, sc, ids, d); err != nil {
			return CustomerList{}, err
		}
	}
	for _, r := range rows {
		c, _ := facts.customer(r, d)
		out.Customers = append(out.Customers, c)
	}
	return out, nil
}

// firstDistinct is the first n distinct IDs of sorted ones (a customer's versions repeat its ID).
func firstDistinct(sorted []string, n int) []string {
	out := make([]string, 0, n)
	for _, id := range sorted {
		if len(out) == n {
			break
		}
		if len(out) == 0 || out[len(out)-1] != id {
			out = append(out, id)
		}
	}
	return out
}

// excludedPage reads the first n excluded customers after the cursor that match search (when not
// ""), found by their domains.
func (s *Store) excludedPage(ctx context.Context, sc Scope, search, cursor string, n int) ([]customerRow, error) {
	ws := sc.WorkspaceID
	q := new(stmt).add(customersFinalHead, ws, ws, ws, sc.apps()).add(excludedAfter, cursor, ws, sc.apps(), ws)
	q.add(customersFinalTail).add(whereExcluded)
	if search != "" {
		q.add(andSearch, search, search)
	}
	text, args := q.add(orderLimitPublic, uint64(n)).query()
	return s.readCustomerRows(ctx, text, args...)
}

// customerPage reads the first n customers after the cursor that the scope (included or all)
// admits, in ID order. The page's key range is found first from the public IDs alone (a narrow read
// of the copy's key; ids are the first 2n, already read), then only that range is read with FINAL,
// and the range grows while the versions or exclusions in it leave the page short. With a search,
// the IDs are those of matching rows and only they are read (not the whole key range, which a
// rare match would make wide), then kept when their latest version still matches.
func (s *Store) customerPage(ctx context.Context, sc Scope, cs CustomerScope, search, cursor string, n int, ids []string) ([]customerRow, error) {
	ws := sc.WorkspaceID
	var out []customerRow
	for span := 2 * n; ; span *= 2 {
		if ids == nil {
			var err error
			if ids, err = s.readPageIDs(ctx, sc, search, cursor, span); err != nil {
				return nil, err
			}
		}
		if len(ids) == 0 {
			return out, nil
		}
		last := ids[len(ids)-1]
		q := new(stmt).add(customersFinalHead, ws, ws, ws, sc.apps())
		if search == "" {
			q.add(inPageRange, cursor, last)
		} else {
			q.add(andPageCustomers, pageArgs(firstDistinct(ids, len(ids)))...)
		}
		q.add(customersFinalTail)
		switch {
		case cs != ScopeAll && search != "":
			q.add(whereIncluded).add(andSearch, search, search)
		case cs != ScopeAll:
			q.add(whereIncluded)
		case search != "":
			q.add(whereSearch, search, search)
		}
		text, args := q.add(orderByPublicID).query()
		rows, err := s.readCustomerRows(ctx, text, args...)
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
		if len(out) >= n || len(ids) < span {
			return out[:min(n, len(out))], nil
		}
		cursor, ids = last, nil
	}
}

// readPageIDs reads the first n public IDs after the cursor (versions included), of rows matching
// search when it is not "".
func (s *Store) readPageIDs(ctx context.Context, sc Scope, search, cursor string, n int) ([]string, error) {
	text, args := selectCustomerPageIDs, []any{sc.WorkspaceID, cursor, sc.apps(), uint64(n)}
	if search != "" {
		text, args = selectSearchPageIDs, []any{sc.WorkspaceID, cursor, sc.apps(), search, search, uint64(n)}
	}
	rows, err := s.conn.Query(ctx, text, args...)
	if err != nil {
		return nil, fmt.Errorf("read customer IDs: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("read customer IDs: %w", err)
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

func (s *Store) readCustomerRows(ctx context.Context, query string, args ...any) ([]customerRow, error) {
	rows, err := s.conn.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("read customers: %w", err)
	}
	defer rows.Close()
	var out []customerRow
	for rows.Next() {
		var (
			r                    customerRow
			installed, lastEvent uint32
			excluded             uint8
		)
		if err := rows.Scan(&r.AppID, &r.CustomerID, &r.PublicID, &r.Domain, &r.Name, &r.Status, &installed, &lastEvent, &excluded); err != nil {
			return nil, fmt.Errorf("read customers: %w", err)
		}
		r.InstalledAt, r.LastEventAt, r.Excluded = unix(installed), unix(lastEvent), excluded == 1
		out = append(out, r)
	}
	return out, rows.Err()
}

// customer computes a customer's fields on date d (METRICS 5) and returns its billing evaluation.
func (f *customerFacts) customer(r customerRow, d Date) (Customer, Evaluation) {
	k := r.key()
	end := d.End()
	ev := Evaluate(d, f.billing(k))
	c := Customer{ID: r.PublicID, AppID: r.AppID, Name: r.Name, Domain: r.Domain, Status: r.Status, Paying: ev.Paying,
		ReportExcluded: r.Excluded, AMRCents: ev.AMRCents, AMRCurrency: ev.Currency}
	if ev.InEffect != nil {
		c.Plan = ev.InEffect.Facts.Name
	}
	var anyTx, giveBack30 bool
	var annual, usage, oneTime bool
	for cur, t := range f.tx[k] {
		if t.LifetimeCount > 0 {
			anyTx = true
			if c.LTVByCurrencyCents == nil {
				c.LTVByCurrencyCents = map[string]int64{}
			}
			c.LTVByCurrencyCents[cur] = t.LifetimeNet
		}
		giveBack30 = giveBack30 || t.GiveBackCount30 > 0
		annual = annual || t.AnnualCount > 0
		usage = usage || t.UsageCount > 0
		oneTime = oneTime || t.OneTimeCount > 0
	}
	lastActive := time.Time{}
	if r.LastEventAt.Before(end) {
		lastActive = r.LastEventAt
	}
	for _, u := range f.usageCharges[k] {
		usage = usage || u.Count > 0
		lastActive = latest(lastActive, u.LastAt)
	}
	ev2 := f.summary[k]
	lastActive = latest(lastActive, ev2.LastAt)
	lastActive = latest(lastActive, f.usageEvents[k])
	if !lastActive.IsZero() {
		c.LastActive = stamp(lastActive)
	}
	if first := earliest(r.InstalledAt, ev2.FirstAt); !first.IsZero() {
		c.FirstSeen = stamp(first)
	}
	reinstalled := !ev2.FirstUninstall.IsZero() && ev2.LastInstall.After(ev2.FirstUninstall)
	for tag, on := range map[string]bool{"annual_plan": annual, "usage_billing": usage, "one_time_purchase": oneTime, "reinstalled": reinstalled} {
		if on {
			c.Tags = append(c.Tags, tag)
		}
	}
	slices.Sort(c.Tags)
	c.StoreClassification = classify(f.charges[k], anyTx)
	c.Health = health(r.Status, ev, giveBack30, d)
	return c, ev
}

// classify is storeClassification (METRICS 5): production with a non-test charge or any
// transaction, development when every charge is a test charge, unknown otherwise.
func classify(charges []*Charge, anyTx bool) string {
	if anyTx || slices.ContainsFunc(charges, func(c *Charge) bool { return !c.Test }) {
		return "production"
	}
	if len(charges) > 0 {
		return "development"
	}
	return "unknown"
}

// health is METRICS 5's health on date d, checked in order.
func health(status string, ev Evaluation, giveBack30 bool, d Date) string {
	if status == "uninstalled" {
		return HealthChurned
	}
	if ev.InEffect != nil && ev.InEffect.State.State == StateFrozen {
		return HealthAtRisk
	}
	if ev.InEffect == nil {
		from := d.AddDays(-29).Start()
		for _, c := range ev.NonTest {
			if c.State.State == StateEnded && c.Facts.AmountCents > 0 && !c.State.Since.Before(from) && c.State.Since.Before(d.End()) {
				return HealthAtRisk
			}
		}
	}
	if giveBack30 || status == "deactivated" {
		return HealthAtRisk
	}
	if ev.Paying {
		return HealthHealthy
	}
	return HealthNotPaying
}
