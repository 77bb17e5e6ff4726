package google_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/revtrack/revtrack/devtools/googlefake"
	"github.com/revtrack/revtrack/uploader/google"
)

func TestAuthCodeURLAsksForOfflineConsentAndBothScopes(t *testing.T) {
	o := google.NewOAuth("cid", "secret", "https://app.example/cb", google.DefaultEndpoints(), nil)
	u, err := url.Parse(o.AuthCodeURL("st-1", "verifier-verifier-verifier-verifier-verifier-1"))
	if err != nil {
		t.Fatal(err)
	}
	if got := u.Scheme + "://" + u.Host + u.Path; got != "https://accounts.google.com/o/oauth2/v2/auth" {
		t.Fatalf("auth endpoint %s", got)
	}
	q := u.Query()
	want := map[string]string{
		"access_type": "offline", "prompt": "consent", "state": "st-1", "client_id": "cid",
		"redirect_uri": "https://app.example/cb", "response_type": "code", "code_challenge_method": "S256",
		"code_challenge": oauth2.S256ChallengeFromVerifier("verifier-verifier-verifier-verifier-verifier-1"),
		"scope":          google.ScopeDataManager + " " + google.ScopeAdWords + " openid email",
	}
	for k, v := range want {
		if q.Get(k) != v {
			t.Errorf("%s = %q, want %q", k, q.Get(k), v)
		}
	}
}

// TestConsentFlowWithPKCE walks the browser leg against the fake's auto-approving endpoint.
func TestConsentFlowWithPKCE(t *testing.T) {
	e := newEnv(t)
	verifier := google.NewVerifier()
	resp, err := noRedirect(e.srv.Client()).Get(e.oauth.AuthCodeURL("state-42", verifier))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("authorize status %d", resp.StatusCode)
	}
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if loc.Path != "/callback" || loc.Query().Get("state") != "state-42" || loc.Query().Get("code") == "" {
		t.Fatalf("redirect %s", loc)
	}
	code := loc.Query().Get("code")

	if _, err := e.oauth.Exchange(context.Background(), code, "wrong-verifier-wrong-verifier-wrong-verifier-00"); !errors.Is(err, google.ErrInvalidGrant) {
		t.Fatalf("wrong verifier: %v, want ErrInvalidGrant", err)
	}
	g, err := e.oauth.Exchange(context.Background(), code, verifier)
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	if g.RefreshToken == "" || g.Token == nil || g.Token.AccessToken == "" {
		t.Fatalf("grant %+v", g)
	}
	if m := google.MissingScopes(g.Scopes); m != nil {
		t.Fatalf("missing scopes %v", m)
	}
	// The sign-in scopes name the consenting account and are not API scopes.
	if g.Account != googlefake.DefaultAccount || !slices.Equal(g.Scopes, []string{google.ScopeDataManager, google.ScopeAdWords}) {
		t.Fatalf("account %+v scopes %v", g.Account, g.Scopes)
	}
	// A code is single use.
	if _, err := e.oauth.Exchange(context.Background(), code, verifier); !errors.Is(err, google.ErrInvalidGrant) {
		t.Fatalf("reused code: %v", err)
	}
}

func TestExchangeWithoutVerifierWhenChallengeWasSentFails(t *testing.T) {
	e := newEnv(t)
	resp, err := noRedirect(e.srv.Client()).Get(e.oauth.AuthCodeURL("s", google.NewVerifier()))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, _ := url.Parse(resp.Header.Get("Location"))
	_, err = e.oauth.Exchange(context.Background(), loc.Query().Get("code"), "")
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.ErrorDescription != "Missing code verifier." {
		t.Fatalf("got %v", err)
	}
}

func TestGranularConsentReportsMissingScope(t *testing.T) {
	e := newEnv(t, func(c *googlefake.Config) { c.GrantedScopes = []string{google.ScopeDataManager} })
	resp, err := noRedirect(e.srv.Client()).Get(e.oauth.AuthCodeURL("s", ""))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, _ := url.Parse(resp.Header.Get("Location"))
	g, err := e.oauth.Exchange(context.Background(), loc.Query().Get("code"), "")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(g.Scopes, []string{google.ScopeDataManager}) {
		t.Fatalf("scopes %v", g.Scopes)
	}
	if m := google.MissingScopes(g.Scopes); !slices.Equal(m, []string{google.ScopeAdWords}) {
		t.Fatalf("missing %v", m)
	}
	// Google then refuses the Ads call with 403 ACCESS_TOKEN_SCOPE_INSUFFICIENT.
	ts := e.oauth.TokenSource(context.Background(), g.RefreshToken)
	_, err = e.ads.AccessibleCustomers(context.Background(), ts)
	var ae *google.APIError
	if !errors.As(err, &ae) || ae.HTTPStatus != 403 || ae.Reason != "ACCESS_TOKEN_SCOPE_INSUFFICIENT" || google.Classify(err) != google.Permanent {
		t.Fatalf("ads with datamanager scope only: %v", err)
	}
}

