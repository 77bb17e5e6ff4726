package ingest

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/internal/testenv"
)

// TestRefusalsReachTheSourceStatus: every refusal that names a source, on the control plane's path
// (a key's first request) and on the one-script path alike, is counted for the source's status
// panel (controlplane.SourceRefusals): an origin not allowed, a private key that does not match, a
// disabled source and a rotated-away public key.
func TestRefusalsReachTheSourceStatus(t *testing.T) {
	e := newEdge(t, DefaultConfig())
	ctx := testenv.Ctx(t)
	from := func(origin, key string) reply {
		return e.do(t, http.MethodPost, "/v1/collect", map[string]string{"Origin": origin, "Content-Type": "text/plain;charset=UTF-8"},
			collectBody(key, pageView("e-"+testenv.ID())))
	}
	// The first request resolves through the control plane, the later ones through the script.
	for _, o := range []string{"https://www.app.example", "https://app.example", "https://www.app.example", "http://app.example"} {
		want := 403
		if o == "https://app.example" {
			want = 202
		}
		if r := from(o, e.src.PublicKey); r.status != want {
			t.Fatalf("%s: %d %v", o, r.status, r.body)
		}
	}
	if r := e.serverEvent(t, controlplane.PrivateKeyPrefix+"wrong", nil); r.status != 401 {
		t.Fatalf("wrong private key: %d %v", r.status, r.body)
	}
	if _, err := e.store.SetSourceEnabled(ctx, "test", e.src.WorkspaceID, e.src.ID, false); err != nil {
		t.Fatal(err)
	}
	if r := from("https://app.example", e.src.PublicKey); r.status != 401 {
		t.Fatalf("disabled: %d %v", r.status, r.body)
	}
	if _, err := e.store.SetSourceEnabled(ctx, "test", e.src.WorkspaceID, e.src.ID, true); err != nil {
		t.Fatal(err)
	}
	// As the admin API rotates (adminapi/sources.go): the old key is remembered for its source.
	if _, err := e.store.RotatePublicKey(ctx, "test", e.src.WorkspaceID, e.src.ID); err != nil {
		t.Fatal(err)
	}
	if err := e.store.RetirePublicKey(ctx, e.src.PublicKey, e.src.ID); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if r := from("https://app.example", e.src.PublicKey); r.status != 401 {
			t.Fatalf("rotated key: %d %v", r.status, r.body)
		}
	}
	if r := e.serverEvent(t, e.sk, nil); r.status != 401 { // the body still has the old public key
		t.Fatalf("server event with the rotated public key: %d %v", r.status, r.body)
	}

	wantOrigins := map[string]int64{"https://www.app.example": 2, "http://app.example": 1}
	wantKeys := map[string]int64{controlplane.RefusedPrivateKey: 1, controlplane.RefusedSourceDisabled: 1, controlplane.RefusedPublicKeyRotated: 3}
	var got controlplane.SourceRefusals
	// Recorded off the requests' path: wait for them.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var err error
		if got, err = e.store.SourceRefusals(ctx, e.src.ID); err != nil {
			t.Fatal(err)
		}
		origins, keys := map[string]int64{}, map[string]int64{}
		for _, o := range got.Origins {
			origins[o.Origin] = o.Count
		}
		for _, k := range got.Keys {
			keys[k.Reason] = k.Count
		}
		if equal(origins, wantOrigins) && equal(keys, wantKeys) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("refusals %+v, want origins %v and keys %v", got, wantOrigins, wantKeys)
		}
	}
	if !slices.IsSortedFunc(got.Keys, func(a, b controlplane.RefusedKey) int { return b.LastAt.Compare(a.LastAt) }) {
		t.Fatalf("keys not newest first: %+v", got.Keys)
	}
	if since := time.Since(got.Since); since < controlplane.RefusalWindow-time.Minute || since > controlplane.RefusalWindow+time.Minute {
		t.Fatalf("since %v", got.Since)
	}
}

func equal(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
