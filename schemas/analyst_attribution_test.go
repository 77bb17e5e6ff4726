package schemas_test

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/internal/testenv/pipeline"
	"github.com/revtrack/revtrack/query/reporting"
	"github.com/revtrack/revtrack/query/reporting/reportingtest"
	"github.com/revtrack/revtrack/schemas"
)

// analyst_customer_attribution (migration 0021, docs/ANALYSTS.md) over the attribution golden
// dataset of docs/METRICS.md 10.5 (reportingtest.ExampleAttribution): each customer's status and
// channel as computed by hand, and per channel the same customers as the reporting API's rows, for
// every groupBy, on ClickHouse 18.16 and on current ClickHouse.

// attributionRange is the range of METRICS 10.5 (customers do not depend on it: a row's customers
// are counted whatever their install date, METRICS 10.3).
var attributionRange = reporting.Range{From: reporting.MustDate("2026-03-02"), To: reporting.MustDate("2026-03-31")}

// viewColumn is the view's column for each groupBy: the API's channel key (METRICS 10.1).
var viewColumn = map[string]string{
	reporting.GroupUTMSource: "utm_source", reporting.GroupUTMMedium: "utm_medium", reporting.GroupUTMCampaign: "utm_campaign",
	reporting.GroupTrackerRef: "tracker_ref", reporting.GroupClickIDType: "click_id_type", reporting.GroupLandingPath: "landing_path",
}

// attributionCountsSQL counts the view's included customers per API row: "channel:<key>" for an
// attributed customer, its status otherwise, as one sorted string "row=n,…" (compared on both
// engines). Arguments: the view column.
const attributionCountsSQL = `SELECT arrayStringConcat(arraySort(groupArray(concat(row, '=', toString(n)))), ',') FROM (
    SELECT if(status = 'attributed', concat('channel:', %s), status) AS row, count() AS n
    FROM analyst_customer_attribution
    WHERE workspace_id = 'ws' AND app_id IN ('app-1', 'app-2') AND excluded = 0
    GROUP BY row)`

// apiCounts is the same string from the API's rows (rows without customers left out).
func apiCounts(t *testing.T, store *reporting.Store, groupBy string) string {
	t.Helper()
	out, err := store.Attribution(testenv.Ctx(t), reporting.AttributionRequest{
		Scope: reporting.Scope{WorkspaceID: "ws", AppIDs: []string{"app-1", "app-2"}}, Range: attributionRange, GroupBy: groupBy})
	if err != nil {
		t.Fatal(err)
	}
	var cells []string
	for _, r := range out.Rows {
		if r.Customers == 0 {
			continue
		}
		name := r.Kind
		if r.Kind == reporting.RowChannel {
			name = "channel:" + *r.Key
		}
		cells = append(cells, fmt.Sprintf("%s=%d", name, r.Customers))
	}
	slices.Sort(cells)
	return strings.Join(cells, ",")
}

