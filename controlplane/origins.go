package controlplane

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// NormalizeOrigin checks that s is an exact origin a browser can send in its Origin header and returns
// it in that form: scheme, lower-case host and port only (no path, query, fragment, user or
// wildcard), the default port omitted as browsers do. HTTPS is required; plain HTTP is accepted only
// for loopback (http://localhost:PORT, http://127.0.0.1:PORT) so publishers can develop locally.
func NormalizeOrigin(s string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || u.Host == "" || u.Opaque != "" {
		return "", fmt.Errorf("%w: origin %q: want scheme://host[:port]", ErrInvalid, s)
	}
	if u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || strings.Contains(u.Host, "*") {
		return "", fmt.Errorf("%w: origin %q: only scheme, host and port, no path, query, user or wildcard", ErrInvalid, s)
	}
	host, port := u.Hostname(), u.Port()
	host = strings.ToLower(host)
	switch u.Scheme {
	case "https":
		if port == "443" {
			port = ""
		}
	case "http":
		if host != "localhost" && host != "127.0.0.1" {
			return "", fmt.Errorf("%w: origin %q: HTTPS is required (plain HTTP only for localhost and 127.0.0.1)", ErrInvalid, s)
		}
		if port == "80" {
			port = ""
		}
	default:
		return "", fmt.Errorf("%w: origin %q: scheme must be https", ErrInvalid, s)
	}
	if port != "" {
		return u.Scheme + "://" + net.JoinHostPort(host, port), nil
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]" // IPv6 literal
	}
	return u.Scheme + "://" + host, nil
}

// normalizeOrigins validates a list and removes duplicates, keeping order.
func normalizeOrigins(in []string) ([]string, error) {
	if len(in) == 0 {
		return nil, fmt.Errorf("%w: at least one allowed origin is required", ErrInvalid)
	}
	seen := map[string]bool{}
	out := make([]string, 0, len(in))
	for _, o := range in {
		n, err := NormalizeOrigin(o)
		if err != nil {
			return nil, err
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out, nil
}
