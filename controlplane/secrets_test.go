package controlplane_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/internal/testenv"
)

// storedTokens reads every stored version of every table that holds or held a sealed token, without
// FINAL: the secrets table and the legacy token columns of the connection records. Older versions a
// merge has not yet replaced are rows like any other here.
func storedTokens(t *testing.T, s *controlplane.Store) []string {
	t.Helper()
	rows, err := s.Conn().Query(testenv.Ctx(t), `SELECT sealed FROM sealed_secrets
UNION ALL SELECT refresh_token_enc FROM ad_connections WHERE refresh_token_enc != ''
UNION ALL SELECT access_token_enc FROM partner_connections WHERE access_token_enc != ''`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// openable lists which of tokens some stored copy opens to with keys (workspaceID bound).
func openable(t *testing.T, s *controlplane.Store, keys *controlplane.Keyring, workspaceID string, tokens ...string) []string {
	t.Helper()
	var out []string
	for _, sealed := range storedTokens(t, s) {
		if tok, err := keys.Open(sealed, workspaceID); err == nil && slices.Contains(tokens, tok) {
			out = append(out, tok)
		}
	}
	return out
}

// A reconnect and a re-seal leave one stored copy, the current one; a confirmed disconnection
// leaves none in any version of any row, also when a binary older than the secrets table (a
// rolling upgrade) wrote the token into the connection's record meanwhile.
func TestAdDisconnectErasesEveryStoredVersion(t *testing.T) {
	s, w := adsWorkspace(t)
	ctx := testenv.Ctx(t)
	const first, second = "1//ads-first-token-5151", "1//ads-second-token-5252"
	both := keyring(t, testKey("k2", 'b')+","+testKey("k1", 'a'))
	conns := s.AdConnections(keyring(t, testKey("k1", 'a')))
	c, err := conns.Connect(ctx, "cli", w.ID, controlplane.AdGrant{RefreshToken: first, Scopes: []string{"a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []func() error{
		func() error { _, _, err := conns.SelectAccount(ctx, "cli", w.ID, "1234567890", ""); return err },
		func() error { _, err := conns.SetLastError(ctx, "cli", w.ID, "a failure"); return err },
		func() error {
			_, err := conns.Connect(ctx, "cli", w.ID, controlplane.AdGrant{RefreshToken: second, Scopes: []string{"a", "b"}})
			return err
		},
	} {
		if err := f(); err != nil {
			t.Fatal(err)
		}
	}
	if got := openable(t, s, both, w.ID, first, second); !slices.Equal(got, []string{second}) || len(storedTokens(t, s)) != 1 {
		t.Fatalf("after reconnecting, stored copies open to %q (%d copies)", got, len(storedTokens(t, s)))
	}
	rotated := s.AdConnections(both)
	if ok, err := rotated.Reseal(ctx, "cli", w.ID); err != nil || !ok {
		t.Fatalf("reseal: %v %v", ok, err)
	}
	if got := storedTokens(t, s); len(got) != 1 || got[0][:6] != "v1:k2:" {
		t.Fatalf("after re-sealing, stored copies %q", got)
	}

	// An older binary writes a version of the record with the token in it.
	legacy, err := both.Seal(second, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Conn().PrepareBatch(ctx, `INSERT INTO ad_connections (connection_id, workspace_id, provider, state, refresh_token_enc, version)`)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Append(c.ConnectionID, w.ID, "google", "connected", legacy, uint64(1)); err != nil {
		t.Fatal(err)
	}
	if err := b.Send(); err != nil {
		t.Fatal(err)
	}

	if _, err := rotated.Disconnect(ctx, "cli", w.ID); err != nil {
		t.Fatal(err)
	}
	if got := storedTokens(t, s); len(got) != 0 {
		t.Fatalf("stored copies after the disconnection %q", got)
	}
	if _, erased, err := rotated.FinishErase(ctx, w.ID); err != nil || erased {
		t.Fatalf("finish erase with nothing left: %v %v", erased, err)
	}
}

// A deletion that has not finished is reported, never read meanwhile, and confirmed by FinishErase.
func TestAdEraseUnconfirmedThenFinished(t *testing.T) {
	s, w := adsWorkspace(t)
	ctx := testenv.Ctx(t)
	conns := s.AdConnections(keyring(t, testKey("k1", 'a')))
	if _, err := conns.Connect(ctx, "cli", w.ID, controlplane.AdGrant{RefreshToken: "1//ads-token-5353", Scopes: []string{"a"}}); err != nil {
		t.Fatal(err)
	}
	// Mutations are merges: with merges stopped on the table, the deletion cannot run.
	if err := s.Conn().Exec(ctx, `SYSTEM STOP MERGES sealed_secrets`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Conn().Exec(ctx, `SYSTEM START MERGES sealed_secrets`) })
	s.EraseTimeout = 300 * time.Millisecond
	c, err := conns.Disconnect(ctx, "cli", w.ID)
	if !errors.Is(err, controlplane.ErrEraseUnconfirmed) || c.Connected() {
		t.Fatalf("disconnect with merges stopped: %+v %v", c, err)
	}
	if _, err := conns.RefreshToken(ctx, w.ID); !errors.Is(err, controlplane.ErrNotFound) {
		t.Fatalf("a token whose deletion is running was read: %v", err)
	}
	if len(storedTokens(t, s)) != 1 {
		t.Fatal("the test expects the stopped deletion to leave the copy")
	}
	if err := s.Conn().Exec(ctx, `SYSTEM START MERGES sealed_secrets`); err != nil {
		t.Fatal(err)
	}
	s.EraseTimeout = 0
	if _, erased, err := conns.FinishErase(ctx, w.ID); err != nil || !erased {
		t.Fatalf("finish erase: %v %v", erased, err)
	}
	if got := storedTokens(t, s); len(got) != 0 {
		t.Fatalf("stored copies after finishing %q", got)
	}
}

// Replacing a partner token leaves only the new one stored; removing the connection leaves none,
// and removing it again after an unconfirmed deletion confirms it.
func TestPartnerTokenReplacedAndRemovedFromEveryVersion(t *testing.T) {
	a, _ := twoInstances(t)
	withSelectedApp(t, a)
	ctx := testenv.Ctx(t)
	keys := keyring(t, testKey("k1", 'a'))
	p := a.Partners(keys)
	const first, second = "prtapi_first_6161", "prtapi_second_6262"
	conn, err := p.ConnectPartner(ctx, "cli", "acme", "42", first)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.ConnectPartner(ctx, "cli", "acme", "42", second); err != nil {
		t.Fatal(err)
	}
	if got := openable(t, a, keys, conn.WorkspaceID, first, second); !slices.Equal(got, []string{second}) || len(storedTokens(t, a)) != 1 {
		t.Fatalf("after replacing, stored copies open to %q", got)
	}
	if _, tok, err := p.PartnerConnection(ctx, conn.WorkspaceID); err != nil || tok != second {
		t.Fatalf("open after replacing: %v", err)
	}
	if err := p.DisconnectPartner(ctx, "cli", "acme"); err != nil {
		t.Fatal(err)
	}
	if got := storedTokens(t, a); len(got) != 0 {
		t.Fatalf("stored copies after removal %q", got)
	}
	if err := p.DisconnectPartner(ctx, "cli", "acme"); !errors.Is(err, controlplane.ErrNotFound) {
		t.Fatalf("removing twice: %v", err)
	}

	if _, err := p.ConnectPartner(ctx, "cli", "acme", "42", first); err != nil {
		t.Fatal(err)
	}
	if err := a.Conn().Exec(ctx, `SYSTEM STOP MERGES sealed_secrets`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Conn().Exec(ctx, `SYSTEM START MERGES sealed_secrets`) })
	a.EraseTimeout = 300 * time.Millisecond
	if err := p.DisconnectPartner(ctx, "cli", "acme"); !errors.Is(err, controlplane.ErrEraseUnconfirmed) {
		t.Fatalf("removal with merges stopped: %v", err)
	}
	if _, _, err := p.PartnerConnection(ctx, conn.WorkspaceID); !errors.Is(err, controlplane.ErrNotFound) {
		t.Fatalf("a removed connection's token was read: %v", err)
	}
	if err := a.Conn().Exec(ctx, `SYSTEM START MERGES sealed_secrets`); err != nil {
		t.Fatal(err)
	}
	a.EraseTimeout = 0
	if err := p.DisconnectPartner(ctx, "cli", "acme"); err != nil {
		t.Fatalf("removing again to confirm: %v", err)
	}
	if got := storedTokens(t, a); len(got) != 0 {
		t.Fatalf("stored copies after confirming %q", got)
	}
}
