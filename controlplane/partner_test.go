package controlplane_test

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/internal/testenv"
)

func testKey(id string, fill byte) string {
	return id + ":" + base64.StdEncoding.EncodeToString([]byte(strings.Repeat(string(fill), 32)))
}

func keyring(t *testing.T, setting string) *controlplane.Keyring {
	t.Helper()
	k, err := controlplane.ParseKeyring(setting)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestParseKeyringValidates(t *testing.T) {
	short := "k1:" + base64.StdEncoding.EncodeToString(make([]byte, 16))
	for _, bad := range []string{"", "k1", "k1:not base64!", short, testKey("k1", 'a') + "," + testKey("k1", 'b'), testKey("a:b", 'a'), ":" + testKey("", 'a')} {
		if _, err := controlplane.ParseKeyring(bad); err == nil {
			t.Errorf("ParseKeyring(%q) accepted", bad)
		} else if strings.Contains(err.Error(), base64.StdEncoding.EncodeToString(make([]byte, 16))) {
			t.Errorf("error repeats key material: %v", err)
		}
	}
	k := keyring(t, testKey("k2", 'b')+", "+testKey("k1", 'a'))
	if k.PrimaryKeyID() != "k2" || strings.Join(k.KeyIDs(), ",") != "k2,k1" || k.Development() {
		t.Fatalf("keyring %v", k.KeyIDs())
	}
	if !keyring(t, controlplane.DevelopmentEncryptionKeys).Development() {
		t.Fatal("the default key must report itself as the development key")
	}
}

func TestSealOpen(t *testing.T) {
	k1 := keyring(t, testKey("k1", 'a'))
	sealed, err := k1.Seal("secret-token", "ws-1")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(sealed, "v1:k1:") || strings.Contains(sealed, "secret-token") {
		t.Fatalf("sealed form %q", sealed)
	}
	again, _ := k1.Seal("secret-token", "ws-1")
	if again == sealed {
		t.Fatal("two seals of one value must differ (random nonce)")
	}
	if pt, err := k1.Open(sealed, "ws-1"); err != nil || pt != "secret-token" {
		t.Fatalf("open: %q %v", pt, err)
	}
	if _, err := k1.Open(sealed, "ws-2"); !errors.Is(err, controlplane.ErrCannotOpen) {
		t.Fatalf("other row's additional data: %v", err)
	}
	if _, err := k1.Open(sealed[:len(sealed)-4]+"AAAA", "ws-1"); !errors.Is(err, controlplane.ErrCannotOpen) {
		t.Fatalf("tampered: %v", err)
	}
	for _, bad := range []string{"", "secret-token", "v2:k1:abc", "v1:k1:!!"} {
		if _, err := k1.Open(bad, "ws-1"); !errors.Is(err, controlplane.ErrCannotOpen) {
			t.Errorf("Open(%q): %v", bad, err)
		}
	}
}

func TestPartnerConnectionSealedRotatedAndRemoved(t *testing.T) {
	a, _ := twoInstances(t)
	withSelectedApp(t, a)
	ctx := testenv.Ctx(t)
	const token = "prtapi_plaintext_token_4242"
	old := a.Partners(keyring(t, testKey("k1", 'a')))

	for _, org := range []string{"12a", "", "4 2"} {
		if _, err := old.ConnectPartner(ctx, "cli", "acme", org, token); !errors.Is(err, controlplane.ErrInvalid) {
			t.Errorf("org %q: %v", org, err)
		}
	}
	if _, err := old.ConnectPartner(ctx, "cli", "acme", "42", ""); !errors.Is(err, controlplane.ErrInvalid) {
		t.Errorf("empty token: %v", err)
	}
	conn, err := old.ConnectPartner(ctx, "cli", "acme", "42", token)
	if err != nil {
		t.Fatal(err)
	}
	if conn.SealedWithKey != "k1" || conn.OrganizationID != "42" {
		t.Fatalf("connection %+v", conn)
	}

	// No plaintext anywhere: the partner table, the audit log, Redis.
	var n uint64
	if err := a.Conn().QueryRow(ctx, `SELECT count() FROM partner_connections WHERE position(access_token_enc, ?) > 0
OR position(organization_id, ?) > 0 OR position(api_base_url, ?) > 0`, token, token, token).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("%d partner_connections rows hold the plaintext token", n)
	}
	assertNoPlaintext(t, a, token)
	var enc string
	if err := a.Conn().QueryRow(ctx, `SELECT sealed FROM sealed_secrets WHERE owner_id = ?`, conn.WorkspaceID).Scan(&enc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(enc, "v1:k1:") {
		t.Fatalf("stored token %q is not v1:k1:…", enc)
	}

	// Rotation step 1: a new key first, the old one second; the stored token still opens.
	rotated := a.Partners(keyring(t, testKey("k2", 'b')+","+testKey("k1", 'a')))
	got, tok, err := rotated.PartnerConnection(ctx, conn.WorkspaceID)
	if err != nil || tok != token || got.SealedWithKey != "k1" {
		t.Fatalf("open after rotation: %+v %v (token ok: %v)", got, err, tok == token)
	}
	// A keyring without k1 fails, naming the missing key.
	onlyNew := a.Partners(keyring(t, testKey("k2", 'b')))
	if _, _, err := onlyNew.PartnerConnection(ctx, conn.WorkspaceID); !errors.Is(err, controlplane.ErrCannotOpen) || !strings.Contains(err.Error(), `"k1"`) {
		t.Fatalf("without k1: %v", err)
	}
	// The right ID with the wrong bytes fails too.
	wrong := a.Partners(keyring(t, testKey("k1", 'z')))
	if _, _, err := wrong.PartnerConnection(ctx, conn.WorkspaceID); !errors.Is(err, controlplane.ErrCannotOpen) {
		t.Fatalf("wrong key bytes: %v", err)
	}

	// Step 2: re-seal; step 3: the old key can go.
	if n, err := rotated.ResealPartnerTokens(ctx, "cli"); err != nil || n != 1 {
		t.Fatalf("reseal: %d %v", n, err)
	}
	if n, err := rotated.ResealPartnerTokens(ctx, "cli"); err != nil || n != 0 {
		t.Fatalf("second reseal: %d %v", n, err)
	}
	got, tok, err = onlyNew.PartnerConnection(ctx, conn.WorkspaceID)
	if err != nil || tok != token || got.SealedWithKey != "k2" || !got.CreatedAt.Equal(conn.CreatedAt) {
		t.Fatalf("after reseal: %+v %v", got, err)
	}
	assertNoPlaintext(t, a, token)

	if err := onlyNew.DisconnectPartner(ctx, "cli", "acme"); err != nil {
		t.Fatal(err)
	}
	if _, err := onlyNew.DescribePartner(ctx, conn.WorkspaceID); !errors.Is(err, controlplane.ErrNotFound) {
		t.Fatalf("after disconnect: %v", err)
	}
	log, err := a.AuditLog(ctx, conn.WorkspaceID, 20)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range log {
		if strings.HasPrefix(e.Action, "partner.") {
			actions = append(actions, e.Action)
		}
	}
	if strings.Join(actions, " ") != "partner.disconnect partner.reseal partner.connect" {
		t.Errorf("audit actions %v", actions)
	}
}
