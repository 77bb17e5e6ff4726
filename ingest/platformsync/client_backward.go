package platformsync

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Backward pages: the backward walk reads each window newest first (`last`/`before`), so that a
// row limit keeps the newest records and progress inside a window is exact. The queries are
// TransactionsQuery and EventsQuery with only their paging arguments swapped, so both walks always
// select the same fields.

// BackwardPage is one page read backwards: Nodes in ascending order (as the API returns them),
// HasPreviousPage when older records match the filter.
type BackwardPage[T any] struct {
	Nodes           []T
	Cursors         []string
	HasPreviousPage bool
}

// Oldest returns the cursor of the page's oldest record ("" when empty).
func (p BackwardPage[T]) Oldest() string {
	if len(p.Cursors) == 0 {
		return ""
	}
	return p.Cursors[0]
}

type backwardConnection[T any] struct {
	Edges []struct {
		Cursor string `json:"cursor"`
		Node   T      `json:"node"`
	} `json:"edges"`
	PageInfo struct {
		HasPreviousPage bool `json:"hasPreviousPage"`
	} `json:"pageInfo"`
}

func (c backwardConnection[T]) page() BackwardPage[T] {
	p := BackwardPage[T]{HasPreviousPage: c.PageInfo.HasPreviousPage}
	for _, e := range c.Edges {
		p.Nodes = append(p.Nodes, e.Node)
		p.Cursors = append(p.Cursors, e.Cursor)
	}
	return p
}

// backwardQuery turns a forward query (variables $first/$after) into the same query paging
// backwards. It fails if the forward query no longer has the expected paging text, which
// client_backward_test.go would catch first.
func backwardQuery(q string) (string, error) {
	swaps := [][2]string{
		{"$first: Int, $after: String", "$last: Int, $before: String"},
		{"first: $first, after: $after", "last: $last, before: $before"},
		{"pageInfo { hasNextPage }", "pageInfo { hasPreviousPage }"},
	}
	for _, s := range swaps {
		if strings.Count(q, s[0]) != 1 {
			return "", fmt.Errorf("partner api: cannot derive a backward query: %q occurs %d times", s[0], strings.Count(q, s[0]))
		}
		q = strings.Replace(q, s[0], s[1], 1)
	}
	return q, nil
}

// TransactionsBefore returns the page of the app's transactions in [min, max] (inclusive) just
// before the cursor (the newest ones when before is ""). last <= 0 means PageSize.
func (c *Client) TransactionsBefore(ctx context.Context, appID string, min, max time.Time, last int, before string) (BackwardPage[TransactionNode], error) {
	q, err := backwardQuery(TransactionsQuery(c.hasProcessingFee()))
	if err != nil {
		return BackwardPage[TransactionNode]{}, err
	}
	if last <= 0 {
		last = c.pageSize()
	}
	var out struct {
		Transactions *backwardConnection[TransactionNode] `json:"transactions"`
	}
	vars := map[string]any{"appId": appID, "createdAtMin": timeVar(min), "createdAtMax": timeVar(max), "last": last, "before": strVar(before)}
	if err := c.Do(ctx, q, vars, &out); err != nil {
		return BackwardPage[TransactionNode]{}, err
	}
	if out.Transactions == nil {
		return BackwardPage[TransactionNode]{}, &GraphQLError{Ours: "transactions is null"}
	}
	return out.Transactions.page(), nil
}

// EventsBefore returns the page of the app's events in [min, max] just before the cursor.
func (c *Client) EventsBefore(ctx context.Context, appID string, min, max time.Time, last int, before string) (BackwardPage[EventNode], error) {
	q, err := backwardQuery(EventsQuery)
	if err != nil {
		return BackwardPage[EventNode]{}, err
	}
	if last <= 0 {
		last = c.pageSize()
	}
	var out struct {
		App *struct {
			Events *backwardConnection[EventNode] `json:"events"`
		} `json:"app"`
	}
	vars := map[string]any{"appId": appID, "occurredAtMin": timeVar(min), "occurredAtMax": timeVar(max), "last": last, "before": strVar(before)}
	if err := c.Do(ctx, q, vars, &out); err != nil {
		return BackwardPage[EventNode]{}, err
	}
	if out.App == nil || out.App.Events == nil {
		return BackwardPage[EventNode]{}, &GraphQLError{Ours: "app " + clip(appID) + " not found or has no events"}
	}
	return out.App.Events.page(), nil
}
