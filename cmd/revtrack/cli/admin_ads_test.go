package cli_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/revtrack/revtrack/cmd/revtrack/cli"
	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/devtools/googlefake"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/internal/testenv/pipeline"
	"github.com/revtrack/revtrack/uploader"
)

// TestAdsCommands walks the advertising setup from the command line against the fake Google:
// connect, finish with the redirected URL, select the account, map, toggle Validation only,
// verify, list the queue, re-seal after a key rotation, disconnect (unconfirmed, then confirmed).
func TestAdsCommands(t *testing.T) {
	db := pipeline.Migrated(t)
	tenant := pipeline.Seed(t, db, "https://app.example")
	fake := googlefake.New(googlefake.DefaultConfig())
	google := httptest.NewServer(fake)
	t.Cleanup(google.Close)
	keys := controlplane.DevelopmentEncryptionKeys
	run := func(args ...string) (string, string, int) {
		t.Helper()
		var out, logs bytes.Buffer
		args = append(args, "--clickhouse-addr", db.CH.Addr, "--clickhouse-database", db.CH.Database, "--redis-addr", db.RedisC.Addr,
			"--redis-key-prefix", db.RedisC.KeyPrefix, "--base-url", "https://revtrack.example", "--encryption-keys", keys,
			"--ads-google-base-url", google.URL, "--ads-oauth-client-id", "revtrack-local", "--ads-oauth-client-secret", "revtrack-local-secret",
			"--egress-allow-private-networks")
		code := cli.Execute(context.Background(), args, &out, &logs)
		return out.String(), logs.String(), code
	}
	must := func(v any, args ...string) {
		t.Helper()
		out, logs, code := run(args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, logs)
		}
		if v != nil {
			if err := json.Unmarshal([]byte(out), v); err != nil {
				t.Fatalf("%v: %v: %s", args, err, out)
			}
		}
	}
	fails := func(want string, args ...string) {
		t.Helper()
		if _, logs, code := run(args...); code == 0 || !strings.Contains(logs, want) {
			t.Fatalf("%v: exit %d, want an error with %q: %s", args, code, want, logs)
		}
	}

	var started map[string]string
	must(&started, "admin", "ads", "connect", "acme")
	if started["redirectUrl"] != "https://revtrack.example"+uploader.OAuthCallbackPath || !strings.Contains(started["authorizationUrl"], "state=") {
		t.Fatalf("connect printed %v", started)
	}
	// The browser goes to Google and is sent back to the callback URL, which the user copies.
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Get(started["authorizationUrl"])
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	redirected := resp.Header.Get("Location")
	var conn controlplane.AdConnection
	must(&conn, "admin", "ads", "callback", redirected)
	if conn.State != "connected" || len(conn.GrantedScopes) != 2 {
		t.Fatalf("callback printed %+v", conn)
	}
	fails("unknown, used or older", "admin", "ads", "callback", redirected)

	// Another Google account reconnecting is held until confirmed on the command line.
	other := googlefake.DefaultAccount
	other.ID, other.Email = "104592000000000000099", "other@example.com"
	fake.SignIn(other)
	must(&started, "admin", "ads", "connect", "acme")
	if resp, err = hc.Get(started["authorizationUrl"]); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var held struct {
		Replacement uploader.ReplacementPending
		Next        string
	}
	must(&held, "admin", "ads", "callback", resp.Header.Get("Location"))
	if held.Replacement.NewAccount != other || held.Replacement.CurrentAccount != googlefake.DefaultAccount ||
		!strings.Contains(held.Next, "confirm-replacement "+held.Replacement.ID) {
		t.Fatalf("callback by another account printed %+v", held)
	}
	var replaced struct {
		Connection controlplane.AdConnection
		Replaced   bool
	}
	must(&replaced, "admin", "ads", "confirm-replacement", held.Replacement.ID)
	if !replaced.Replaced || replaced.Connection.GoogleAccountEmail != other.Email {
		t.Fatalf("confirm-replacement printed %+v", replaced)
	}
	fails("already settled", "admin", "ads", "confirm-replacement", held.Replacement.ID)

	var status map[string]any
	must(&status, "admin", "ads", "status", "acme")
	if status["state"] != "connected" || status["ready"] != false {
		t.Fatalf("status %v", status)
	}
	fails("10-digit", "admin", "ads", "select-account", "acme", "--customer", "12345")
	var sel uploader.AccountSelection
	must(&sel, "admin", "ads", "select-account", "acme", "--customer", googlefake.DefaultCustomerID, "--login-customer", googlefake.DefaultManagerID)
	if !sel.Connection.Ready() || len(sel.Actions) != 2 {
		t.Fatalf("select-account printed %+v", sel)
	}
	var actions []controlplane.AdConversionAction
	must(&actions, "admin", "ads", "actions", "acme")
	if len(actions) != 2 {
		t.Fatalf("actions %+v", actions)
	}
	must(&actions, "admin", "ads", "refresh-actions", "acme")

	fails("consent", "admin", "ads", "mapping", "create", "acme", "--source", tenant.Source.ID, "--milestone", "paid", "--action-id", "7723667020")
	var m controlplane.AdMapping
	must(&m, "admin", "ads", "mapping", "create", "acme", "--source", tenant.Source.ID, "--milestone", "paid", "--action-id", "7723667020",
		"--consent-confirmed", "--fixed-value-cents", "1500", "--fixed-currency", "USD")
	if !m.Enabled || !m.ValidationOnly || m.FixedValueCents == nil || *m.FixedValueCents != 1500 || m.ConversionActionName == "" {
		t.Fatalf("mapping create printed %+v", m)
	}
	must(&m, "admin", "ads", "mapping", "validation-only", "acme", m.MappingID, "off")
	if m.ValidationOnly {
		t.Fatal("validation only still on")
	}
	fails("on or off", "admin", "ads", "mapping", "validation-only", "acme", m.MappingID, "maybe")
	var updated controlplane.AdMapping // fresh: decoding into m would keep a field the output omits
	must(&updated, "admin", "ads", "mapping", "update", "acme", m.MappingID, "--clear-fixed-value")
	if updated.FixedValueCents != nil || updated.FixedCurrency != "" || updated.ValidationOnly {
		t.Fatalf("update printed %+v", updated)
	}
	// A mapping the user disabled comes back on the same connection and account.
	var toggled controlplane.AdMapping
	must(&toggled, "admin", "ads", "mapping", "update", "acme", m.MappingID, "--enabled=false")
	if toggled.Enabled || toggled.DisabledCause != controlplane.AdDisabledByUser {
		t.Fatalf("disable printed %+v", toggled)
	}
	toggled = controlplane.AdMapping{}
	must(&toggled, "admin", "ads", "mapping", "update", "acme", m.MappingID, "--enabled=true")
	if !toggled.Enabled {
		t.Fatalf("re-enable printed %+v", toggled)
	}
	var ms []controlplane.AdMapping
	must(&ms, "admin", "ads", "mapping", "list", "acme")
	if len(ms) != 1 {
		t.Fatalf("list %+v", ms)
	}

	var v struct {
		Mappings []struct {
			Next string `json:"next"`
		} `json:"mappings"`
	}
	must(&v, "admin", "ads", "verify", "acme")
	if len(v.Mappings) != 1 || v.Mappings[0].Next != "page_view" {
		t.Fatalf("verify %+v", v)
	}
	var page uploader.ListPage
	must(&page, "admin", "ads", "queue", "list", "acme", "--status", "rejected")
	if len(page.Rows) != 0 {
		t.Fatalf("queue %+v", page)
	}
	fails("status", "admin", "ads", "queue", "list", "acme", "--status", "sent")
	fails("not found", "admin", "ads", "queue", "retry", "acme", "uq_nope")

	// Key rotation: a new first key; the re-seal moves the refresh token to it.
	newKey := "k2:" + base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	keys = newKey + "," + controlplane.DevelopmentEncryptionKeys
	var resealed map[string]any
	must(&resealed, "admin", "reseal")
	if resealed["adRefreshTokens"] != 1.0 || resealed["resealed"] != 1.0 || resealed["sealingKey"] != "k2" {
		t.Fatalf("reseal %v", resealed)
	}
	must(&resealed, "admin", "partner", "reseal")
	if resealed["resealed"] != 0.0 {
		t.Fatalf("second reseal %v", resealed)
	}
	must(&status, "admin", "ads", "status", "acme")
	if status["connection"].(map[string]any)["sealedWithKey"] != "k2" {
		t.Fatalf("status after reseal %v", status)
	}
	keys = newKey // the old key is dropped: the token still opens

	fake.FailRevocation(http.StatusServiceUnavailable)
	fails("still connected", "admin", "ads", "disconnect", "acme")
	fake.FailRevocation(0)
	var disconnected controlplane.AdConnection
	must(&disconnected, "admin", "ads", "disconnect", "acme")
	if disconnected.State != "disconnected" {
		t.Fatalf("disconnect printed %+v", disconnected)
	}
	// A mapping a disconnection disabled never uploads again.
	fails("create a new mapping", "admin", "ads", "mapping", "update", "acme", m.MappingID, "--enabled=true")

	entries, err := tenant.Store.AuditLog(testenv.Ctx(t), tenant.Source.WorkspaceID, 100)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range entries {
		if e.Actor == "cli:admin" {
			seen[e.Action] = true
		}
	}
	for _, want := range []string{"ads_connection.connect", "ads_connection.select_account", "ads_mapping.create",
		"ads_mapping.validation_only", "ads_connection.reseal", "ads_connection.disconnect_unconfirmed", "ads_connection.disconnect"} {
		if !seen[want] {
			t.Errorf("audit lacks %s by cli:admin (%v)", want, seen)
		}
	}
}
