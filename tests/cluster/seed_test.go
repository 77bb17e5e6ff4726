package cluster

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/revtrack/revtrack/devtools/googlefake"
	"github.com/revtrack/revtrack/devtools/partnerfake"
)

// fakes are the platform's partner API and Google's APIs, served once and shared by the instances
// of a test (each connects its own workspace to them).
type fakes struct {
	partner, google *httptest.Server
	partnerCfg      partnerfake.ServerConfig
	data            *partnerfake.Dataset
}

// newFakes serves a small data set (one app, 150 shops, 6 months ending today): enough for every
// reporting figure to be non-trivial, small enough for a sync within seconds on the cluster.
func newFakes(t *testing.T) *fakes {
	t.Helper()
	gc := partnerfake.DemoConfig(time.Now())
	gc.Apps, gc.Shops, gc.Start = 1, 150, gc.End.AddDate(0, -6, 0)
	d := partnerfake.Generate(gc)
	pc := partnerfake.DefaultServerConfig()
	pc.RequestsPerSecond = 0
	f := &fakes{partner: httptest.NewServer(partnerfake.NewServer(d, pc)), partnerCfg: pc, data: d,
		google: httptest.NewServer(googlefake.New(googlefake.DefaultConfig()))}
	t.Cleanup(f.partner.Close)
	t.Cleanup(f.google.Close)
	return f
}

// serverFlags point `revtrack all` at the fakes.
func (f *fakes) serverFlags() []string {
	return []string{"--partner-api-base-url", f.partner.URL, "--ads-google-base-url", f.google.URL,
		"--ads-oauth-client-id", "revtrack-local", "--ads-oauth-client-secret", "revtrack-local-secret",
		"--ads-dispatch-interval", "1s", "--platform-sync-interval", "0"}
}

// excludedShop is a paying shop of the data set, the same for every instance.
func (f *fakes) excludedShop() string {
	n := 0
	for _, sh := range f.data.Shops {
		if !sh.Test && !sh.Excluded {
			if n++; n == 7 {
				return sh.Domain
			}
		}
	}
	return f.data.Shops[0].Domain
}

const (
	testOrigin = "https://cluster-test.example"
	testTeam   = "cluster-test"
	testApp    = "cluster-app"
)

// seed migrates the instance's database (on the cluster: ON CLUSTER) and creates a workspace with
// the fake's app selected, an admin key and a tracking source, through revtrack's admin commands.
func (in *instance) seed(t *testing.T, platformAppID string) {
	t.Helper()
	in.cli(t, "migrate")
	// The copies are settled after the migrations on both shapes (on the cluster, 18.16 once failed
	// that on every fresh database: schemas/reportingbackfill, Auto).
	if log, err := os.ReadFile(in.logPath); err == nil && bytes.Contains(log, []byte("copies not settled")) {
		t.Errorf("%s: revtrack migrate did not settle the copies (log %s)", in.shape, in.logPath)
	}
	in.team, in.app = testTeam, testApp
	in.cli(t, "admin", "app", "put", testApp, "Cluster App", "--platform-id", platformAppID, "--auto-migrate=false")
	in.cli(t, "admin", "workspace", "create", testTeam, "--apps", testApp, "--auto-migrate=false")
	var key struct {
		Key string `json:"key"`
	}
	mustJSON(t, in.cli(t, "admin", "key", "create", testTeam, "--name", "cluster-test", "--scope", "admin", "--auto-migrate=false"), &key)
	var src struct {
		Source struct {
			ID          string `json:"id"`
			WorkspaceID string `json:"workspaceId"`
			PublicKey   string `json:"publicKey"`
		} `json:"source"`
		PrivateKey string `json:"privateKey"`
	}
	mustJSON(t, in.cli(t, "admin", "source", "create", testTeam, "--app", testApp, "--name", "site", "--origins", testOrigin,
		"--auto-migrate=false"), &src)
	in.apiKey, in.sourceID, in.publicKey, in.privateKey = key.Key, src.Source.ID, src.Source.PublicKey, src.PrivateKey
	in.workspaceID = src.Source.WorkspaceID
	if in.apiKey == "" || in.sourceID == "" || in.publicKey == "" || in.privateKey == "" {
		t.Fatalf("%s: seeding gave key %q source %q", in.shape, in.apiKey, in.sourceID)
	}
}

// connect connects the workspace to the partner fake and to Google's fake, and maps the install
// milestone to a click-import action; a new mapping is in Validation only. It returns the mapping.
func (in *instance) connect(t *testing.T, f *fakes) string {
	t.Helper()
	if code, raw := in.call(t, nil, http.MethodPut, "/api/admin/partner-connection",
		map[string]string{"organizationId": f.partnerCfg.OrgID, "accessToken": f.partnerCfg.Tokens[0]}, nil); code != http.StatusOK {
		t.Fatalf("%s: partner connection: %d %s", in.shape, code, raw)
	}
	var begin struct {
		AuthorizationURL string `json:"authorizationUrl"`
	}
	if code, raw := in.call(t, nil, http.MethodPost, "/api/admin/ads/connection", nil, &begin); code/100 != 2 {
		t.Fatalf("%s: ads connection: %d %s", in.shape, code, raw)
	}
	// The browser's part: begin, consent, callback, with the begin link's cookie.
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	req, _ := http.NewRequest(http.MethodGet, begin.AuthorizationURL, nil)
	req.Header.Set("Accept", "application/json")
	resp, err := browser.Do(req)
	if err != nil {
		t.Fatalf("%s: consent: %v", in.shape, err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("%s: consent: %d", in.shape, resp.StatusCode)
	}
	if code, raw := in.call(t, nil, http.MethodPut, "/api/admin/ads/connection/account",
		map[string]string{"conversionCustomerId": "1234567890", "loginCustomerId": "9876543210"}, nil); code/100 != 2 {
		t.Fatalf("%s: ads account: %d %s", in.shape, code, raw)
	}
	var m struct {
		Mapping struct {
			MappingID      string `json:"mappingId"`
			ValidationOnly bool   `json:"validationOnly"`
		} `json:"mapping"`
	}
	if code, raw := in.call(t, nil, http.MethodPost, "/api/admin/ads/mappings", map[string]any{"sourceId": in.sourceID,
		"milestone": "install", "conversionActionId": "7723667020", "consentConfirmed": true}, &m); code/100 != 2 {
		t.Fatalf("%s: ads mapping: %d %s", in.shape, code, raw)
	}
	if !m.Mapping.ValidationOnly {
		t.Fatalf("%s: a new mapping is not in Validation only", in.shape)
	}
	return m.Mapping.MappingID
}

// exclude excludes the fake's chosen shop from the aggregate figures (on) or lifts it (off).
func (in *instance) exclude(t *testing.T, f *fakes, on bool) {
	t.Helper()
	method, path, body := http.MethodPost, "/api/admin/customer-exclusions", any(map[string]string{"shopDomain": f.excludedShop()})
	if !on {
		method, path, body = http.MethodDelete, path+"?shopDomain="+url.QueryEscape(f.excludedShop()), nil
	}
	if code, raw := in.call(t, nil, method, path, body, nil); code/100 != 2 {
		t.Fatalf("%s: %s customer exclusion: %d %s", in.shape, method, code, raw)
	}
}

func mustJSON(t testing.TB, raw []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
}
