package uploader_test

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/revtrack/revtrack/uploader"
)

func TestConnectConfigFlagsAndValidation(t *testing.T) {
	c := uploader.DefaultConnectConfig()
	if c.Configured() || c.Validate() != nil || c.APIVersion != "v26" || !c.AccountDiscovery || c.StateTTL != 10*time.Minute {
		t.Fatalf("defaults %+v: %v", c, c.Validate())
	}
	if ep := c.Endpoints(); ep.TokenURL != "https://oauth2.googleapis.com/token" || ep.AdsAPIVersion != "v26" {
		t.Fatalf("real endpoints %+v", ep)
	}
	if got := c.RedirectURL("https://revtrack.example/"); got != "https://revtrack.example/api/admin/ads/oauth/callback" {
		t.Fatalf("default redirect %q", got)
	}

	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	c.RegisterFlags(fs)
	if err := fs.Parse([]string{"--ads-google-base-url=http://127.0.0.1:9/", "--ads-oauth-client-id=id", "--ads-oauth-client-secret=s",
		"--ads-oauth-redirect-url=https://x.example/cb", "--ads-api-version=v27", "--ads-account-discovery=false"}); err != nil {
		t.Fatal(err)
	}
	// A loopback (and plain http) Google address is refused unless the operator allows private
	// networks (the local fake).
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "ads-google-base-url") {
		t.Fatalf("loopback Google address without the egress allowance: %v, want refused", err)
	}
	c.Egress.AllowPrivateNetworks = true
	if !c.Configured() || c.Validate() != nil || c.AccountDiscovery || c.RedirectURL("https://ignored.example") != "https://x.example/cb" {
		t.Fatalf("parsed %+v: %v", c, c.Validate())
	}
	if ep := c.Endpoints(); ep.TokenURL != "http://127.0.0.1:9/token" || ep.AdsURL != "http://127.0.0.1:9" || ep.AdsAPIVersion != "v27" {
		t.Fatalf("fake endpoints %+v", ep)
	}

	for name, edit := range map[string]func(*uploader.ConnectConfig){
		"ads-google-base-url":     func(c *uploader.ConnectConfig) { c.GoogleBaseURL = "ftp://x" },
		"ads-google-base-url ":    func(c *uploader.ConnectConfig) { c.GoogleBaseURL = "https://169.254.169.254" },
		"ads-oauth-redirect-url":  func(c *uploader.ConnectConfig) { c.OAuthRedirectURL = "/callback" },
		"ads-oauth-client-secret": func(c *uploader.ConnectConfig) { c.OAuthClientID, c.OAuthClientSecret = "id", "" },
		"ads-api-version":         func(c *uploader.ConnectConfig) { c.APIVersion = "26" },
		"state TTL":               func(c *uploader.ConnectConfig) { c.StateTTL = time.Second },
	} {
		bad := uploader.DefaultConnectConfig()
		edit(&bad)
		if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), strings.TrimSpace(name)) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
