package mcp_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/internal/testenv/pipeline"
	"github.com/revtrack/revtrack/query"
	querymcp "github.com/revtrack/revtrack/query/mcp"
	"github.com/revtrack/revtrack/query/reporting"
	"github.com/revtrack/revtrack/query/reporting/reportingtest"
	"github.com/revtrack/revtrack/query/tracking"
)

// goldenEnv is the query edge as `revtrack query` mounts it (REST and MCP on one engine, one
// reporting store) over hand-computed data sets of query/reporting/reportingtest, on their clock
// (reportingtest.Clock): every answer, generatedAt included, is then the same whichever door it
// came through, so REST and MCP are compared byte for byte.
type goldenEnv struct {
	url, key string
}

func goldenSetup(t *testing.T, apps []string, load func(fx *reportingtest.Fixture)) goldenEnv {
	t.Helper()
	ctx := testenv.Ctx(t)
	db := pipeline.Migrated(t)
	tenant := pipeline.Seed(t, db, "https://app.example")
	s := tenant.Store
	for _, app := range apps {
		if app == "app-1" { // seeded with the tracking source
			continue
		}
		if err := s.PutApp(ctx, "test", controlplane.App{ID: app, Name: app}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.SetSelectedApps(ctx, "test", "acme", apps); err != nil {
		t.Fatal(err)
	}
	key, _, err := s.CreateAPIKey(ctx, "test", "acme", "mcp", controlplane.ScopeRead)
	if err != nil {
		t.Fatal(err)
	}
	fx := reportingtest.New(db.Conn, tenant.Source.WorkspaceID)
	load(fx)
	fx.Flush(t)

	gin.SetMode(gin.TestMode)
	engine := gin.New()
	reports := reporting.New(db.Conn, reporting.WithClock(reportingtest.Clock))
	(&query.API{Keys: s, Sources: s, Tracking: tracking.New(db.Conn), Reporting: reports,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: reportingtest.Clock}).Register(engine)
	querymcp.New(querymcp.Deps{Reporting: reports, Keys: s, SyncRuns: querymcp.SyncRuns(db.Conn), Now: reportingtest.Clock}).Register(engine)
	srv := httptest.NewServer(engine)
	t.Cleanup(srv.Close)
	return goldenEnv{url: srv.URL, key: key}
}

// rest GETs path and returns its status and body.
func (e goldenEnv) rest(t *testing.T, path string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequestWithContext(testenv.Ctx(t), http.MethodGet, e.url+path, nil)
	req.Header.Set("Authorization", "Bearer "+e.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// goldenCase is a tool call and the REST path it reads as; refused: REST answers it 400.
type goldenCase struct {
	tool    string
	args    map[string]any
	rest    string
	refused bool
}

// check calls every case through mcp-go's client in both protocol eras and compares it with REST:
// a 200 must be answered with the same bytes, an error with a tool error carrying REST's message,
// status and code. It returns the answers (the same in both eras), by case.
func (e goldenEnv) check(t *testing.T, cases []goldenCase) []string {
	t.Helper()
	clients := map[string]*client.Client{}
	for _, protocol := range []string{"", mcp.ProtocolVersion20251125} {
		c, _, err := goClient(t, e.url+querymcp.Path, e.key, protocol)
		if err != nil {
			t.Fatal(err)
		}
		clients["mcp-go "+protocol] = c
	}
	answers := make([]string, len(cases))
	for i, c := range cases {
		status, body := e.rest(t, c.rest)
		if want := map[bool]int{false: http.StatusOK, true: http.StatusBadRequest}[c.refused]; status != want {
			t.Fatalf("REST %s: %d %s, want %d", c.rest, status, body, want)
		}
		for name, cl := range clients {
			got := callGo(t, cl, c.tool, c.args)
			answers[i] = got.Text
			if status == http.StatusOK {
				if got.IsError || got.Text != string(body) {
					t.Errorf("%s %s(%v) differs from REST %s:\n%s\n%s", name, c.tool, c.args, c.rest, got.Text, body)
				}
				continue
			}
			var er struct{ Error, Message string }
			if err := json.Unmarshal(body, &er); err != nil {
				t.Fatalf("REST %s: %d %s", c.rest, status, body)
			}
			if !got.IsError || !strings.Contains(got.Text, fmt.Sprintf("[HTTP %d %s]", status, er.Error)) ||
				!strings.Contains(got.Text, strings.TrimSuffix(er.Message, ".")) {
				t.Errorf("%s %s(%v): %+v, want the tool error of REST's %d %s", name, c.tool, c.args, got, status, body)
			}
		}
	}
	return answers
}

// get_attribution answers GET /api/v1/attribution's body byte for byte on the worked example of
// docs/METRICS.md 10.5, for every groupBy and filter, and its refusals are REST's.
func TestAttributionToolEqualsREST(t *testing.T) {
	e := goldenSetup(t, []string{"app-1", "app-2"}, func(fx *reportingtest.Fixture) { reportingtest.ExampleAttribution(fx) })
	const from, to = "2026-03-02", "2026-03-31"
	q := func(kv ...string) string {
		v := url.Values{}
		for i := 0; i < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return "/api/v1/attribution?" + v.Encode()
	}
	var cases []goldenCase
	for _, g := range reporting.AttributionGroups {
		cases = append(cases, goldenCase{tool: "get_attribution", args: map[string]any{"groupBy": g}, rest: q("groupBy", g)})
	}
	cases = append(cases,
		goldenCase{"get_attribution", map[string]any{"groupBy": "utm_campaign", "from": from, "to": to, "currency": "usd", "appId": "app-1"},
			q("groupBy", "utm_campaign", "from", from, "to", to, "currency", "usd", "appId", "app-1"), false},
		goldenCase{"get_attribution", map[string]any{"groupBy": "utm_source", "currency": "EUR"}, q("groupBy", "utm_source", "currency", "EUR"), false},
		goldenCase{"get_attribution", map[string]any{"groupBy": "tracker_ref", "appId": "app-2", "from": "2026-01-01", "to": "2026-02-28"},
			q("groupBy", "tracker_ref", "appId", "app-2", "from", "2026-01-01", "to", "2026-02-28"), false},
		// REST refusals: an app that is not selected, a date after today, from after to.
		goldenCase{"get_attribution", map[string]any{"groupBy": "utm_source", "appId": "app-9"}, q("groupBy", "utm_source", "appId", "app-9"), true},
		goldenCase{"get_attribution", map[string]any{"groupBy": "utm_source", "to": "2026-04-01"}, q("groupBy", "utm_source", "to", "2026-04-01"), true},
		goldenCase{"get_attribution", map[string]any{"groupBy": "utm_source", "from": to, "to": from}, q("groupBy", "utm_source", "from", to, "to", from), true},
	)
	answers := e.check(t, cases)

	// The default range of the worked example is 10.5's: its spring and unattributed rows, by hand.
	var out struct {
		Range struct{ From, To string }
		Rows  []attributionRow
	}
	if err := json.Unmarshal([]byte(answers[slices.Index(reporting.AttributionGroups, reporting.GroupUTMCampaign)]), &out); err != nil {
		t.Fatal(err)
	}
	if out.Range.From != from || out.Range.To != to {
		t.Fatalf("range %v, want 10.5's", out.Range)
	}
	rows := map[string]attributionRow{}
	for _, r := range out.Rows {
		k := r.Kind
		if r.Key != nil {
			k = *r.Key
		}
		rows[k] = r
	}
	spring, un := rows["spring"], rows[reporting.RowUnattributed]
	if spring.Acquisitions != 5 || spring.Installs != 4 || spring.Customers != 5 || spring.PayingCustomers != 5 ||
		spring.ByCurrency["USD"].MRRCents != 13600 || spring.ByCurrency["USD"].NetRevenueCents != 11166 || spring.ByCurrency["EUR"].MRRCents != 3900 {
		t.Errorf("spring row: %+v", spring)
	}
	if un.Customers != 2 || un.TrialsStarted != 1 || un.ByCurrency["USD"].MRRCents != 3800 {
		t.Errorf("unattributed row: %+v", un)
	}

	// Arguments the route refuses are refused by the tool's schema, before anything is read.
	c, _, err := goClient(t, e.url+querymcp.Path, e.key, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{}, "groupBy"},
		{map[string]any{"groupBy": "utm_term"}, "groupBy"},
		{map[string]any{"groupBy": "utm_source", "customerScope": "all"}, "customerScope"},
		{map[string]any{"groupBy": "utm_source", "currency": "dollars"}, "currency"},
	} {
		if r := callGo(t, c, "get_attribution", tc.args); !r.IsError || !strings.Contains(r.Text, tc.want) ||
			!strings.Contains(r.Text, "invalid arguments") {
			t.Errorf("get_attribution(%v): %+v, want a tool error naming %q", tc.args, r, tc.want)
		}
	}
}

// get_mrr_movements and list_mrr_movement_customers answer the bodies of GET /api/v1/mrr-movements
// and /mrr-movements/customers byte for byte on the data sets of their golden bodies
// (docs/METRICS.md 3.14: 3.7's customers in app-1, the lifecycle example in app-2 and app-3).
func TestMRRMovementToolsEqualREST(t *testing.T) {
	e := goldenSetup(t, []string{"app-1", "app-2", "app-3"}, func(fx *reportingtest.Fixture) {
		reportingtest.Example37(fx, "app-1")
		reportingtest.ExampleLifecycle(fx, "app-2", "app-3")
	})
	answers := e.check(t, []goldenCase{
		{"get_mrr_movements", map[string]any{}, "/api/v1/mrr-movements", false},
		{"get_mrr_movements", map[string]any{"interval": "week"}, "/api/v1/mrr-movements?interval=week", false},
		{"get_mrr_movements", map[string]any{"interval": "day", "currency": "USD", "appId": "app-2"},
			"/api/v1/mrr-movements?interval=day&currency=USD&appId=app-2", false},
		{"get_mrr_movements", map[string]any{"appId": "app-1", "customerScope": "all", "from": "2026-01-01", "to": "2026-03-31"},
			"/api/v1/mrr-movements?appId=app-1&customerScope=all&from=2026-01-01&to=2026-03-31", false},
		{"list_mrr_movement_customers", map[string]any{"interval": "day", "type": "churn", "period": "2026-03-10"},
			"/api/v1/mrr-movements/customers?interval=day&type=churn&period=2026-03-10", false},
		{"list_mrr_movement_customers", map[string]any{"interval": "day", "type": "reactivation", "period": "2026-03-15"},
			"/api/v1/mrr-movements/customers?interval=day&type=reactivation&period=2026-03-15", false},
		{"list_mrr_movement_customers", map[string]any{"type": "new", "period": "2026-03-31", "limit": 1, "customerScope": "all"},
			"/api/v1/mrr-movements/customers?type=new&period=2026-03-31&limit=1&customerScope=all", false},
		// REST refusals: a period outside the range, a cursor that is no nextCursor.
		{"list_mrr_movement_customers", map[string]any{"type": "churn", "period": "2026-02-10"},
			"/api/v1/mrr-movements/customers?type=churn&period=2026-02-10", true},
		{"list_mrr_movement_customers", map[string]any{"type": "churn", "period": "2026-03-10", "cursor": "x"},
			"/api/v1/mrr-movements/customers?type=churn&period=2026-03-10&cursor=x", true},
	})

	// 3.14's daily example: papa's churn on 03-10 is listed with its 2,900.
	var list struct {
		Type      string
		Date      string
		Customers []reporting.MovementCustomer
	}
	if err := json.Unmarshal([]byte(answers[4]), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Customers) == 0 || list.Type != reporting.MoveChurn || list.Date != "2026-03-10" {
		t.Errorf("churn on 2026-03-10: %s", answers[4])
	}
	papa := slices.IndexFunc(list.Customers, func(c reporting.MovementCustomer) bool { return c.Domain == "papa.myshopify.com" })
	if papa < 0 || list.Customers[papa].MovementCents != -2900 {
		t.Errorf("churn on 2026-03-10: %s, want papa's churn of 2,900", answers[4])
	}

	c, _, err := goClient(t, e.url+querymcp.Path, e.key, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"get_mrr_movements", map[string]any{"interval": "hour"}, "interval"},
		{"get_mrr_movements", map[string]any{"customerScope": "everyone"}, "customerScope"},
		{"list_mrr_movement_customers", map[string]any{"period": "2026-03-10"}, "type"},
		{"list_mrr_movement_customers", map[string]any{"type": "churn"}, "period"},
		{"list_mrr_movement_customers", map[string]any{"type": "lost", "period": "2026-03-10"}, "type"},
		{"list_mrr_movement_customers", map[string]any{"type": "churn", "period": "2026-03-10", "limit": 201}, "limit"},
	} {
		if r := callGo(t, c, tc.tool, tc.args); !r.IsError || !strings.Contains(r.Text, tc.want) {
			t.Errorf("%s(%v): %+v, want a tool error naming %q", tc.tool, tc.args, r, tc.want)
		}
	}
}

// attributionRow is what the tests read of an attribution row.
type attributionRow struct {
	Kind                                                              string
	Key                                                               *string
	Acquisitions, Installs, TrialsStarted, Customers, PayingCustomers int64
	ByCurrency                                                        map[string]reporting.AttributionMoney
}
