package google_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/oauth2"

	"github.com/revtrack/revtrack/devtools/googlefake"
	"github.com/revtrack/revtrack/uploader/google"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// clock is a settable time source for the fake.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)} }

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

// env is a fake Google on a local server with the clients pointed at it.
type env struct {
	fake  *googlefake.Fake
	srv   *httptest.Server
	ep    google.Endpoints
	oauth *google.OAuth
	dm    *google.DataManager
	ads   *google.Ads
	clock *clock
}

func newEnv(t *testing.T, mutate ...func(*googlefake.Config)) *env {
	t.Helper()
	cfg := googlefake.DefaultConfig()
	c := newClock()
	cfg.Now = c.Now
	for _, m := range mutate {
		m(&cfg)
	}
	f := googlefake.New(cfg)
	srv := httptest.NewServer(f)
	hc := srv.Client()
	t.Cleanup(func() {
		hc.CloseIdleConnections()
		srv.Close()
	})
	ep := google.EndpointsAt(srv.URL)
	return &env{
		fake:  f,
		srv:   srv,
		ep:    ep,
		oauth: google.NewOAuth(cfg.ClientID, cfg.ClientSecret, srv.URL+"/callback", ep, hc),
		dm:    google.NewDataManager(ep.DataManagerURL, hc),
		ads:   google.NewAds(ep.AdsURL, ep.AdsAPIVersion, hc),
		clock: c,
	}
}

// connect exchanges a fake-issued code and returns the grant and a token source.
func (e *env) connect(t *testing.T, scopes ...string) (google.Grant, oauth2.TokenSource) {
	t.Helper()
	g, err := e.oauth.Exchange(context.Background(), e.fake.IssueCode(scopes...), "")
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	return g, e.oauth.TokenSource(context.Background(), g.RefreshToken)
}

func staticToken(tok string) oauth2.TokenSource {
	return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: tok, TokenType: "Bearer"})
}

func noRedirect(hc *http.Client) *http.Client {
	c := *hc
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}

func ptr[T any](v T) *T { return &v }
