package controlplane_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/internal/testenv"
)

func TestNormalizeShopDomain(t *testing.T) {
	for in, want := range map[string]string{
		"alpha.myshopify.com":                   "alpha.myshopify.com",
		" HTTPS://Alpha.MyShopify.com/admin?x ": "alpha.myshopify.com",
		"alpha.myshopify.com.":                  "alpha.myshopify.com",
		"":                                      "",
		"alpha":                                 "",
		"alpha..myshopify.com":                  "",
		"alpha_shop.myshopify.com":              "",
		"-alpha.myshopify.com":                  "",
	} {
		got, err := controlplane.NormalizeShopDomain(in)
		if want == "" {
			if !errors.Is(err, controlplane.ErrInvalid) {
				t.Errorf("%q: got %q, %v; want ErrInvalid", in, got, err)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("%q: got %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestCustomerExclusionsLifecycleAndAudit(t *testing.T) {
	a, b := twoInstances(t)
	withSelectedApp(t, a)
	ctx := testenv.Ctx(t)
	w, err := a.WorkspaceBySlug(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.ExcludeCustomer(ctx, "cli", w.ID, "alpha.myshopify.com", "app-2", ""); !errors.Is(err, controlplane.ErrInvalid) {
		t.Fatalf("unselected app: %v", err)
	}
	if _, err := a.ExcludeCustomer(ctx, "cli", w.ID, "not a domain", "", ""); !errors.Is(err, controlplane.ErrInvalid) {
		t.Fatalf("bad domain: %v", err)
	}
	if _, err := a.ExcludeCustomer(ctx, "cli", w.ID, "alpha.myshopify.com", "", strings.Repeat("x", 501)); !errors.Is(err, controlplane.ErrInvalid) {
		t.Fatalf("long reason: %v", err)
	}
	if _, err := a.ExcludeCustomer(ctx, "cli", "no-such-workspace", "alpha.myshopify.com", "", ""); !errors.Is(err, controlplane.ErrNotFound) {
		t.Fatalf("unknown workspace: %v", err)
	}

	x, err := a.ExcludeCustomer(ctx, "cli", w.ID, "HTTPS://Alpha.myshopify.com/", "", "our development store")
	if err != nil {
		t.Fatal(err)
	}
	if x.ShopDomain != "alpha.myshopify.com" || x.AppID != "" || !x.Excluded || x.Reason != "our development store" || x.UpdatedAt.IsZero() {
		t.Fatalf("exclusion %+v", x)
	}
	if _, err := a.ExcludeCustomer(ctx, "cli", w.ID, "beta.myshopify.com", "app-1", "partner store"); err != nil {
		t.Fatal(err)
	}
	// The other instance reads the same rules (they live in ClickHouse, not in a process cache).
	list, err := b.CustomerExclusions(ctx, w.ID, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := rules(list); !slices.Equal(got, []string{"alpha.myshopify.com/*=1", "beta.myshopify.com/app-1=1"}) {
		t.Fatalf("rules %v", got)
	}

	// Lifting for one app what is excluded in every app is refused with a way out.
	_, err = a.IncludeCustomer(ctx, "cli", w.ID, "alpha.myshopify.com", "app-1", "")
	if !errors.Is(err, controlplane.ErrNotFound) || !strings.Contains(err.Error(), "every app") {
		t.Fatalf("lift one app of an every-app exclusion: %v", err)
	}
	if _, err := a.IncludeCustomer(ctx, "cli", w.ID, "gamma.myshopify.com", "", ""); !errors.Is(err, controlplane.ErrNotFound) {
		t.Fatalf("lift a rule that does not exist: %v", err)
	}
	time.Sleep(time.Millisecond) // the lifted row's version must be newer; versions are microseconds
	lifted, err := b.IncludeCustomer(ctx, "cli", w.ID, "alpha.myshopify.com", "", "sold the store")
	if err != nil || lifted.Excluded {
		t.Fatalf("lift: %+v %v", lifted, err)
	}
	list, err = a.CustomerExclusions(ctx, w.ID, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := rules(list); !slices.Equal(got, []string{"beta.myshopify.com/app-1=1"}) {
		t.Fatalf("rules after the lift %v", got)
	}
	all, err := a.CustomerExclusions(ctx, w.ID, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := rules(all); !slices.Equal(got, []string{"alpha.myshopify.com/*=0", "beta.myshopify.com/app-1=1"}) || all[0].Reason != "sold the store" {
		t.Fatalf("rules with lifted %v %+v", got, all)
	}
	if _, err := a.IncludeCustomer(ctx, "cli", w.ID, "alpha.myshopify.com", "", ""); !errors.Is(err, controlplane.ErrNotFound) {
		t.Fatalf("lift twice: %v", err)
	}

	log, err := a.AuditLog(ctx, w.ID, 10)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range log {
		if e.TargetType == "customer_exclusion" {
			actions = append(actions, e.Action+" "+e.TargetID+" "+e.Details["appId"]+" "+e.Details["reason"]+" by "+e.Actor)
		}
	}
	want := []string{
		"customer.include alpha.myshopify.com  sold the store by cli",
		"customer.exclude beta.myshopify.com app-1 partner store by cli",
		"customer.exclude alpha.myshopify.com  our development store by cli",
	}
	if !slices.Equal(actions, want) {
		t.Fatalf("audit\n got %q\nwant %q", actions, want)
	}
}

// TestReportExcludedCondition applies the readers' rule to customer rows: the customer's app or
// every app, latest row wins, other workspaces' rules ignored.
func TestReportExcludedCondition(t *testing.T) {
	a, _ := twoInstances(t)
	withSelectedApp(t, a)
	ctx := testenv.Ctx(t)
	if _, err := a.SetSelectedApps(ctx, "cli", "acme", []string{"app-1", "app-2"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.CreateWorkspace(ctx, "cli", "other", "Other", controlplane.StatusActive); err != nil {
		t.Fatal(err)
	}
	acme, _ := a.WorkspaceBySlug(ctx, "acme")
	other, _ := a.WorkspaceBySlug(ctx, "other")
	steps := []func() error{
		func() error {
			_, err := a.ExcludeCustomer(ctx, "t", acme.ID, "every.myshopify.com", "", "")
			return err
		},
		func() error {
			_, err := a.ExcludeCustomer(ctx, "t", acme.ID, "one.myshopify.com", "app-1", "")
			return err
		},
		func() error {
			_, err := a.ExcludeCustomer(ctx, "t", acme.ID, "lifted.myshopify.com", "", "")
			return err
		},
		func() error {
			_, err := a.IncludeCustomer(ctx, "t", acme.ID, "lifted.myshopify.com", "", "")
			return err
		},
		func() error {
			_, err := a.ExcludeCustomer(ctx, "t", other.ID, "plain.myshopify.com", "", "")
			return err
		},
	}
	for _, step := range steps {
		time.Sleep(time.Millisecond)
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	conn := a.Conn()
	b, err := conn.PrepareBatch(ctx, "INSERT INTO platform_customers (workspace_id, app_id, customer_id, shop_domain, version)")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range [][2]string{{"app-1", "every"}, {"app-2", "every"}, {"app-1", "one"}, {"app-2", "one"}, {"app-1", "lifted"}, {"app-1", "plain"}} {
		if err := b.Append(acme.ID, c[0], c[1]+"/"+c[0], c[1]+".myshopify.com", uint64(1)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Send(); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(ctx, "SELECT customer_id FROM platform_customers FINAL WHERE workspace_id = ? AND "+
		controlplane.ReportExcludedCondition+" ORDER BY customer_id", acme.ID, acme.ID, acme.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		got = append(got, id)
	}
	if want := []string{"every/app-1", "every/app-2", "one/app-1"}; !slices.Equal(got, want) {
		t.Fatalf("excluded customers %v, want %v", got, want)
	}
}

func rules(xs []controlplane.CustomerExclusion) []string {
	var out []string
	for _, x := range xs {
		app := x.AppID
		if app == "" {
			app = "*"
		}
		state := "0"
		if x.Excluded {
			state = "1"
		}
		out = append(out, x.ShopDomain+"/"+app+"="+state)
	}
	return out
}
