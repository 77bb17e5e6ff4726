// Package egress builds the HTTP clients that call third-party platforms (the partner API, Google).
// Their addresses come from operator configuration, but an address is only as safe as what it
// resolves to and where a reply redirects: a client built here never follows a redirect and never
// connects to a loopback, private, link-local (cloud metadata included) or otherwise non-public
// address unless the operator allows it (local fakes on 127.0.0.1 need that; `make run` sets it).
// The check runs on the address actually dialled, after DNS, so a name that resolves (or later
// re-resolves) to an internal address is refused as well.
package egress

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"
)

// Policy is the operator's egress setting.
type Policy struct {
	// AllowPrivateNetworks lets clients dial loopback, private and link-local addresses: for local
	// development and tests against fakes only.
	AllowPrivateNetworks bool
}

// RegisterFlags binds the egress flag.
func (p *Policy) RegisterFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&p.AllowPrivateNetworks, "egress-allow-private-networks", p.AllowPrivateNetworks,
		"let the partner API and Google clients connect to loopback, private and link-local addresses (local fakes only; never in production)")
}

// ErrRedirect is returned when a platform answers with a redirect: platform APIs do not redirect
// API calls, so one is a misconfiguration or an attack, never something to follow.
var ErrRedirect = errors.New("the remote answered with a redirect, which is not followed")

// ErrForbiddenAddress is returned when a name resolves to an address the policy refuses.
var ErrForbiddenAddress = errors.New("address not allowed: only public internet addresses may be called")

// Client returns an HTTP client with the policy's dialer, no redirects and the given timeout. wrap,
// when not nil, wraps the guarded transport (metrics, pacing).
func (p Policy) Client(timeout time.Duration, wrap func(http.RoundTripper) http.RoundTripper) *http.Client {
	var rt http.RoundTripper = p.Transport()
	if wrap != nil {
		rt = wrap(rt)
	}
	return &http.Client{
		Timeout:   timeout,
		Transport: rt,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return ErrRedirect
		},
	}
}

// Transport returns a transport whose every connection is checked against the policy. It uses no
// proxy: a proxy would resolve and dial the target itself, past the check.
func (p Policy) Transport() *http.Transport {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	if !p.AllowPrivateNetworks {
		d.Control = control
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	t.DialContext = d.DialContext
	return t
}

// control runs after DNS resolution, just before connect, with the literal address.
func control(network, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("%w (%s)", ErrForbiddenAddress, network)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || !Public(ip) {
		return ErrForbiddenAddress
	}
	return nil
}

// nonPublic are ranges that are not reachable public internet destinations beyond what netip's
// predicates cover: carrier-grade NAT, IETF protocol assignments, documentation, benchmarking,
// 6to4 relay, reserved, NAT64 well-known prefix (could embed any IPv4) and discard.
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("192.88.99.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("100::/64"),
	netip.MustParsePrefix("2001:db8::/32"),
	netip.MustParsePrefix("2002::/16"),
}

// Public reports whether ip is a public unicast address. IPv4-mapped IPv6 addresses are judged as
// the IPv4 address they carry.
func Public(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() || !ip.IsGlobalUnicast() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// CheckHost refuses, without resolving, a host that is a literal non-public address or a
// localhost name, so an obviously wrong configuration fails at start-up rather than at the first
// call; names are checked again, after resolution, on every connection.
func (p Policy) CheckHost(host string) error {
	if p.AllowPrivateNetworks {
		return nil
	}
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		if !Public(ip) {
			return fmt.Errorf("%s: %w", host, ErrForbiddenAddress)
		}
		return nil
	}
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return fmt.Errorf("%s: %w", host, ErrForbiddenAddress)
	}
	return nil
}
