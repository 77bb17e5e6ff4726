package controlplane_test

import (
	"testing"
	"time"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas"
)

// Migration 0017 on a database written before it: the token of each connection that still holds
// one moves to sealed_secrets and opens there, and no version of any record keeps a token, erased
// ones included.
func TestSealedSecretsMigrationMovesAndClearsTokens(t *testing.T) {
	_, conn := testenv.ClickHouse(t)
	rdb, rc := testenv.Redis(t)
	ctx := testenv.Ctx(t)
	migrations, err := schemas.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	apply := func(from, to uint32) {
		t.Helper()
		for _, m := range migrations {
			if m.Version < from || m.Version > to {
				continue
			}
			for _, st := range m.Statements {
				if err := conn.Exec(ctx, st); err != nil {
					t.Fatalf("migration %04d: %v\n%s", m.Version, err, st)
				}
			}
		}
	}
	apply(1, 16)

	keys := keyring(t, testKey("k1", 'a'))
	seal := func(token, ws string) string {
		t.Helper()
		s, err := keys.Seal(token, ws)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	now := time.Now().UTC().Truncate(time.Second)
	insert := func(q string, rows ...[]any) {
		t.Helper()
		b, err := conn.PrepareBatch(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if err := b.Append(r...); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Send(); err != nil {
			t.Fatal(err)
		}
	}
	const ws, gone = "ws-live", "ws-gone"
	live1, live2 := seal("1//old-live", ws), seal("1//current-live", ws)
	// ws-live: connected, reconnected (two tokens over three versions). ws-gone: connected, then
	// disconnected (the erase wrote an empty version; the old one still holds the token).
	insert(`INSERT INTO ad_connections (connection_id, workspace_id, provider, state, refresh_token_enc, encryption_key_id, updated_at, version)`,
		[]any{"conn-live", ws, "google", "connected", live1, "k1", now, uint64(1)},
		[]any{"conn-live", ws, "google", "connected", live2, "k1", now, uint64(2)},
		[]any{"conn-live", ws, "google", "connected", live2, "k1", now, uint64(3)},
		[]any{"conn-gone", gone, "google", "connected", seal("1//erased", gone), "k1", now, uint64(1)},
		[]any{"conn-gone", gone, "google", "disconnected", "", "", now, uint64(2)})
	insert(`INSERT INTO partner_connections (workspace_id, organization_id, access_token_enc, updated_at, version, deleted)`,
		[]any{ws, "42", seal("prt-old", ws), now, uint64(1), uint8(0)},
		[]any{ws, "42", seal("prt-current", ws), now, uint64(2), uint8(0)},
		[]any{gone, "43", seal("prt-removed", gone), now, uint64(1), uint8(0)},
		[]any{gone, "43", "", now, uint64(2), uint8(1)})

	apply(17, 17)
	moved := map[string]string{}
	rows, err := conn.Query(ctx, `SELECT toString(kind), owner_id, sealed, key_id FROM sealed_secrets`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var kind, owner, sealed, keyID string
		if err := rows.Scan(&kind, &owner, &sealed, &keyID); err != nil {
			t.Fatal(err)
		}
		if keyID != "k1" {
			t.Errorf("%s %s: key %q", kind, owner, keyID)
		}
		moved[kind+"/"+owner] = sealed
	}
	rows.Close()
	if len(moved) != 2 || moved["ad_refresh_token/conn-live"] != live2 {
		t.Fatalf("moved %v", moved)
	}
	if tok, err := keys.Open(moved["partner_access_token/"+ws], ws); err != nil || tok != "prt-current" {
		t.Fatalf("moved partner token: %v", err)
	}
	// The record columns are emptied by mutations, which ClickHouse runs in the background.
	testenv.Eventually(t, "every record version to lose its token", func() bool {
		var n uint64
		err := conn.QueryRow(ctx, `SELECT (SELECT count() FROM ad_connections WHERE refresh_token_enc != '')
  + (SELECT count() FROM partner_connections WHERE access_token_enc != '')`).Scan(&n)
		return err == nil && n == 0
	})

	// The store of the migrated database opens the moved token.
	apply(18, ^uint32(0))
	store := controlplane.NewStore(conn, rdb, rc.KeyPrefix)
	if tok, err := store.AdConnections(keys).RefreshToken(ctx, ws); err != nil || tok != "1//current-live" {
		t.Fatalf("migrated ads token: %v", err)
	}
}
