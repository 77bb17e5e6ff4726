package egress_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/revtrack/revtrack/internal/egress"
)

func TestPublic(t *testing.T) {
	refused := []string{"127.0.0.1", "127.8.9.10", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254",
		"100.100.100.200", "0.0.0.0", "::1", "::", "fe80::1", "fd00:ec2::254", "::ffff:127.0.0.1", "::ffff:169.254.169.254",
		"224.0.0.1", "255.255.255.255", "64:ff9b::a9fe:a9fe", "2002:7f00:1::", "198.18.0.1", "192.0.0.170"}
	for _, s := range refused {
		if egress.Public(netip.MustParseAddr(s)) {
			t.Errorf("%s: judged public", s)
		}
	}
	for _, s := range []string{"8.8.8.8", "142.250.0.1", "2606:4700::1111", "23.227.38.65"} {
		if !egress.Public(netip.MustParseAddr(s)) {
			t.Errorf("%s: judged non-public", s)
		}
	}
}

func TestClientRefusesLoopbackUnlessAllowed(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(204)
	}))
	defer srv.Close()

	strict := egress.Policy{}.Client(5*time.Second, nil)
	_, err := strict.Get(srv.URL)
	if !errors.Is(err, egress.ErrForbiddenAddress) {
		t.Fatalf("strict client: err = %v, want ErrForbiddenAddress", err)
	}
	// A name that resolves to loopback is refused the same way: the check runs on the dialled address.
	_, err = strict.Get(strings.Replace(srv.URL, "127.0.0.1", "localhost", 1))
	if !errors.Is(err, egress.ErrForbiddenAddress) {
		t.Fatalf("strict client via name: err = %v, want ErrForbiddenAddress", err)
	}
	if hits.Load() != 0 {
		t.Fatalf("the listener was reached %d times", hits.Load())
	}

	open := egress.Policy{AllowPrivateNetworks: true}.Client(5*time.Second, nil)
	resp, err := open.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 204 || hits.Load() != 1 {
		t.Fatalf("allowed client: status %d, hits %d", resp.StatusCode, hits.Load())
	}
}

func TestClientNeverFollowsRedirects(t *testing.T) {
	var target atomic.Int32
	dst := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { target.Add(1) }))
	defer dst.Close()
	src := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, dst.URL+"/?query=SELECT+1", http.StatusFound)
	}))
	defer src.Close()

	c := egress.Policy{AllowPrivateNetworks: true}.Client(5*time.Second, nil)
	for _, m := range []string{http.MethodGet, http.MethodPost} {
		req, _ := http.NewRequest(m, src.URL, strings.NewReader("{}"))
		_, err := c.Do(req)
		if !errors.Is(err, egress.ErrRedirect) {
			t.Fatalf("%s: err = %v, want ErrRedirect", m, err)
		}
	}
	if target.Load() != 0 {
		t.Fatalf("the redirect target was reached %d times", target.Load())
	}
}

func TestCheckHost(t *testing.T) {
	strict := egress.Policy{}
	for _, h := range []string{"127.0.0.1", "[::1]", "localhost", "api.localhost", "169.254.169.254", "10.0.0.1"} {
		if err := strict.CheckHost(h); !errors.Is(err, egress.ErrForbiddenAddress) {
			t.Errorf("%s: %v", h, err)
		}
	}
	if err := strict.CheckHost("partners.shopify.com"); err != nil {
		t.Error(err)
	}
	if err := (egress.Policy{AllowPrivateNetworks: true}).CheckHost("127.0.0.1"); err != nil {
		t.Error(err)
	}
}
