package controlplane_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/internal/testenv"
)

func adsWorkspace(t *testing.T) (*controlplane.Store, controlplane.Workspace) {
	t.Helper()
	a, _ := twoInstances(t)
	withSelectedApp(t, a)
	w, err := a.WorkspaceBySlug(testenv.Ctx(t), "acme")
	if err != nil {
		t.Fatal(err)
	}
	return a, w
}

func adAuditActions(t *testing.T, s *controlplane.Store, workspaceID, prefix string) []string {
	t.Helper()
	log, err := s.AuditLog(testenv.Ctx(t), workspaceID, 100)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range log {
		if strings.HasPrefix(e.Action, prefix) {
			out = append(out, e.Action)
		}
	}
	slices.Reverse(out)
	return out
}

func TestAdConnectionLifecycleKeepsTokenSealed(t *testing.T) {
	s, w := adsWorkspace(t)
	ctx := testenv.Ctx(t)
	const token = "1//ads-refresh-token-plaintext-4242"
	conns := s.AdConnections(keyring(t, testKey("k1", 'a')))

	if _, ok, err := conns.Get(ctx, w.ID); err != nil || ok {
		t.Fatalf("before connecting: ok=%v %v", ok, err)
	}
	if _, err := conns.RefreshToken(ctx, w.ID); !errors.Is(err, controlplane.ErrNotFound) {
		t.Fatalf("token before connecting: %v", err)
	}
	if _, _, err := conns.SelectAccount(ctx, "cli", w.ID, "1234567890", ""); !errors.Is(err, controlplane.ErrConflict) {
		t.Fatalf("select account before connecting: %v", err)
	}
	if _, err := conns.Connect(ctx, "cli", w.ID, controlplane.AdGrant{RefreshToken: "bad token", Scopes: nil}); !errors.Is(err, controlplane.ErrInvalid) {
		t.Fatalf("token with a space: %v", err)
	}
	c, err := conns.Connect(ctx, "owner@acme.example", w.ID, controlplane.AdGrant{RefreshToken: token, Scopes: []string{"b", "a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Connected() || c.Ready() || c.SealedWithKey != "k1" || strings.Join(c.GrantedScopes, ",") != "a,b" ||
		c.ConnectedBy != "owner@acme.example" || c.Provider != controlplane.AdProviderGoogle {
		t.Fatalf("connected: %+v", c)
	}

	// Ciphertext in ClickHouse, apart from the connection's record; nothing in the audit log or Redis.
	var enc, keyID string
	if err := s.Conn().QueryRow(ctx, `SELECT sealed, key_id FROM sealed_secrets WHERE owner_id = ?`, c.ConnectionID).Scan(&enc, &keyID); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(enc, "v1:k1:") || strings.Contains(enc, token) || keyID != "k1" {
		t.Fatalf("stored token %q (key %q)", enc, keyID)
	}
	if got := storedTokens(t, s); len(got) != 1 || got[0] != enc {
		t.Fatalf("stored copies %q", got)
	}
	assertNoPlaintext(t, s, token)
	if tok, err := conns.RefreshToken(ctx, w.ID); err != nil || tok != token {
		t.Fatalf("open: ok=%v %v", tok == token, err)
	}

	for _, bad := range [][2]string{{"123456789", ""}, {"12345678901", ""}, {"123-456-7890", ""}, {"1234567890", "98765"}} {
		if _, _, err := conns.SelectAccount(ctx, "cli", w.ID, bad[0], bad[1]); !errors.Is(err, controlplane.ErrInvalid) {
			t.Errorf("account %q login %q: %v", bad[0], bad[1], err)
		}
	}
	c, changed, err := conns.SelectAccount(ctx, "cli", w.ID, "1234567890", "9876543210")
	if err != nil || !changed || !c.Ready() || c.LoginCustomerID != "9876543210" {
		t.Fatalf("select: %+v changed=%v %v", c, changed, err)
	}
	if _, changed, err := conns.SelectAccount(ctx, "cli", w.ID, "1234567890", "9876543210"); err != nil || changed {
		t.Fatalf("same account again: changed=%v %v", changed, err)
	}

	// Reconnecting while connected replaces the credential only.
	const second = "1//ads-refresh-token-second-4343"
	re, err := conns.Connect(ctx, "admin@acme.example", w.ID, controlplane.AdGrant{RefreshToken: second, Scopes: []string{"a", "b"},
		GoogleAccountID: "1045", GoogleAccountEmail: "owner@example.com"})
	if err != nil || re.ConnectionID != c.ConnectionID || re.ConversionCustomerID != "1234567890" || !re.CreatedAt.Equal(c.CreatedAt) {
		t.Fatalf("reconnect: %+v %v", re, err)
	}
	if got, _, err := conns.Get(ctx, w.ID); err != nil || got.GoogleAccountID != "1045" || got.GoogleAccountEmail != "owner@example.com" {
		t.Fatalf("the Google account was not stored: %+v %v", got, err)
	}
	if tok, _ := conns.RefreshToken(ctx, w.ID); tok != second {
		t.Fatal("reconnect did not replace the credential")
	}
	if got := storedTokens(t, s); len(got) != 1 {
		t.Fatalf("the replaced credential is still stored: %d copies", len(got))
	}

	if c, err = conns.DisconnectUnconfirmed(ctx, "cli", w.ID, "revocation not confirmed: 503"); err != nil || !c.Connected() || c.LastError == "" {
		t.Fatalf("unconfirmed: %+v %v", c, err)
	}

	// Rotation: a new first key; the token still opens and re-seals.
	rotated := s.AdConnections(keyring(t, testKey("k2", 'b')+","+testKey("k1", 'a')))
	if _, err := s.AdConnections(keyring(t, testKey("k3", 'c'))).ResealAll(ctx, "cli"); !errors.Is(err, controlplane.ErrCannotOpen) ||
		!strings.Contains(err.Error(), w.ID) {
		t.Fatalf("reseal without the sealing key: %v", err)
	}
	if n, err := rotated.ResealAll(ctx, "cli"); err != nil || n != 1 {
		t.Fatalf("reseal: %d %v", n, err)
	}
	if ok, err := rotated.Reseal(ctx, "cli", w.ID); err != nil || ok {
		t.Fatalf("second reseal: %v %v", ok, err)
	}
	onlyNew := s.AdConnections(keyring(t, testKey("k2", 'b')))
	if tok, err := onlyNew.RefreshToken(ctx, w.ID); err != nil || tok != second {
		t.Fatalf("after reseal: %v", err)
	}

	c, err = onlyNew.Disconnect(ctx, "cli", w.ID)
	if err != nil || c.Connected() || c.SealedWithKey != "" || c.LastError != "" || c.ConversionCustomerID != "1234567890" {
		t.Fatalf("disconnect: %+v %v", c, err)
	}
	if _, err := onlyNew.RefreshToken(ctx, w.ID); !errors.Is(err, controlplane.ErrNotFound) {
		t.Fatalf("token after disconnect: %v", err)
	}
	if got := storedTokens(t, s); len(got) != 0 {
		t.Fatalf("stored copies after disconnecting %q", got)
	}
	if _, err := onlyNew.Disconnect(ctx, "cli", w.ID); !errors.Is(err, controlplane.ErrConflict) {
		t.Fatalf("second disconnect: %v", err)
	}

	// Connecting again is a new connection with no account.
	again, err := onlyNew.Connect(ctx, "cli", w.ID, controlplane.AdGrant{RefreshToken: token, Scopes: []string{"a", "b"}})
	if err != nil || again.ConnectionID == c.ConnectionID || again.ConversionCustomerID != "" || !again.Connected() {
		t.Fatalf("connect again: %+v %v", again, err)
	}
	assertNoPlaintext(t, s, token, second)
	want := "ads_connection.connect ads_connection.select_account ads_connection.reconnect ads_connection.disconnect_unconfirmed " +
		"ads_connection.reseal ads_connection.disconnect ads_connection.connect"
	if got := strings.Join(adAuditActions(t, s, w.ID, "ads_connection."), " "); got != want {
		t.Errorf("audit actions\n got %s\nwant %s", got, want)
	}
}

func TestAdMappingsStoreVersionsAndAudit(t *testing.T) {
	s, w := adsWorkspace(t)
	ctx := testenv.Ctx(t)
	maps := s.AdMappings()
	if _, err := maps.Create(ctx, "cli", controlplane.AdMapping{WorkspaceID: w.ID, ConnectionID: "c", SourceID: "s", Milestone: "refunded"}); !errors.Is(err, controlplane.ErrInvalid) {
		t.Fatalf("refunded is not mappable: %v", err)
	}
	value := int64(1999)
	m, err := maps.Create(ctx, "cli", controlplane.AdMapping{WorkspaceID: w.ID, ConnectionID: "c1", SourceID: "s1", Milestone: "paid",
		ConversionActionID: "7723667020", ConversionActionName: "Paid", FixedValueCents: &value, FixedCurrency: "USD",
		ConsentConfirmed: true, ValidationOnly: true, Enabled: true})
	if err != nil || m.MappingID == "" || m.CreatedAt.IsZero() {
		t.Fatalf("create: %+v %v", m, err)
	}
	got, err := maps.Get(ctx, w.ID, m.MappingID)
	if err != nil || got.FixedValueCents == nil || *got.FixedValueCents != 1999 || !got.ValidationOnly || !got.Enabled || got.Milestone != "paid" {
		t.Fatalf("get: %+v %v", got, err)
	}
	if _, err := maps.Get(ctx, "other-workspace", m.MappingID); !errors.Is(err, controlplane.ErrNotFound) {
		t.Fatalf("other workspace: %v", err)
	}

	// Removing the fixed value must stick: argMax over a Nullable would skip the NULL.
	got.FixedValueCents, got.FixedCurrency = nil, ""
	if _, err := maps.Update(ctx, "cli", got); err != nil {
		t.Fatal(err)
	}
	got.ValidationOnly = false
	if _, err := maps.Update(ctx, "cli", got); err != nil {
		t.Fatal(err)
	}
	if _, err := maps.Update(ctx, "cli", got); err != nil { // no change: no version, no audit
		t.Fatal(err)
	}
	got, err = maps.Get(ctx, w.ID, m.MappingID)
	if err != nil || got.FixedValueCents != nil || got.FixedCurrency != "" || got.ValidationOnly || !got.CreatedAt.Equal(m.CreatedAt) {
		t.Fatalf("after updates: %+v %v", got, err)
	}

	second, err := maps.Create(ctx, "cli", controlplane.AdMapping{WorkspaceID: w.ID, ConnectionID: "c1", SourceID: "s1", Milestone: "install",
		ConversionActionID: "1", ConversionActionName: "Install", ConsentConfirmed: true, ValidationOnly: true, Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	if enabled, err := maps.ListEnabled(ctx); err != nil || len(enabled) != 2 {
		t.Fatalf("enabled: %d %v", len(enabled), err)
	}
	if _, err := maps.DisableAll(ctx, "cli", w.ID, "bogus", "x"); !errors.Is(err, controlplane.ErrInvalid) {
		t.Fatalf("disable all with an unknown cause: %v", err)
	}
	disabled, err := maps.DisableAll(ctx, "cli", w.ID, controlplane.AdDisabledByAccountChange, "conversion account changed")
	if err != nil || len(disabled) != 2 {
		t.Fatalf("disable all: %d %v", len(disabled), err)
	}
	all, err := maps.List(ctx, w.ID)
	if err != nil || len(all) != 2 || all[0].MappingID != m.MappingID || all[1].MappingID != second.MappingID {
		t.Fatalf("list: %+v %v", all, err)
	}
	for _, a := range all {
		if a.Enabled || a.DisabledReason != "conversion account changed" || a.DisabledCause != controlplane.AdDisabledByAccountChange || !a.Retired() {
			t.Errorf("not disabled: %+v", a)
		}
	}
	if enabled, err := maps.ListEnabled(ctx); err != nil || len(enabled) != 0 {
		t.Fatalf("enabled after disable: %d %v", len(enabled), err)
	}
	all[0].Enabled = true
	// Storage does not apply the re-enable rule (the setup does); enabling clears reason and cause.
	if re, err := maps.Update(ctx, "cli", all[0]); err != nil || re.DisabledReason != "" || re.DisabledCause != "" {
		t.Fatalf("re-enable: %+v %v", re, err)
	}
	want := "ads_mapping.create ads_mapping.update ads_mapping.validation_only ads_mapping.create ads_mapping.disable ads_mapping.disable ads_mapping.enable"
	if got := strings.Join(adAuditActions(t, s, w.ID, "ads_mapping."), " "); got != want {
		t.Errorf("audit actions\n got %s\nwant %s", got, want)
	}
}

func TestAdConversionActionCacheReplaces(t *testing.T) {
	s, w := adsWorkspace(t)
	ctx := testenv.Ctx(t)
	cache := s.AdConversionActions()
	got, err := cache.Replace(ctx, "cli", w.ID, "1234567890", []controlplane.AdConversionAction{
		{ID: "2", Name: "Trial", Status: "ENABLED"}, {ID: "1", Name: "Paid", Status: "ENABLED"}, {ID: "1", Name: "dup"}})
	if err != nil || len(got) != 2 || got[0].ID != "1" || got[1].Name != "Trial" {
		t.Fatalf("first refresh: %+v %v", got, err)
	}
	got, err = cache.Replace(ctx, "cli", w.ID, "1234567890", []controlplane.AdConversionAction{{ID: "2", Name: "Trial renamed", Status: "ENABLED"}})
	if err != nil || len(got) != 1 || got[0].Name != "Trial renamed" {
		t.Fatalf("second refresh: %+v %v", got, err)
	}
	if _, err := cache.Get(ctx, w.ID, "1234567890", "1"); !errors.Is(err, controlplane.ErrNotFound) {
		t.Fatalf("removed action: %v", err)
	}
	if other, err := cache.List(ctx, w.ID, "1111111111"); err != nil || len(other) != 0 {
		t.Fatalf("other customer: %+v %v", other, err)
	}
	if got := adAuditActions(t, s, w.ID, "ads_conversion_actions."); len(got) != 2 {
		t.Errorf("audit %v", got)
	}
}

// TestAdCredentialRefusedOnlyForTheStoredToken: a refusal of the stored credential shows on the
// connection (still connected, no token in the text); a refusal of a credential a reconnect
// already replaced is ignored, and a reconnect clears the error.
func TestAdCredentialRefusedOnlyForTheStoredToken(t *testing.T) {
	s, w := adsWorkspace(t)
	ctx := testenv.Ctx(t)
	conns := s.AdConnections(keyring(t, testKey("k1", 'a')))
	const old, replacement = "1//refused-refresh-token", "1//replacement-refresh-token"
	if ok, err := conns.CredentialRefused(ctx, "system:uploader", w.ID, old, "refused"); err != nil || ok {
		t.Fatalf("never connected: %v %v", ok, err)
	}
	if _, err := conns.Connect(ctx, "cli", w.ID, controlplane.AdGrant{RefreshToken: old, Scopes: []string{"a"}}); err != nil {
		t.Fatal(err)
	}
	if ok, err := conns.CredentialRefused(ctx, "system:uploader", w.ID, old, "refused: connect again"); err != nil || !ok {
		t.Fatalf("stored token refused: %v %v", ok, err)
	}
	c, _, err := conns.Get(ctx, w.ID)
	if err != nil || !c.Connected() || c.LastError != "refused: connect again" {
		t.Fatalf("connection %+v %v", c, err)
	}
	if _, err := conns.Connect(ctx, "cli", w.ID, controlplane.AdGrant{RefreshToken: replacement, Scopes: []string{"a"}}); err != nil {
		t.Fatal(err)
	}
	if c, _, _ = conns.Get(ctx, w.ID); c.LastError != "" {
		t.Fatalf("a reconnect keeps the error %q", c.LastError)
	}
	if ok, err := conns.CredentialRefused(ctx, "system:uploader", w.ID, old, "refused: connect again"); err != nil || ok {
		t.Fatalf("a replaced token's refusal recorded: %v %v", ok, err)
	}
	if c, _, _ = conns.Get(ctx, w.ID); c.LastError != "" {
		t.Fatalf("error after a stale refusal: %q", c.LastError)
	}
	if got := strings.Join(adAuditActions(t, s, w.ID, "ads_connection.credential_refused"), " "); got != "ads_connection.credential_refused" {
		t.Fatalf("audit %q", got)
	}
}

// TestAdMappingsDisableAllRetiresUserDisabled: an account change retires every mapping, including
// one a user had disabled, which could otherwise be re-enabled against the new account.
func TestAdMappingsDisableAllRetiresUserDisabled(t *testing.T) {
	s, w := adsWorkspace(t)
	ctx := testenv.Ctx(t)
	maps := s.AdMappings()
	mk := func(action string) controlplane.AdMapping {
		m, err := maps.Create(ctx, "cli", controlplane.AdMapping{WorkspaceID: w.ID, ConnectionID: "c1", SourceID: "s1", Milestone: "paid",
			ConversionActionID: action, ConversionActionName: "A" + action, ConsentConfirmed: true, ValidationOnly: true, Enabled: true})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	enabled, userOff := mk("1"), mk("2")
	userOff.Enabled, userOff.DisabledReason, userOff.DisabledCause = false, controlplane.UserDisabledReason("cli"), controlplane.AdDisabledByUser
	userOff, err := maps.Update(ctx, "cli", userOff)
	if err != nil || userOff.Retired() || userOff.DisabledCause != controlplane.AdDisabledByUser {
		t.Fatalf("user disabled: %+v %v", userOff, err)
	}
	disabled, err := maps.DisableAll(ctx, "cli", w.ID, controlplane.AdDisabledByDisconnect, "advertising connection disconnected")
	if err != nil || len(disabled) != 1 || disabled[0].MappingID != enabled.MappingID {
		t.Fatalf("disabled %+v %v", disabled, err)
	}
	for _, id := range []string{enabled.MappingID, userOff.MappingID} {
		m, err := maps.Get(ctx, w.ID, id)
		if err != nil || !m.Retired() || m.DisabledCause != controlplane.AdDisabledByDisconnect {
			t.Fatalf("mapping %+v %v", m, err)
		}
	}
	// Mappings disabled before the cause was stored: only a user's disable may come back.
	legacy := controlplane.AdMapping{DisabledReason: "conversion account changed from none to 1234567890"}
	if !legacy.Retired() || (controlplane.AdMapping{DisabledReason: controlplane.UserDisabledReason("x")}).Retired() {
		t.Fatal("legacy disabled reasons")
	}
}