func TestMissingScopes(t *testing.T) {
	if m := google.MissingScopes(nil); !slices.Equal(m, []string{google.ScopeDataManager, google.ScopeAdWords}) {
		t.Fatalf("nil: %v", m)
	}
	if m := google.MissingScopes([]string{"openid", google.ScopeAdWords}); !slices.Equal(m, []string{google.ScopeDataManager}) {
		t.Fatalf("adwords only: %v", m)
	}
}

func TestTokenSourceRefreshesAndInvalidGrantAfterRevocation(t *testing.T) {
	e := newEnv(t)
	g, ts := e.connect(t)
	tok, err := ts.Token()
	if err != nil || tok.AccessToken == "" || tok.AccessToken == g.Token.AccessToken {
		t.Fatalf("refresh: %v %+v", err, tok)
	}
	if err := e.oauth.Revoke(context.Background(), g.RefreshToken); err != nil {
		t.Fatalf("revoke: %v", err)
	}
	if !e.fake.Revoked(g.RefreshToken) || !e.fake.Revoked(tok.AccessToken) {
		t.Fatal("fake does not report the grant revoked")
	}
	// A fresh source must refresh, and Google answers invalid_grant.
	_, err = e.oauth.TokenSource(context.Background(), g.RefreshToken).Token()
	if !errors.Is(err, google.ErrInvalidGrant) || google.Classify(err) != google.Unauthenticated {
		t.Fatalf("refresh after revoke: %v (class %v)", err, google.Classify(err))
	}
	// The cached access token is revoked too: the API answers 401.
	_, err = e.dm.Ingest(context.Background(), ts, minimalRequest("tx-1", "Cj0-ok-1"))
	if google.Classify(err) != google.Unauthenticated {
		t.Fatalf("ingest with revoked token: %v", err)
	}
	// The data manager client surfaces invalid_grant from its token source as such.
	_, err = e.dm.Ingest(context.Background(), e.oauth.TokenSource(context.Background(), g.RefreshToken), minimalRequest("tx-1", "Cj0-ok-1"))
	if !errors.Is(err, google.ErrInvalidGrant) {
		t.Fatalf("ingest with refused refresh token: %v", err)
	}
}

func TestRevokeOutcomes(t *testing.T) {
	e := newEnv(t)
	g, _ := e.connect(t)
	ctx := context.Background()

	e.fake.FailRevocation(http.StatusServiceUnavailable)
	if err := e.oauth.Revoke(ctx, g.RefreshToken); !errors.Is(err, google.ErrRevocationUnconfirmed) {
		t.Fatalf("503: %v", err)
	}
	e.fake.FailRevocation(http.StatusBadRequest)
	if err := e.oauth.Revoke(ctx, g.RefreshToken); !errors.Is(err, google.ErrRevocationUnconfirmed) {
		t.Fatalf("400 other than invalid_token: %v", err)
	}
	if e.fake.Revoked(g.RefreshToken) {
		t.Fatal("a failed revocation revoked the grant")
	}
	e.fake.FailRevocation(0)
	if err := e.oauth.Revoke(ctx, g.RefreshToken); err != nil {
		t.Fatalf("200: %v", err)
	}
	// Already revoked: 400 invalid_token means nothing is left to revoke.
	if err := e.oauth.Revoke(ctx, g.RefreshToken); err != nil {
		t.Fatalf("invalid_token: %v", err)
	}
	if err := e.oauth.Revoke(ctx, "never-issued"); err != nil {
		t.Fatalf("unknown token: %v", err)
	}
}

func TestRevokeNetworkErrorIsUnconfirmed(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	o := google.NewOAuth("cid", "secret", "", google.EndpointsAt(srv.URL), nil)
	err := o.Revoke(context.Background(), "tok")
	if !errors.Is(err, google.ErrRevocationUnconfirmed) || google.Classify(err) != google.Transient {
		t.Fatalf("got %v", err)
	}
}

func TestExchangeWithWrongClientSecretIsPermanent(t *testing.T) {
	e := newEnv(t)
	bad := google.NewOAuth("revtrack-local", "wrong", "", e.ep, e.srv.Client())
	_, err := bad.Exchange(context.Background(), e.fake.IssueCode(), "")
	if err == nil || google.Classify(err) != google.Permanent || !strings.Contains(err.Error(), "invalid_client") {
		t.Fatalf("got %v (class %v)", err, google.Classify(err))
	}
}
