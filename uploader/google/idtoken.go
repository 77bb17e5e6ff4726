package google

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Sign-in scopes, requested with the API scopes so that the token response names the Google account
// that consented (its ID token). Google does not let a user untick them, and they grant no API.
const (
	ScopeOpenID = "openid"
	ScopeEmail  = "email"
	// scopeEmailGranted is how Google names the email scope in a token response.
	scopeEmailGranted = "https://www.googleapis.com/auth/userinfo.email"
)

// identityScope reports whether a granted scope is a sign-in scope rather than an API scope.
func identityScope(s string) bool {
	return s == ScopeOpenID || s == ScopeEmail || s == scopeEmailGranted
}

// Account is the Google account that granted access: the ID token's subject (stable, never
// reassigned) and its e-mail address (for people to recognise; it can change).
type Account struct {
	ID    string `json:"id"`
	Email string `json:"email"`
}

// Known reports whether the account was identified.
func (a Account) Known() bool { return a.ID != "" }

// ErrBadIDToken: the token response's ID token is malformed or not issued for this client.
var ErrBadIDToken = errors.New("google oauth: the ID token of the token response is not valid for this client")

// googleIssuers are the issuers Google's ID tokens carry.
var googleIssuers = []string{"https://accounts.google.com", "accounts.google.com"}

// accountFromIDToken reads the account from an ID token received from the token endpoint. The
// signature is not checked: the token came straight from Google's token endpoint over TLS in
// exchange for our client secret and code, which OpenID Connect Core 3.1.3.7 (6) accepts in place
// of the signature. The audience and issuer are still checked, so a token minted for another
// client is refused.
func accountFromIDToken(raw, clientID string) (Account, error) {
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return Account{}, fmt.Errorf("%w: not a JWT", ErrBadIDToken)
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return Account{}, fmt.Errorf("%w: payload is not base64url", ErrBadIDToken)
	}
	var c struct {
		Iss   string          `json:"iss"`
		Aud   json.RawMessage `json:"aud"`
		Sub   string          `json:"sub"`
		Email string          `json:"email"`
	}
	if err := json.Unmarshal(payload, &c); err != nil {
		return Account{}, fmt.Errorf("%w: payload is not JSON", ErrBadIDToken)
	}
	var auds []string
	var one string
	if json.Unmarshal(c.Aud, &one) == nil {
		auds = []string{one}
	} else {
		_ = json.Unmarshal(c.Aud, &auds)
	}
	switch {
	case !slices.Contains(auds, clientID):
		return Account{}, fmt.Errorf("%w: audience is not this OAuth client", ErrBadIDToken)
	case !slices.Contains(googleIssuers, c.Iss):
		return Account{}, fmt.Errorf("%w: issuer %q is not Google", ErrBadIDToken, c.Iss)
	case c.Sub == "":
		return Account{}, fmt.Errorf("%w: no subject", ErrBadIDToken)
	}
	return Account{ID: c.Sub, Email: c.Email}, nil
}