func viewCounts(t *testing.T, conn driver.Conn, groupBy string) string {
	t.Helper()
	var s string
	if err := conn.QueryRow(testenv.Ctx(t), fmt.Sprintf(attributionCountsSQL, viewColumn[groupBy])).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// attributionRow is one customer's row of the view, as compared.
type attributionRow struct {
	Status, UTMSource, UTMMedium, UTMCampaign, TrackerRef, ClickIDType, LandingPath string
	Acquisition                                                                     string // source/ID of the first link, "" without one
	Excluded                                                                        uint8
	FirstSeen                                                                       string // "" = null
}

func viewRows(t *testing.T, conn driver.Conn) map[string]attributionRow {
	t.Helper()
	rows, err := conn.Query(testenv.Ctx(t), `SELECT public_id, status, utm_source, utm_medium, utm_campaign, tracker_ref, click_id_type,
landing_path, acquisition_source_id, acquisition_id, excluded, first_seen_at FROM analyst_customer_attribution WHERE workspace_id = 'ws'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]attributionRow{}
	for rows.Next() {
		var (
			id, src, acq string
			r            attributionRow
			seen         *time.Time
		)
		if err := rows.Scan(&id, &r.Status, &r.UTMSource, &r.UTMMedium, &r.UTMCampaign, &r.TrackerRef, &r.ClickIDType, &r.LandingPath,
			&src, &acq, &r.Excluded, &seen); err != nil {
			t.Fatal(err)
		}
		if acq != "" {
			r.Acquisition = src + "/" + acq
		}
		if seen != nil {
			r.FirstSeen = seen.UTC().Format(time.RFC3339)
		}
		out[id] = r
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestAnalystCustomerAttribution checks every customer of METRICS 10.5 by hand, then the per-channel
// counts against the API for every groupBy, before and after juliet's browser history lands.
func TestAnalystCustomerAttribution(t *testing.T) {
	db := pipeline.Migrated(t)
	fx := reportingtest.New(db.Conn, "ws")
	customers := reportingtest.ExampleAttribution(fx)
	fx.Flush(t)
	store := reporting.New(db.Conn, reporting.WithClock(reportingtest.Clock))

	spring := func(source, medium, click, path, acq, seen string) attributionRow {
		return attributionRow{Status: "attributed", UTMSource: source, UTMMedium: medium, UTMCampaign: "spring", ClickIDType: click,
			LandingPath: path, Acquisition: "src-1a/" + acq, FirstSeen: seen}
	}
	alpha := spring("google", "cpc", "gclid", "/pricing", "acq-alpha", "2026-03-03T10:00:00Z")
	alpha.TrackerRef = "partner-a"
	hotel := spring("", "", "none", "", "acq-hotel", "2026-03-10T08:00:00Z")
	hotel.Excluded = 1
	want := map[string]attributionRow{
		"oscar":   {Status: "unattributed"},
		"alpha":   alpha,
		"bravo":   spring("google", "", "gbraid", "/", "acq-bravo", "2026-03-05T08:00:00Z"),
		"charlie": {Status: "attributed", UTMSource: "google", UTMCampaign: "brand", ClickIDType: "wbraid", LandingPath: "/", Acquisition: "src-1a/acq-charlie", FirstSeen: "2026-03-07T08:00:00Z"},
		"delta":   spring("newsletter", "email", "none", "/blog/post", "acq-delta", "2026-02-20T08:00:00Z"),
		// The first link (e1, 11:00) wins over e2, linked at 12:00 though seen earlier.
		"echo":    {Status: "attributed", UTMSource: "facebook", UTMCampaign: "summer", ClickIDType: "none", Acquisition: "src-1a/acq-e1", FirstSeen: "2026-03-08T09:00:00Z"},
		"foxtrot": spring("google", "", "none", "", "acq-fox", "2026-03-02T08:00:00Z"),
		// Linked, but the browser was first seen after the install: no channel, the link still shown.
		"golf":    {Status: "unattributed", Acquisition: "src-1a/acq-golf", FirstSeen: "2026-03-12T08:00:00Z"},
		"hotel":   hotel,
		"india-1": spring("", "", "none", "", "acq-i1", "2026-03-04T08:00:00Z"),
		"india-2": {Status: "attributed", UTMCampaign: "summer", ClickIDType: "none", Acquisition: "src-2/acq-i2", FirstSeen: "2026-03-04T08:00:00Z"},
		"juliet":  {Status: "no_browser_history", Acquisition: "src-1a/acq-juliet"},
		"kilo":    {Status: "before_tracking"},
		"lima":    {Status: "before_tracking"},
	}
	check := func(want map[string]attributionRow) {
		t.Helper()
		got := viewRows(t, db.Conn)
		if len(got) != len(want) {
			t.Errorf("%d rows, want %d: %v", len(got), len(want), slices.Sorted(maps.Keys(got)))
		}
		for name, w := range want {
			if g := got[customers[name].ID()]; !reflect.DeepEqual(g, w) {
				t.Errorf("%s:\n got %+v\nwant %+v", name, g, w)
			}
		}
		for _, g := range reporting.AttributionGroups {
			if v, a := viewCounts(t, db.Conn, g), apiCounts(t, store, g); v != a {
				t.Errorf("groupBy %s: the view counts %s, the API %s", g, v, a)
			}
		}
	}
	check(want)
	// Hand-computed from METRICS 10.5 as well, so that the API and the view cannot agree on a mistake.
	if got := viewCounts(t, db.Conn, reporting.GroupUTMCampaign); got !=
		"before_tracking=2,channel:brand=1,channel:spring=5,channel:summer=2,no_browser_history=1,unattributed=2" {
		t.Errorf("by campaign: %s", got)
	}
	if got := viewCounts(t, db.Conn, reporting.GroupClickIDType); got !=
		"before_tracking=2,channel:gbraid=1,channel:gclid=1,channel:none=5,channel:wbraid=1,no_browser_history=1,unattributed=2" {
		t.Errorf("by click ID type: %s", got)
	}

	checkNetRevenueExample(t, db.Conn, store)

	// Late browser history attributes when the view is read again: juliet moves to summer.
	reportingtest.JulietLateHistory(fx)
	fx.Flush(t)
	want["juliet"] = attributionRow{Status: "attributed", UTMCampaign: "summer", ClickIDType: "none", Acquisition: "src-1a/acq-juliet",
		FirstSeen: "2026-03-15T09:00:00Z"}
	check(want)
}

// TestAnalystCustomerAttributionOnCurrentClickHouse writes the same dataset on current ClickHouse
// (the rows of the tables the view reads, copied from 18.16 as INSERT statements, so the
// materialized views fill acquisitions and shop_attribution there as here) and checks that the view
// counts there what the API answers on 18.16.
func TestAnalystCustomerAttributionOnCurrentClickHouse(t *testing.T) {
	db := pipeline.Migrated(t)
	fx := reportingtest.New(db.Conn, "ws")
	reportingtest.ExampleAttribution(fx)
	fx.Flush(t)
	store := reporting.New(db.Conn, reporting.WithClock(reportingtest.Clock))

	statements, err := schemas.MigrationStatements()
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"platform_customers", "customer_exclusions", "browser_events", "acquisition_links"} {
		statements = append(statements, insertsOf(t, db.Conn, table)...)
	}
	for _, g := range reporting.AttributionGroups {
		want := apiCounts(t, store, g)
		if !strings.Contains(want, "channel:") {
			t.Fatalf("groupBy %s: the API credits no channel (%s): the dataset did not land", g, want)
		}
		statements = append(statements, fmt.Sprintf("SELECT throwIf(got != '%s') FROM (SELECT (%s) AS got)", want,
			fmt.Sprintf(attributionCountsSQL, viewColumn[g])))
	}
	// A count that does not hold proves that a failing check is reported.
	const control = "SELECT throwIf(got != 'attribution_control') FROM (SELECT 'x' AS got)"
	statements = append(statements, control)
	_, failures := testenv.OnCurrentClickHouse(t, statements)
	if len(failures) != 1 || !strings.Contains(failures[0].Statement, "attribution_control") {
		t.Fatalf("want only the control statement rejected, got %+v", failures)
	}
}

// insertsOf renders a table's rows as INSERT … VALUES statements for another engine: strings,
// numbers, times (UTC), their nullable forms and arrays of strings, the types of the tables copied.
func insertsOf(t *testing.T, conn driver.Conn, table string) []string {
	t.Helper()
	rows, err := conn.Query(testenv.Ctx(t), "SELECT * FROM "+table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols := rows.Columns()
	types := rows.ColumnTypes()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		for i, ct := range types {
			vals[i] = reflect.New(ct.ScanType()).Interface()
		}
		if err := rows.Scan(vals...); err != nil {
			t.Fatal(err)
		}
		lits := make([]string, len(vals))
		for i, v := range vals {
			lits[i] = literal(t, table+"."+cols[i], reflect.ValueOf(v).Elem().Interface())
		}
		out = append(out, fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", table, strings.Join(cols, ", "), strings.Join(lits, ", ")))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("%s has no rows to copy", table)
	}
	return out
}

func literal(t *testing.T, col string, v any) string {
	t.Helper()
	quote := func(s string) string { return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'" }
	switch x := v.(type) {
	case string:
		return quote(x)
	case time.Time:
		return fmt.Sprintf("toDateTime(%d, 'UTC')", x.Unix())
	case *time.Time:
		if x == nil {
			return "NULL"
		}
		return fmt.Sprintf("toDateTime(%d, 'UTC')", x.Unix())
	case *int64:
		if x == nil {
			return "NULL"
		}
		return fmt.Sprint(*x)
	case *string:
		if x == nil {
			return "NULL"
		}
		return quote(*x)
	case []string:
		q := make([]string, len(x))
		for i, s := range x {
			q[i] = quote(s)
		}
		return "[" + strings.Join(q, ", ") + "]"
	case uint8, uint16, uint32, uint64, int8, int16, int32, int64:
		return fmt.Sprint(x)
	}
	t.Fatalf("%s: no literal for %T", col, v)
	return ""
}

// checkNetRevenueExample runs the example of docs/ANALYSTS.md that adds up net revenue per campaign,
// for workspace ws under the slug acme and with today = the range's end, and compares it with the
// API's netRevenueCents per row and currency (blocks without net revenue left out: the example has a
// row only where there are transactions).
func checkNetRevenueExample(t *testing.T, conn driver.Conn, store *reporting.Store) {
	t.Helper()
	ctx := testenv.Ctx(t)
	doc, err := os.ReadFile(filepath.Join("..", "docs", "ANALYSTS.md"))
	if err != nil {
		t.Fatal(err)
	}
	var example string
	for _, block := range strings.Split(string(doc), "```sql\n")[1:] {
		if q, _, _ := strings.Cut(block, "```"); strings.Contains(q, "FROM analyst_customer_attribution") && strings.Contains(q, "net_cents") {
			example = q
		}
	}
	if example == "" {
		t.Fatal("docs/ANALYSTS.md has no example adding up net revenue per campaign")
	}
	example = strings.ReplaceAll(example, "today()", "toDate('"+attributionRange.To.String()+"')")
	if err := conn.Exec(ctx, `INSERT INTO workspaces (workspace_id, slug, name, subscription_status, selected_app_ids, created_at,
updated_at, version) SELECT 'ws', 'acme', 'Acme', 'active', ['app-1', 'app-2'], now(), now(), 1`); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(ctx, example)
	if err != nil {
		t.Fatalf("%s\n: %v", example, err)
	}
	defer rows.Close()
	got := map[string]int64{}
	for rows.Next() {
		var (
			status, campaign, currency string
			net                        int64
			customers                  uint64
		)
		if err := rows.Scan(&status, &campaign, &currency, &net, &customers); err != nil {
			t.Fatal(err)
		}
		row := status
		if status == "attributed" {
			row = "channel:" + campaign
		}
		got[row+" "+currency] += net
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	api, err := store.Attribution(ctx, reporting.AttributionRequest{Scope: reporting.Scope{WorkspaceID: "ws", AppIDs: []string{"app-1", "app-2"}},
		Range: attributionRange, GroupBy: reporting.GroupUTMCampaign})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{}
	for _, r := range api.Rows {
		row := r.Kind
		if r.Kind == reporting.RowChannel {
			row = "channel:" + *r.Key
		}
		for cur, m := range r.ByCurrency {
			if m.NetRevenueCents != 0 {
				want[row+" "+cur] = m.NetRevenueCents
			}
		}
	}
	// METRICS 10.5: spring USD 11,166 and EUR 3,202; summer 4,762; brand 410; unattributed 3,120; juliet's 1,560.
	if !reflect.DeepEqual(got, want) || got["channel:spring USD"] != 11166 || got["channel:spring EUR"] != 3202 {
		t.Errorf("net revenue per campaign: the example adds up %v, the API %v", got, want)
	}
}
