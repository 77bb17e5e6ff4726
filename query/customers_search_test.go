package query_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// listedCustomer is what the search tests compare of a list item.
type listedCustomer struct {
	ID, Name, Domain string
	Paying           bool
}

// allPages follows nextCursor from path (which has its own query) and returns every listed customer
// and the number of pages read.
func (e rptEnv) allPages(t *testing.T, path string) ([]listedCustomer, int) {
	t.Helper()
	var out []listedCustomer
	pages := 0
	for next := path; next != ""; pages++ {
		status, body, _ := e.get(t, e.url, next, e.key)
		if status != http.StatusOK {
			t.Fatalf("%s: %d %s", next, status, body)
		}
		var page struct {
			Customers  []listedCustomer
			NextCursor *string
		}
		if err := json.Unmarshal(body, &page); err != nil {
			t.Fatal(err)
		}
		out = append(out, page.Customers...)
		next = ""
		if page.NextCursor != nil {
			next = path + "&cursor=" + url.QueryEscape(*page.NextCursor)
		}
	}
	return out, pages
}

func ids(cs []listedCustomer) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

// TestCustomersSearchAndPaying: q finds customers by shop domain or name in any case, paying=true
// and paying=false partition the list, and paging with the filters lists every match exactly once,
// in ID order, whatever the page size (limit 1 makes the paying filter stop at its scan bound).
func TestCustomersSearchAndPaying(t *testing.T) {
	e := rptSetup(t)
	all, _ := e.allPages(t, "/api/v1/customers?customerScope=all&limit=200")
	if len(all) != len(e.customers) {
		t.Fatalf("all: %d customers, want %d", len(all), len(e.customers))
	}
	only := func(keys ...string) []string {
		var out []string
		for _, k := range keys {
			out = append(out, e.customers[k].ID())
		}
		slices.Sort(out)
		return out
	}
	for _, tc := range []struct {
		name, q string
		want    []string
	}{
		{"domain", "alpha.my", only("alpha")},
		{"domain upper case", "ALPHA.MyShopify", only("alpha")},
		{"name only", "uNiForm", only("uniform-app-2", "uniform-app-3")}, // their domain is shared.myshopify.com
		// alpha's first version was named "Alpha Shop", its latest "Alpha": only the latest counts.
		{"a former name", "alpha shop", nil},
		{"trimmed", "  PAPA  ", only("papa")},
		{"no match", "zzz-nothing", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, pages := e.allPages(t, "/api/v1/customers?customerScope=all&q="+url.QueryEscape(tc.q))
			if !slices.Equal(ids(got), tc.want) || pages != 1 {
				t.Fatalf("q=%q: %v in %d pages, want %v", tc.q, ids(got), pages, tc.want)
			}
		})
	}
	status, body, _ := e.get(t, e.url, "/api/v1/customers?q=zzz-nothing", e.key)
	if status != http.StatusOK || !strings.Contains(string(body), `"customers":[],"nextCursor":null`) {
		t.Fatalf("no match: %d %s", status, body)
	}

	// paying=true and paying=false partition the list; each holds what its flag says; paging visits
	// every match exactly once, in ID order, for any page size.
	for _, limit := range []string{"1", "2", "200"} {
		paying, pPages := e.allPages(t, "/api/v1/customers?customerScope=all&paying=true&limit="+limit)
		notPaying, _ := e.allPages(t, "/api/v1/customers?customerScope=all&paying=false&limit="+limit)
		for _, c := range paying {
			if !c.Paying {
				t.Fatalf("limit %s: paying=true lists %s, not paying", limit, c.ID)
			}
		}
		for _, c := range notPaying {
			if c.Paying {
				t.Fatalf("limit %s: paying=false lists %s, paying", limit, c.ID)
			}
		}
		union := append(ids(paying), ids(notPaying)...)
		slices.Sort(union)
		if !slices.Equal(union, ids(all)) || !slices.IsSorted(ids(paying)) || !slices.IsSorted(ids(notPaying)) || len(paying) == 0 {
			t.Fatalf("limit %s: paying %v + not paying %v != all %v", limit, ids(paying), ids(notPaying), ids(all))
		}
		t.Logf("limit %s: %d paying customers in %d pages, %d not paying, of %d", limit, len(paying), pPages, len(notPaying), len(all))
	}

	// q and paying together, with the excluded customers too and paging by one: the unfiltered list
	// filtered here.
	var want []string
	for _, c := range all {
		if !c.Paying && (strings.Contains(c.Domain, "o") || strings.Contains(strings.ToLower(c.Name), "o")) {
			want = append(want, c.ID)
		}
	}
	got, _ := e.allPages(t, "/api/v1/customers?customerScope=all&q=O&paying=false&limit=1")
	if !slices.Equal(ids(got), want) || len(want) < 2 {
		t.Fatalf("q=O&paying=false: %v, want %v", ids(got), want)
	}
	// The excluded scope searches too (golf is the excluded customer).
	got, _ = e.allPages(t, "/api/v1/customers?customerScope=excluded&q=GOLF")
	if !slices.Equal(ids(got), []string{e.customers["golf"].ID()}) {
		t.Fatalf("excluded golf: %v", ids(got))
	}
	got, _ = e.allPages(t, "/api/v1/customers?q=golf")
	if len(got) != 0 {
		t.Fatalf("included golf: %v", ids(got))
	}

	for _, tc := range []struct{ name, path string }{
		{"customers_search", "/api/v1/customers?q=UNIFORM"},
		{"customers_paying", "/api/v1/customers?paying=true&limit=2"},
	} {
		status, body, _ := e.get(t, e.url, tc.path, e.key)
		if status != http.StatusOK {
			t.Fatalf("%s: %d %s", tc.path, status, body)
		}
		rptGolden(t, tc.name, body)
		checkShape(t, "customers", body)
	}
}

// TestCustomersSearchErrors: an empty, blank or too long (over 100 characters) q and a paying other than true or false are
// refused with 400 invalid_parameter.
func TestCustomersSearchErrors(t *testing.T) {
	e := rptSetup(t)
	for _, p := range []string{"q=", "q=%20%20", "q=" + strings.Repeat("a", 101), "paying=yes", "paying=", "paying=TRUE"} {
		status, body, _ := e.get(t, e.url, "/api/v1/customers?"+p, e.key)
		var r struct{ Error, Message string }
		_ = json.Unmarshal(body, &r)
		if status != http.StatusBadRequest || r.Error != "invalid_parameter" || r.Message == "" {
			t.Fatalf("%s: %d %s", p, status, body)
		}
	}
	// 100 characters are accepted, spaces included.
	if status, body, _ := e.get(t, e.url, "/api/v1/customers?q=+"+strings.Repeat("a", 98)+"+", e.key); status != http.StatusOK {
		t.Fatalf("q of 100: %d %s", status, body)
	}
}
