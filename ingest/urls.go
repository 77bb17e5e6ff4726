package ingest

import (
	"net/url"
	"strings"
)

// authParams are query parameters that carry platform authentication or merchant identity without
// proof (install and OAuth callbacks, embedded-app launches). tracker.js strips them before sending;
// the edge strips them again so an outdated or hand-written client cannot store them. The same list
// is documented in docs/TRACKING.md and ingest/tracker/tracker.js.
var authParams = map[string]bool{
	"hmac": true, "signature": true, "id_token": true, "access_token": true, "session": true,
	"code": true, "state": true, "timestamp": true, "host": true, "shop": true,
}

// StripAuthParams removes authParams from a URL's query and fragment. Anything that does not parse as
// a URL is returned empty rather than stored as is.
func StripAuthParams(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
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
		if name, err := url.QueryUnescape(k); err == nil && authParams[strings.ToLower(name)] {
			continue
		}
		kept = append(kept, p)
	}
	return strings.Join(kept, "&")
}
