package config

import (
	"os"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestREADMEConfigTableIsCurrent(t *testing.T) {
	fs := pflag.NewFlagSet("revtrack", pflag.ContinueOnError)
	c := Default()
	c.RegisterFlags(fs)
	readme, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), Markdown(fs)) {
		t.Fatal("README.md's configuration table is out of date: replace it with the output of `revtrack config-docs`")
	}
}

func TestDefaultsValidate(t *testing.T) {
	c := Default()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.HTTP.BaseURL != "http://127.0.0.1:8080" {
		t.Fatalf("derived base URL %q", c.HTTP.BaseURL)
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	c := Default()
	c.HTTP.Addr = "nonsense"
	c.HTTP.BaseURL = "ftp://x"
	c.Redis.Addr = "nope"
	c.Process.MaxPoll = 0
	err := c.Validate()
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{"http-addr", "base-url", "redis-addr", "process-max-poll"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %s: %v", want, err)
		}
	}
}

func TestAdsRedirectURLDefaultsToTheBaseURL(t *testing.T) {
	c := Default()
	c.HTTP.BaseURL = "https://revtrack.example/"
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := c.Uploader.OAuthRedirectURL; got != "https://revtrack.example/api/admin/ads/oauth/callback" {
		t.Fatalf("redirect URL %q", got)
	}
	c = Default()
	c.Uploader.OAuthRedirectURL = "https://login.example/cb"
	if err := c.Validate(); err != nil || c.Uploader.OAuthRedirectURL != "https://login.example/cb" {
		t.Fatalf("configured redirect URL: %q %v", c.Uploader.OAuthRedirectURL, err)
	}
}

func TestAdsSettingsValidated(t *testing.T) {
	c := Default()
	c.Uploader.OAuthClientID = "client"
	c.Uploader.DiagnosticsDelay = 0
	c.Uploader.EventSource = "STORE"
	err := c.Validate()
	for _, want := range []string{"ads-oauth-client-secret", "ads-diagnostics-delay", "ads-event-source"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %s: %v", want, err)
		}
	}
}
