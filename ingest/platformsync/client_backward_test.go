package platformsync

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/revtrack/revtrack/devtools/partnerfake"
)

// The backward queries derived from TransactionsQuery and EventsQuery validate against the fake's
// schema, and paging backwards from the newest record visits every record of the window once, in
// exactly the reverse of the forward order.
func TestBackwardPagingMirrorsForward(t *testing.T) {
	cfg := partnerfake.DemoConfig(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	cfg.Apps, cfg.Shops = 1, 30
	cfg.Start = cfg.End.AddDate(0, -3, 0)
	ds := partnerfake.Generate(cfg)
	scfg := partnerfake.DefaultServerConfig()
	scfg.RequestsPerSecond = 0
	srv := httptest.NewServer(partnerfake.NewServer(ds, scfg))
	defer srv.Close()
	ctx := context.Background()
	app := ds.Apps[0].ID
	from, to := cfg.Start.AddDate(0, 1, 0), cfg.End.AddDate(0, 0, -10)

	for _, version := range []string{"2025-07", "unstable"} {
		c := &Client{BaseURL: srv.URL, OrgID: scfg.OrgID, Token: scfg.Tokens[0], Version: version, PageSize: 7}
		var fwd, bwd []string
		for after, more := "", true; more; {
			p, err := c.Transactions(ctx, app, from, to, 0, after)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range p.Nodes {
				fwd = append(fwd, n.ID)
			}
			after, more = p.Cursor(), p.HasNextPage
		}
		for before, more := "", true; more; {
			p, err := c.TransactionsBefore(ctx, app, from, to, 0, before)
			if err != nil {
				t.Fatalf("%s: %v", version, err)
			}
			for i := len(p.Nodes) - 1; i >= 0; i-- {
				bwd = append(bwd, p.Nodes[i].ID)
			}
			if len(p.Nodes) > 0 && p.Nodes[0].GrossAmount == nil {
				t.Fatal("the backward query lost the transaction fields")
			}
			before, more = p.Oldest(), p.HasPreviousPage
		}
		slices.Reverse(bwd)
		if len(fwd) < 20 || !slices.Equal(fwd, bwd) {
			t.Fatalf("%s: forward %d transactions, backward %d, not the same sequence", version, len(fwd), len(bwd))
		}
	}

	c := &Client{BaseURL: srv.URL, OrgID: scfg.OrgID, Token: scfg.Tokens[0], Version: "2025-07", PageSize: 9}
	var fwd, bwd []string
	key := func(n EventNode) string { return n.Type + n.OccurredAt.String() + n.Shop.ID }
	for after, more := "", true; more; {
		p, err := c.Events(ctx, app, from, to, 0, after)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range p.Nodes {
			fwd = append(fwd, key(n))
		}
		after, more = p.Cursor(), p.HasNextPage
	}
	for before, more := "", true; more; {
		p, err := c.EventsBefore(ctx, app, from, to, 0, before)
		if err != nil {
			t.Fatal(err)
		}
		for i := len(p.Nodes) - 1; i >= 0; i-- {
			bwd = append(bwd, key(p.Nodes[i]))
		}
		before, more = p.Oldest(), p.HasPreviousPage
	}
	slices.Reverse(bwd)
	if len(fwd) < 20 || !slices.Equal(fwd, bwd) {
		t.Fatalf("events: forward %d, backward %d, not the same sequence", len(fwd), len(bwd))
	}
}

func TestBackwardQueryRefusesAnUnexpectedShape(t *testing.T) {
	if _, err := backwardQuery(strings.Replace(EventsQuery, "first: $first, after: $after", "after: $after, first: $first", 1)); err == nil {
		t.Fatal("derived a backward query from a query whose paging arguments moved")
	}
}
