package googlefake

import (
	"net/http"
	"slices"
	"strings"
)

// The API services the fake serves, as Google names them in error metadata.
const (
	serviceDataManager = "datamanager.googleapis.com"
	serviceAds         = "googleads.googleapis.com"
)

type authFailure int

const (
	authOK authFailure = iota
	authMissing
	authUnknown
	authExpired
	authRevoked
	authScope
)

// checkBearer resolves the request's access token and checks it holds scope.
func (f *Fake) checkBearer(r *http.Request, scope string) authFailure {
	h := r.Header.Get("Authorization")
	tok, ok := strings.CutPrefix(h, "Bearer ")
	if !ok || strings.TrimSpace(tok) == "" {
		return authMissing
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	at, ok := f.access[strings.TrimSpace(tok)]
	switch {
	case !ok:
		return authUnknown
	case at.grant.revoked:
		return authRevoked
	case !f.cfg.Now().Before(at.expiry):
		return authExpired
	case !slices.Contains(at.grant.scopes, scope):
		return authScope
	}
	return authOK
}

// authenticate answers the auth error of a Data Manager route and reports whether to go on.
func (f *Fake) authenticate(w http.ResponseWriter, r *http.Request, scope, method string) bool {
	fail := f.checkBearer(r, scope)
	if fail == authOK {
		return true
	}
	meta := map[string]string{"method": method, "service": serviceDataManager}
	switch fail {
	case authMissing:
		w.Header().Set("WWW-Authenticate", `Bearer realm="https://accounts.google.com/"`)
		writeEnvelope(w, http.StatusUnauthorized, msgCredentialsMissing, newErrorInfo("CREDENTIALS_MISSING", "googleapis.com", meta))
	case authScope:
		w.Header().Set("WWW-Authenticate", `Bearer realm="https://accounts.google.com/", error="insufficient_scope", scope="`+scope+`"`)
		writeEnvelope(w, http.StatusForbidden, msgScopeInsufficient, newErrorInfo("ACCESS_TOKEN_SCOPE_INSUFFICIENT", "googleapis.com", meta))
	default:
		w.Header().Set("WWW-Authenticate", `Bearer realm="https://accounts.google.com/", error="invalid_token"`)
		writeEnvelope(w, http.StatusUnauthorized, msgInvalidCredentials, newErrorInfo("ACCESS_TOKEN_EXPIRED", "googleapis.com", meta))
	}
	return false
}

// authenticateAds is authenticate for Google Ads routes, whose 401s carry a GoogleAdsFailure.
func (f *Fake) authenticateAds(w http.ResponseWriter, r *http.Request, version, method string) bool {
	fail := f.checkBearer(r, scopeAdWords)
	if fail == authOK {
		return true
	}
	reqID := newAdsRequestID()
	switch fail {
	case authScope:
		w.Header().Set("WWW-Authenticate", `Bearer realm="https://accounts.google.com/", error="insufficient_scope", scope="`+scopeAdWords+`"`)
		writeEnvelope(w, http.StatusForbidden, msgScopeInsufficient,
			newErrorInfo("ACCESS_TOKEN_SCOPE_INSUFFICIENT", "googleapis.com", map[string]string{"method": method, "service": serviceAds}))
	case authMissing:
		writeEnvelope(w, http.StatusUnauthorized, msgCredentialsMissing,
			newAdsFailure(version, "authenticationError", "OAUTH_TOKEN_HEADER_INVALID", "Oauth token HTTP header is malformed.", reqID))
	case authRevoked:
		writeEnvelope(w, http.StatusUnauthorized, msgInvalidCredentials,
			newAdsFailure(version, "authenticationError", "OAUTH_TOKEN_REVOKED", "Oauth token is revoked.", reqID))
	case authExpired:
		writeEnvelope(w, http.StatusUnauthorized, msgInvalidCredentials,
			newAdsFailure(version, "authenticationError", "OAUTH_TOKEN_EXPIRED", "Oauth token is expired.", reqID))
	default:
		writeEnvelope(w, http.StatusUnauthorized, msgInvalidCredentials,
			newAdsFailure(version, "authenticationError", "OAUTH_TOKEN_INVALID", "Oauth token is invalid.", reqID))
	}
	return false
}
