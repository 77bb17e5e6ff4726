package googlefake_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/revtrack/revtrack/devtools/googlefake"
	"github.com/revtrack/revtrack/internal/testenv"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

type harness struct {
	t     *testing.T
	fake  *googlefake.Fake
	srv   *httptest.Server
	clock *clock
}

func start(t *testing.T, mutate ...func(*googlefake.Config)) *harness {
	t.Helper()
	c := &clock{now: time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)}
	cfg := googlefake.DefaultConfig()
	cfg.Now = c.Now
	for _, m := range mutate {
		m(&cfg)
	}
	f := googlefake.New(cfg)
	srv := httptest.NewServer(f)
	t.Cleanup(func() {
		srv.Client().CloseIdleConnections()
		srv.Close()
	})
	return &harness{t: t, fake: f, srv: srv, clock: c}
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("response %d %s: %v", r.status, r.body, err)
	}
}

func (h *harness) do(method, path string, header http.Header, body string) response {
	h.t.Helper()
	req, err := http.NewRequest(method, h.srv.URL+path, strings.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	c := *h.srv.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

func (h *harness) form(path string, v url.Values) response {
	return h.do(http.MethodPost, path, http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, v.Encode())
}

// token exchanges a fake-issued code and returns the access and refresh tokens.
func (h *harness) token(scopes ...string) (access, refresh string) {
	h.t.Helper()
	r := h.form("/token", url.Values{"grant_type": {"authorization_code"}, "code": {h.fake.IssueCode(scopes...)},
		"client_id": {"revtrack-local"}, "client_secret": {"revtrack-local-secret"}})
	var tok struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
	}
	r.json(h.t, &tok)
	if r.status != 200 || tok.AccessToken == "" {
		h.t.Fatalf("token: %d %s", r.status, r.body)
	}
	return tok.AccessToken, tok.RefreshToken
}

func bearer(tok string) http.Header {
	return http.Header{"Authorization": {"Bearer " + tok}, "Content-Type": {"application/json"}}
}

func (h *harness) ingest(tok, body string) response {
	return h.do(http.MethodPost, "/v1/events:ingest", bearer(tok), body)
}

var (
	requestIDRE    = regexp.MustCompile(`t-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	adsRequestIDRE = regexp.MustCompile(`"requestId": "[0-9a-f]{22}"`)
)

// golden records status, the headers that matter and the body, with random IDs replaced.
func golden(t *testing.T, name string, r response) {
	t.Helper()
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP %d\n", r.status)
	for _, k := range []string{"Content-Type", "Www-Authenticate"} {
		if v := r.header.Get(k); v != "" {
			fmt.Fprintf(&b, "%s: %s\n", k, v)
		}
	}
	b.WriteByte('\n')
	body := requestIDRE.ReplaceAll(r.body, []byte("t-REQUEST-ID"))
	body = adsRequestIDRE.ReplaceAll(body, []byte(`"requestId": "ADS-REQUEST-ID"`))
	b.Write(body)
	testenv.Golden(t, "testdata/"+name+".golden", b.Bytes())
}

const validBody = `{
  "destinations": [{"operatingAccount": {"accountType": "GOOGLE_ADS", "accountId": "1234567890"},
                    "loginAccount": {"accountType": "GOOGLE_ADS", "accountId": "9876543210"},
                    "productDestinationId": "7723667020"}],
  "events": [{"eventTimestamp": "2026-09-01T14:03:22Z", "transactionId": "rt-1",
              "adIdentifiers": {"gclid": "Cj0KCQ-ok"}, "conversionValue": 49.0, "currency": "EUR",
              "eventSource": "IN_STORE"}],
  "consent": {"adUserData": "CONSENT_GRANTED", "adPersonalization": "CONSENT_GRANTED"}
}`
