package googlefake

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/revtrack/revtrack/uploader/google"
)

// codeTTL is how long an authorization code can be exchanged (Google: a few minutes).
const codeTTL = 10 * time.Minute

type authCode struct {
	scopes      []string
	account     google.Account
	redirectURI string // "" = not checked (IssueCode)
	challenge   string
	method      string
	offline     bool
	issued      time.Time
	used        bool
}

// refreshGrant is one consent: its refresh token (if offline access was asked) and its scopes.
// Revoking any token of the grant revokes the grant.
type refreshGrant struct {
	token   string
	scopes  []string
	revoked bool
}

type accessToken struct {
	grant  *refreshGrant
	expiry time.Time
}

func randomToken(prefix string) string {
	b := make([]byte, 18)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// IssueCode returns an authorization code the token endpoint will exchange (with any redirect URI
// and no PKCE) for an offline grant of scopes, default Config.GrantedScopes, by the signed-in
// account (its ID token comes with the exchange when scopes include openid).
func (f *Fake) IssueCode(scopes ...string) string {
	if len(scopes) == 0 {
		scopes = f.cfg.GrantedScopes
	}
	code := randomToken("4/fake-")
	f.mu.Lock()
	defer f.mu.Unlock()
	f.codes[code] = &authCode{scopes: slices.Clone(scopes), account: f.cfg.Account, offline: true, issued: f.cfg.Now()}
	return code
}

// Revoked reports whether token (access or refresh) belongs to a revoked grant; false for a token
// the fake never issued.
func (f *Fake) Revoked(token string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if g := f.grantOf(token); g != nil {
		return g.revoked
	}
	return false
}

// RevokeGrant revokes token's grant as if the user removed the app's access in their Google
// account; it reports whether the token was known.
func (f *Fake) RevokeGrant(token string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	g := f.grantOf(token)
	if g == nil {
		return false
	}
	g.revoked = true
	return true
}

// ExpireAccessTokens makes every access token issued so far expired, so the next API call answers
// 401 until the client refreshes.
func (f *Fake) ExpireAccessTokens() {
	f.mu.Lock()
	defer f.mu.Unlock()
	past := f.cfg.Now().Add(-time.Second)
	for _, at := range f.access {
		at.expiry = past
	}
}

func (f *Fake) grantOf(token string) *refreshGrant {
	if at, ok := f.access[token]; ok {
		return at.grant
	}
	return f.refresh[token]
}

// authorize approves at once: 302 to redirect_uri with a code and the state, granting the
// requested scopes that Config.GrantedScopes allows (granular consent).
func (f *Fake) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("client_id") != f.cfg.ClientID {
		http.Error(w, "Error 401: invalid_client\nThe OAuth client was not found.", http.StatusUnauthorized)
		return
	}
	redirect, err := url.Parse(q.Get("redirect_uri"))
	if err != nil || q.Get("redirect_uri") == "" || !redirect.IsAbs() {
		http.Error(w, "Error 400: redirect_uri_mismatch", http.StatusBadRequest)
		return
	}
	if q.Get("response_type") != "code" {
		http.Error(w, "Error 400: unsupported_response_type", http.StatusBadRequest)
		return
	}
	method := q.Get("code_challenge_method")
	if q.Get("code_challenge") != "" && method == "" {
		method = "plain"
	}
	if method != "" && method != "S256" && method != "plain" {
		http.Error(w, "Error 400: invalid_request\nInvalid code_challenge_method.", http.StatusBadRequest)
		return
	}
	var granted []string
	for _, s := range strings.Fields(q.Get("scope")) {
		if (slices.Contains(f.cfg.GrantedScopes, s) || s == google.ScopeOpenID || s == google.ScopeEmail) && !slices.Contains(granted, s) {
			granted = append(granted, s)
		}
	}
	back := redirect.Query()
	if state := q.Get("state"); state != "" {
		back.Set("state", state)
	}
	if !slices.ContainsFunc(granted, func(s string) bool { return s != google.ScopeOpenID && s != google.ScopeEmail }) {
		back.Set("error", "access_denied")
	} else {
		code := randomToken("4/fake-")
		f.mu.Lock()
		f.codes[code] = &authCode{
			scopes: granted, account: f.cfg.Account, redirectURI: q.Get("redirect_uri"),
			challenge: q.Get("code_challenge"), method: method,
			offline: q.Get("access_type") == "offline", issued: f.cfg.Now(),
		}
		f.mu.Unlock()
		back.Set("code", code)
		back.Set("scope", strings.Join(grantedNames(granted), " "))
	}
	redirect.RawQuery = back.Encode()
	http.Redirect(w, r, redirect.String(), http.StatusFound)
}

type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	ExpiresIn    int    `json:"expires_in"`
	RefreshToken string `json:"refresh_token,omitempty"`
	Scope        string `json:"scope"`
	TokenType    string `json:"token_type"`
	IDToken      string `json:"id_token,omitempty"`
}

// grantedNames is how Google names granted scopes in a redirect and a token response: the email
// scope by its URL.
func grantedNames(scopes []string) []string {
	out := make([]string, len(scopes))
	for i, s := range scopes {
		if s == google.ScopeEmail {
			s = "https://www.googleapis.com/auth/userinfo.email"
		}
		out[i] = s
	}
	return out
}

