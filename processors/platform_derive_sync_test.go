package processors

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/revtrack/revtrack/devtools/partnerfake"
	"github.com/revtrack/revtrack/internal/testenv"
)

// TestPlatformSyncDerivesTruth syncs the generated dataset from the fake partner API and checks
// every derived customer, charge and usage charge against what the generator decided.
func TestPlatformSyncDerivesTruth(t *testing.T) {
	cfg := partnerfake.DemoConfig(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	cfg.Apps, cfg.Shops, cfg.TestShopRate = 1, 80, 0.15 // development stores: test charges and usage records
	cfg.Start = cfg.End.AddDate(0, -6, 0)
	pe := setupPlatformWith(t, noLimit(), partnerfake.Generate(cfg))
	ctx := testenv.Ctx(t)
	if _, err := pe.syncer.Run(ctx, "acme", pe.app, "manual"); err != nil {
		t.Fatal(err)
	}
	pe.checkLanded(t)

	want := pe.truthRows()
	deadline := time.Now().Add(30 * time.Second)
	for {
		diff := diffRows(want, pe.derivedRows(t))
		if len(diff) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d derived rows differ from the truth, e.g.:\n%s", len(diff), strings.Join(diff[:min(len(diff), 15)], "\n"))
		}
		time.Sleep(200 * time.Millisecond)
	}
	var tests, usage uint64
	if err := pe.ch.QueryRow(ctx, "SELECT countIf(test = 1), count() FROM platform_usage_charges FINAL").Scan(&tests, &usage); err != nil {
		t.Fatal(err)
	}
	if usage == 0 || tests == 0 {
		t.Errorf("the dataset has %d usage records, %d of them test; the check needs both kinds", usage, tests)
	}
	t.Logf("%d customers, %d charges, %d usage charges (%d test) derived as the truth says", len(want.customers), len(want.charges), usage, tests)
}

type truthRows struct {
	customers map[string]string // customer ID -> status|first install|domain|name
	charges   map[string]string // charge ID -> kind|status|end reason|test|activated|ended|interval
	usage     map[string]string // usage record count per customer and test flag
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// truthRows is what the derived tables must hold for the synced app, from partnerfake's Truth.
func (pe *platformEnv) truthRows() truthRows {
	out := truthRows{customers: map[string]string{}, charges: map[string]string{}, usage: map[string]string{}}
	// The truth has no end time for one-time charges: the decline or expiry event has it.
	oneTimeEnded := map[string]time.Time{}
	for e := range pe.ds.Events(0) {
		if e.AppID == pe.app && (e.Type == "ONE_TIME_CHARGE_DECLINED" || e.Type == "ONE_TIME_CHARGE_EXPIRED") {
			oneTimeEnded[e.Charge.ID] = e.OccurredAt
		}
	}
	for _, c := range pe.ds.Truth.Customers {
		if c.AppID != pe.app {
			continue
		}
		status := customerInstalled
		if last := c.Installs[len(c.Installs)-1]; !last.To.IsZero() {
			status = customerUninstalled
		}
		out.customers[c.ShopID] = strings.Join([]string{status, fmtTime(c.Installs[0].From), c.ShopDomain, c.ShopName}, "|")
		for _, s := range c.Subscriptions {
			if s.ActivatedAt.IsZero() && s.EndedAt.IsZero() {
				continue // still awaiting approval at End: the generator emitted no event for it
			}
			status, reason := chargeActive, ""
			switch s.EndReason {
			case "DECLINED", "EXPIRED":
				status, reason = strings.ToLower(s.EndReason), strings.ToLower(s.EndReason)
			case "REPLACED", "CANCELED":
				status, reason = chargeCanceled, chargeCanceled
			case "UNINSTALLED":
				status, reason = chargeCanceled, endUninstalled
			case "":
				if n := len(s.Frozen); n > 0 && s.Frozen[n-1].To.IsZero() {
					status = chargeFrozen
				}
			}
			interval := ""
			for _, p := range s.Periods {
				if p.TransactionID != "" {
					interval = strings.ToLower(s.Interval)
				}
			}
			out.charges[s.ChargeID] = strings.Join([]string{kindSubscription, status, reason, fmt.Sprint(s.Test), fmtTime(s.ActivatedAt),
				fmtTime(s.EndedAt), interval}, "|")
		}
		for _, o := range c.OneTimeCharges {
			status := map[string]string{"ACTIVATED": chargeActive, "DECLINED": chargeDeclined, "EXPIRED": chargeExpired, "": chargePending}[o.Outcome]
			reason, ended := "", time.Time{}
			if status == chargeDeclined || status == chargeExpired {
				reason, ended = status, oneTimeEnded[o.ChargeID]
			}
			out.charges[o.ChargeID] = strings.Join([]string{kindOneTime, status, reason, fmt.Sprint(c.Test), fmtTime(o.ActivatedAt),
				fmtTime(ended), ""}, "|")
		}
	}
	for e := range pe.ds.Events(0) {
		if e.AppID == pe.app && e.Type == usageChargeApplied {
			out.usage[e.ShopID+"|"+fmt.Sprint(e.Charge.Test)] = fmt.Sprint(atoiOr(out.usage[e.ShopID+"|"+fmt.Sprint(e.Charge.Test)]) + 1)
		}
	}
	return out
}

func atoiOr(s string) int {
	var n int
	fmt.Sscan(s, &n)
	return n
}

// derivedRows reads the same shapes back from ClickHouse.
func (pe *platformEnv) derivedRows(t *testing.T) truthRows {
	t.Helper()
	ctx := testenv.Ctx(t)
	out := truthRows{customers: map[string]string{}, charges: map[string]string{}, usage: map[string]string{}}
	read := func(q string, f func(cols []string)) {
		rows, err := pe.ch.Query(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer rows.Close()
		n := len(rows.Columns())
		for rows.Next() {
			vals := make([]string, n)
			ptrs := make([]any, n)
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			f(vals)
		}
	}
	iso := `ifNull(formatDateTime(%s, '%%Y-%%m-%%dT%%H:%%M:%%SZ'), '-')`
	read(fmt.Sprintf(`SELECT customer_id, status, `+iso+`, shop_domain, shop_name FROM platform_customers FINAL`, "first_installed_at"),
		func(v []string) { out.customers[v[0]] = strings.Join(v[1:], "|") })
	read(fmt.Sprintf(`SELECT charge_id, toString(kind), status, end_reason, if(test = 1, 'true', 'false'), `+iso+`, `+iso+`,
toString(billing_interval) FROM platform_charges FINAL`, "activated_at", "ended_at"),
		func(v []string) { out.charges[v[0]] = strings.Join(v[1:], "|") })
	read(`SELECT customer_id, if(test = 1, 'true', 'false'), toString(count()) FROM platform_usage_charges FINAL GROUP BY customer_id, test`,
		func(v []string) { out.usage[v[0]+"|"+v[1]] = v[2] })
	return out
}

func diffRows(want, got truthRows) []string {
	var out []string
	cmp := func(what string, w, g map[string]string) {
		for k, wv := range w {
			if gv, ok := g[k]; !ok || gv != wv {
				out = append(out, fmt.Sprintf("%s %s: got %q, want %q", what, k, gv, wv))
			}
		}
		for k, gv := range g {
			if _, ok := w[k]; !ok {
				out = append(out, fmt.Sprintf("%s %s: unexpected %q", what, k, gv))
			}
		}
	}
	cmp("customer", want.customers, got.customers)
	cmp("charge", want.charges, got.charges)
	cmp("usage", want.usage, got.usage)
	return out
}
