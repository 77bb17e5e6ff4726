package ingest

import (
	"net/url"
	"regexp"
	"strings"
)

// SecretParamPattern matches the lower-cased name of a query parameter that may carry a credential
// or a merchant identity without proof. tracker.js uses the same expression (its STRIP constant,
// kept equal by a test) to strip them before sending; the edge strips them again so that an
// outdated or hand-written client cannot store them. docs/TRACKING.md explains each one.
//
//   - Exact names: the platform's signed-request and embedded-app parameters (hmac, timestamp,
//     session, host, shop), OAuth, OpenID and SAML callbacks (code, state, nonce, session_state,
//     oauth_verifier, code_verifier, samlrequest, samlresponse), generic credentials (key, auth,
//     authorization, pass, pwd, otp, jwt, sig, ticket) and session IDs (sid, sessionid, session_id,
//     phpsessid, jsessionid).
//   - Any name containing token, secret, password, passwd, signature, credential or api key
//     (apikey, api_key, api-key): id_token, access_token, refresh_token, client_secret,
//     csrf_token, X-Amz-Signature, X-Goog-Credential….
//
// None matches the attribution parameters (tracker_ref, utm_*, gclid, gbraid, wbraid), which a test
// asserts. Privacy wins over completeness: an app that uses "code" or "key" for something harmless
// loses it from the stored URL.
const SecretParamPattern = `^(hmac|sig|timestamp|session|session_?id|session_state|host|shop|code|state|nonce|` +
	`(oauth|code)_verifier|saml(request|response)|key|auth|authorization|pass|pwd|otp|jwt|ticket|sid|phpsessid|jsessionid)$|` +
	`token|secret|passw(or)?d|signature|credential|api[-_]?key`

// secretParam is SecretParamPattern compiled: the reference isSecretParam is tested against.
var secretParam = regexp.MustCompile(SecretParamPattern)

// isSecretParam reports whether a lower-cased parameter name matches SecretParamPattern, by a set
// lookup and substring searches instead of the regular expression (a browser event checks every
// parameter of up to four URLs; TestSecretParamMatcherIsThePattern keeps the two equal).
func isSecretParam(lower string) bool {
	if secretExactNames[lower] {
		return true
	}
	for _, part := range secretNameParts {
		if strings.Contains(lower, part) {
			return true
		}
	}
	return false
}

// The alternatives of SecretParamPattern: its anchored names, and the words found anywhere.
var (
	secretExactNames = map[string]bool{"hmac": true, "sig": true, "timestamp": true, "session": true, "sessionid": true,
		"session_id": true, "session_state": true, "host": true, "shop": true, "code": true, "state": true, "nonce": true,
		"oauth_verifier": true, "code_verifier": true, "samlrequest": true, "samlresponse": true, "key": true, "auth": true,
		"authorization": true, "pass": true, "pwd": true, "otp": true, "jwt": true, "ticket": true, "sid": true,
		"phpsessid": true, "jsessionid": true}
	secretNameParts = []string{"token", "secret", "passwd", "password", "signature", "credential", "apikey", "api_key", "api-key"}
)

// urlCache strips each distinct URL of a batch once: a session's events repeat their first touch's
// landing page and referrer, and often their page and referrer too. A nil cache strips every time.
type urlCache map[string]string

func (m urlCache) strip(raw string) string {
	if raw == "" {
		return ""
	}
	if m == nil {
		return StripAuthParams(raw)
	}
	if v, ok := m[raw]; ok {
		return v
	}
	v := StripAuthParams(raw)
	m[raw] = v
	return v
}

// StripAuthParams removes user name and password and the SecretParamPattern parameters from a URL's
// query and fragment; other parameters keep their exact encoding. Anything that does not parse as a
// URL is returned empty rather than stored as is.
func StripAuthParams(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	u.User = nil
	u.RawQuery = stripQuery(u.RawQuery)
	if u.Fragment != "" && strings.Contains(u.Fragment, "=") {
		frag := u.Fragment
		prefix := ""
		if i := strings.IndexByte(frag, '?'); i >= 0 {
			prefix, frag = frag[:i+1], frag[i+1:]
		}
		rest := stripQuery(frag)
		if rest == "" && frag != "" {
			// Everything after the '?' was authentication: drop the separator too.
			prefix = strings.TrimSuffix(prefix, "?")
		}
		u.Fragment = prefix + rest
		u.RawFragment = ""
	}
	return u.String()
}

func stripQuery(q string) string {
	if q == "" {
		return ""
	}
	parts := strings.Split(q, "&")
	kept := parts[:0]
	for _, p := range parts {
		k := p
		if i := strings.IndexByte(p, '='); i >= 0 {
			k = p[:i]
		}
		// A name that does not decode is matched as written (tracker.js does the same).
		if name, err := url.QueryUnescape(k); err == nil {
			k = name
		}
		if isSecretParam(strings.ToLower(k)) {
			continue
		}
		kept = append(kept, p)
	}
	return strings.Join(kept, "&")
}