// idToken is an ID token of account for the client, shaped as Google's (an RS256 JWT). Its
// signature is not a real one: clients that receive it from the token endpoint need not check it
// (OpenID Connect Core 3.1.3.7).
func (f *Fake) idToken(account google.Account, now time.Time) string {
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	return enc(map[string]string{"alg": "RS256", "kid": "googlefake", "typ": "JWT"}) + "." +
		enc(map[string]any{"iss": "https://accounts.google.com", "azp": f.cfg.ClientID, "aud": f.cfg.ClientID,
			"sub": account.ID, "email": account.Email, "email_verified": true, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}) +
		"." + base64.RawURLEncoding.EncodeToString([]byte("googlefake-signature"))
}

type oauthError struct {
	Error       string `json:"error"`
	Description string `json:"error_description,omitempty"`
}

func writeOAuthError(w http.ResponseWriter, code int, errCode, description string) {
	w.Header().Set("Cache-Control", "no-cache, no-store, max-age=0, must-revalidate")
	writeJSON(w, code, oauthError{Error: errCode, Description: description})
}

// token is POST /token: authorization_code and refresh_token grants.
func (f *Fake) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeOAuthError(w, http.StatusBadRequest, "invalid_request", "Could not parse the request body.")
		return
	}
	clientID, secret := r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	if u, p, ok := r.BasicAuth(); ok {
		clientID, secret = u, p
	}
	if clientID != f.cfg.ClientID || subtle.ConstantTimeCompare([]byte(secret), []byte(f.cfg.ClientSecret)) != 1 {
		writeOAuthError(w, http.StatusUnauthorized, "invalid_client", "Unauthorized")
		return
	}
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		f.exchangeCode(w, r.PostForm)
	case "refresh_token":
		f.refreshToken(w, r.PostForm)
	case "":
		writeOAuthError(w, http.StatusBadRequest, "invalid_request", "Required parameter is missing: grant_type")
	default:
		writeOAuthError(w, http.StatusBadRequest, "unsupported_grant_type", "Invalid grant_type: "+r.PostForm.Get("grant_type"))
	}
}

func (f *Fake) exchangeCode(w http.ResponseWriter, form url.Values) {
	code := form.Get("code")
	if code == "" {
		writeOAuthError(w, http.StatusBadRequest, "invalid_request", "Missing required parameter: code")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.codes[code]
	now := f.cfg.Now()
	if !ok || c.used || now.Sub(c.issued) > codeTTL {
		writeOAuthError(w, http.StatusBadRequest, "invalid_grant", "Bad Request")
		return
	}
	if c.redirectURI != "" && form.Get("redirect_uri") != c.redirectURI {
		writeOAuthError(w, http.StatusBadRequest, "redirect_uri_mismatch", "Bad Request")
		return
	}
	if c.challenge != "" {
		verifier := form.Get("code_verifier")
		if verifier == "" {
			writeOAuthError(w, http.StatusBadRequest, "invalid_grant", "Missing code verifier.")
			return
		}
		if pkceChallenge(verifier, c.method) != c.challenge {
			writeOAuthError(w, http.StatusBadRequest, "invalid_grant", "Invalid code verifier.")
			return
		}
	}
	c.used = true
	g := &refreshGrant{scopes: c.scopes}
	resp := f.issueAccess(g, now)
	if slices.Contains(c.scopes, google.ScopeOpenID) {
		resp.IDToken = f.idToken(c.account, now)
	}
	if c.offline {
		g.token = randomToken("1//fake-")
		f.refresh[g.token] = g
		resp.RefreshToken = g.token
	}
	w.Header().Set("Cache-Control", "no-cache, no-store, max-age=0, must-revalidate")
	writeJSON(w, http.StatusOK, resp)
}

func (f *Fake) refreshToken(w http.ResponseWriter, form url.Values) {
	f.mu.Lock()
	defer f.mu.Unlock()
	g, ok := f.refresh[form.Get("refresh_token")]
	if !ok || g.revoked {
		writeOAuthError(w, http.StatusBadRequest, "invalid_grant", "Token has been expired or revoked.")
		return
	}
	w.Header().Set("Cache-Control", "no-cache, no-store, max-age=0, must-revalidate")
	writeJSON(w, http.StatusOK, f.issueAccess(g, f.cfg.Now()))
}

// issueAccess mints an access token of grant g; the caller holds f.mu.
func (f *Fake) issueAccess(g *refreshGrant, now time.Time) tokenResponse {
	tok := randomToken("ya29.fake-")
	f.access[tok] = &accessToken{grant: g, expiry: now.Add(f.cfg.AccessTokenTTL)}
	return tokenResponse{
		AccessToken: tok,
		ExpiresIn:   int(f.cfg.AccessTokenTTL.Seconds()) - 1,
		Scope:       strings.Join(grantedNames(g.scopes), " "),
		TokenType:   "Bearer",
	}
}

func pkceChallenge(verifier, method string) string {
	if method == "plain" {
		return verifier
	}
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// revoke is POST /revoke: the token in the form body or the query.
func (f *Fake) revoke(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	token := r.Form.Get("token")
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failRevoke != 0 {
		status := f.failRevoke
		if status >= 500 {
			writeOAuthError(w, status, "internal_failure", "Backend Error")
		} else {
			writeOAuthError(w, status, "invalid_request", http.StatusText(status))
		}
		return
	}
	if token == "" {
		writeOAuthError(w, http.StatusBadRequest, "invalid_request", "Bad Request")
		return
	}
	g := f.grantOf(token)
	if g == nil || g.revoked {
		writeOAuthError(w, http.StatusBadRequest, "invalid_token", "Token expired or revoked")
		return
	}
	g.revoked = true
	w.WriteHeader(http.StatusOK)
}
