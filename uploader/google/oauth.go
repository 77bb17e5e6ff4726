package google

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

var (
	// ErrInvalidGrant means Google refused the refresh token or authorization code (revoked,
	// expired, unused for six months, too many tokens): only a new consent helps.
	ErrInvalidGrant = errors.New("google oauth: invalid_grant (the user must reconnect)")
	// ErrRevocationUnconfirmed means Google did not confirm the revocation (5xx, network error or
	// an unexpected 400); the token may still be live and the revocation should be retried.
	ErrRevocationUnconfirmed = errors.New("google oauth: revocation not confirmed")
	// ErrNoRefreshToken means the code exchange returned no refresh token, so offline access was not
	// granted and nothing can be uploaded later.
	ErrNoRefreshToken = errors.New("google oauth: no refresh token in the token response")
)

// requiredScopes are requested together; the order is the order MissingScopes reports.
var requiredScopes = []string{ScopeDataManager, ScopeAdWords}

// defaultTimeout bounds a call when the caller passes no HTTP client.
const defaultTimeout = 30 * time.Second

// OAuth runs Google's web-server OAuth flow for one OAuth client.
type OAuth struct {
	cfg       oauth2.Config
	revokeURL string
	hc        *http.Client
}

// NewOAuth builds the flow for a client ID/secret; hc nil means a client with a 30 s timeout.
func NewOAuth(clientID, clientSecret, redirectURL string, ep Endpoints, hc *http.Client) *OAuth {
	if hc == nil {
		hc = &http.Client{Timeout: defaultTimeout}
	}
	return &OAuth{
		cfg: oauth2.Config{
			ClientID:     clientID,
			ClientSecret: clientSecret,
			RedirectURL:  redirectURL,
			// The sign-in scopes make the token response name the consenting account.
			Scopes: append(slices.Clone(requiredScopes), ScopeOpenID, ScopeEmail),
			// Google takes client credentials in the form body; auto-detection would cost a
			// failed round trip per exchange.
			Endpoint: oauth2.Endpoint{AuthURL: ep.AuthURL, TokenURL: ep.TokenURL, AuthStyle: oauth2.AuthStyleInParams},
		},
		revokeURL: ep.RevokeURL,
		hc:        hc,
	}
}

// NewVerifier returns a fresh PKCE code verifier for AuthCodeURL and Exchange.
func NewVerifier() string { return oauth2.GenerateVerifier() }

// AuthCodeURL is the consent URL: offline access (a refresh token), prompt=consent (a refresh token
// again on reconnect), both scopes, state, and the PKCE S256 challenge of verifier when non-empty.
func (o *OAuth) AuthCodeURL(state, verifier string) string {
	opts := []oauth2.AuthCodeOption{oauth2.AccessTypeOffline, oauth2.ApprovalForce}
	if verifier != "" {
		opts = append(opts, oauth2.S256ChallengeOption(verifier))
	}
	return o.cfg.AuthCodeURL(state, opts...)
}

// Grant is the outcome of a code exchange. Token is the first access token (with the refresh
// token), usable at once for account discovery. Account is the Google account that consented, from
// the ID token (zero when the response had none).
type Grant struct {
	RefreshToken string
	Scopes       []string
	Account      Account
	Token        *oauth2.Token
}

// Exchange trades an authorization code for tokens. Scopes are the API scopes actually granted (the
// token response's "scope" without the sign-in scopes; RFC 6749 says an absent scope means the
// requested ones). An invalid_grant answer wraps ErrInvalidGrant; a response without refresh token
// ErrNoRefreshToken; an ID token not issued to this client ErrBadIDToken.
func (o *OAuth) Exchange(ctx context.Context, code, verifier string) (Grant, error) {
	var opts []oauth2.AuthCodeOption
	if verifier != "" {
		opts = append(opts, oauth2.VerifierOption(verifier))
	}
	tok, err := o.cfg.Exchange(o.clientContext(ctx), code, opts...)
	if err != nil {
		return Grant{}, fmt.Errorf("google oauth: exchange code: %w", tokenError(err))
	}
	g := Grant{RefreshToken: tok.RefreshToken, Token: tok, Scopes: slices.Clone(requiredScopes)}
	if s, ok := tok.Extra("scope").(string); ok {
		g.Scopes = slices.DeleteFunc(strings.Fields(s), identityScope)
	}
	if raw, ok := tok.Extra("id_token").(string); ok && raw != "" {
		if g.Account, err = accountFromIDToken(raw, o.cfg.ClientID); err != nil {
			return Grant{}, err
		}
	}
	if g.RefreshToken == "" {
		return g, ErrNoRefreshToken
	}
	return g, nil
}

// MissingScopes returns which of the two required scopes are absent from granted, in the order
// datamanager, adwords; nil when both were granted.
func MissingScopes(granted []string) []string {
	var missing []string
	for _, s := range requiredScopes {
		if !slices.Contains(granted, s) {
			missing = append(missing, s)
		}
	}
	return missing
}

// TokenSource mints access tokens from a refresh token, caching each until shortly before it
// expires. ctx is kept for every later refresh, so it must outlive the source (not a request
// context). A refused refresh token surfaces as an error wrapping ErrInvalidGrant.
func (o *OAuth) TokenSource(ctx context.Context, refreshToken string) oauth2.TokenSource {
	return grantErrorSource{src: o.cfg.TokenSource(o.clientContext(ctx), &oauth2.Token{RefreshToken: refreshToken})}
}

func (o *OAuth) clientContext(ctx context.Context) context.Context {
	return context.WithValue(ctx, oauth2.HTTPClient, o.hc)
}

// grantErrorSource turns the token endpoint's invalid_grant into ErrInvalidGrant so callers can
// match it with errors.Is, keeping the original *oauth2.RetrieveError in the chain.
type grantErrorSource struct{ src oauth2.TokenSource }

func (s grantErrorSource) Token() (*oauth2.Token, error) {
	t, err := s.src.Token()
	if err != nil {
		return nil, tokenError(err)
	}
	return t, nil
}

func tokenError(err error) error {
	if errors.Is(err, ErrInvalidGrant) {
		return err
	}
	var re *oauth2.RetrieveError
	if errors.As(err, &re) && re.ErrorCode == "invalid_grant" {
		return fmt.Errorf("%w: %w", ErrInvalidGrant, err)
	}
	return err
}

// Revoke revokes token (access or refresh; revoking either ends the whole grant). It returns nil
// when revocation is confirmed: 200, or 400 invalid_token, which means there is nothing left to
// revoke. Anything else (5xx, network error, another 400) wraps ErrRevocationUnconfirmed.
func (o *OAuth) Revoke(ctx context.Context, token string) error {
	if token == "" {
		return nil // nothing to revoke
	}
	form := url.Values{"token": {token}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.revokeURL, strings.NewReader(form.Encode()))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrRevocationUnconfirmed, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := o.hc.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrRevocationUnconfirmed, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode == http.StatusOK {
		return nil
	}
	var e struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	_ = json.Unmarshal(body, &e)
	if resp.StatusCode == http.StatusBadRequest && e.Error == "invalid_token" {
		return nil
	}
	return fmt.Errorf("%w: HTTP %d %s %s", ErrRevocationUnconfirmed, resp.StatusCode, e.Error, e.Description)
}
