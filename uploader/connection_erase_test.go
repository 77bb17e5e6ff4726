package uploader_test

import (
	"errors"
	"testing"
	"time"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/devtools/googlefake"
	"github.com/revtrack/revtrack/uploader"
)

// storedCopies counts every stored version of the workspace's refresh token: its sealed_secrets
// rows and any record version with a token, read without FINAL.
func (e *setupEnv) storedCopies() uint64 {
	e.t.Helper()
	var n uint64
	if err := e.db.Conn.QueryRow(e.ctx, `SELECT (SELECT count() FROM sealed_secrets WHERE workspace_id = ?)
  + (SELECT count() FROM ad_connections WHERE workspace_id = ? AND refresh_token_enc != '')`, e.ws, e.ws).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

// A confirmed disconnection reports an erase ClickHouse has not finished (here: merges, which run
// mutations, are stopped on the secrets table); the token is not readable meanwhile, and
// disconnecting again confirms the erase once it is done.
func TestDisconnectWaitsForTheErase(t *testing.T) {
	t.Parallel()
	e := newSetupEnv(t, googlefake.DefaultConfig(), nil)
	e.ready()
	tok := e.token()
	if err := e.db.Conn.Exec(e.ctx, `SYSTEM STOP MERGES sealed_secrets`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.db.Conn.Exec(e.ctx, `SYSTEM START MERGES sealed_secrets`) })
	e.tenant.Store.EraseTimeout = 300 * time.Millisecond

	if _, err := e.setup.Disconnect(e.ctx, setupActor, e.ws); !errors.Is(err, controlplane.ErrEraseUnconfirmed) {
		t.Fatalf("disconnect with the deletion stalled: %v", err)
	}
	if c := e.connection(); c.Connected() || !e.fake.Revoked(tok) {
		t.Fatalf("after the revocation: %+v (revoked %v)", c, e.fake.Revoked(tok))
	}
	if _, err := e.tenant.Store.AdConnections(e.keys).RefreshToken(e.ctx, e.ws); !errors.Is(err, controlplane.ErrNotFound) {
		t.Fatalf("a token whose deletion is running was read: %v", err)
	}
	if e.storedCopies() == 0 {
		t.Fatal("the test expects the stalled deletion to leave the copy")
	}

	if err := e.db.Conn.Exec(e.ctx, `SYSTEM START MERGES sealed_secrets`); err != nil {
		t.Fatal(err)
	}
	e.tenant.Store.EraseTimeout = 0
	c, err := e.setup.Disconnect(e.ctx, setupActor, e.ws)
	if err != nil || c.Connected() {
		t.Fatalf("disconnecting again to confirm the erase: %+v %v", c, err)
	}
	if n := e.storedCopies(); n != 0 {
		t.Fatalf("%d stored copies after the confirmed erase", n)
	}
	if _, err := e.setup.Disconnect(e.ctx, setupActor, e.ws); !errors.Is(err, uploader.ErrConflict) {
		t.Fatalf("disconnecting a third time: %v", err)
	}
}
