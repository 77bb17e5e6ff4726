package uploader

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/revtrack/revtrack/internal/egress"
	"github.com/revtrack/revtrack/uploader/google"
)

// OAuthCallbackPath is where Google sends the user back after consent, under the public base URL
// (the admin HTTP API serves it).
const OAuthCallbackPath = "/api/admin/ads/oauth/callback"

// ConnectConfig configures the advertising connection: the OAuth client and where Google's APIs
// are. The connection is available only when an OAuth client is configured (docs/ADS_UPLOAD.md,
// "Surfaces": 409 not_configured without one).
type ConnectConfig struct {
	// GoogleBaseURL is empty for Google's real endpoints; a URL puts every Google endpoint under
	// it (the local fake, devtools/googlefake).
	GoogleBaseURL string
	// OAuthClientID and OAuthClientSecret are the web OAuth client; an empty client ID turns the
	// advertising connection off.
	OAuthClientID     string
	OAuthClientSecret string
	// OAuthRedirectURL is the registered redirect URI; empty means <base-url>/api/admin/ads/oauth/callback.
	OAuthRedirectURL string
	// APIVersion is the Google Ads API version of account discovery (vNN).
	APIVersion string
	// AccountDiscovery lists the conversion account's actions through the Google Ads API after an
	// account is selected and on demand. Off for an OAuth client whose Cloud project is not
	// approved for the Google Ads API; conversion actions are then typed in by ID and name.
	AccountDiscovery bool
	// StateTTL is how long a started connection waits for Google's callback. Not a flag.
	StateTTL time.Duration
	// Egress is the operator's policy for outbound connections (set from the process-wide flag).
	Egress egress.Policy
}

// DefaultConnectConfig: no OAuth client (connection off), Google's endpoints, Ads API v26,
// discovery on, ten minutes to finish consent.
func DefaultConnectConfig() ConnectConfig {
	return ConnectConfig{APIVersion: google.DefaultAdsAPIVersion, AccountDiscovery: true, StateTTL: 10 * time.Minute}
}

// RegisterFlags binds the connection flags.
func (c *ConnectConfig) RegisterFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.GoogleBaseURL, "ads-google-base-url", c.GoogleBaseURL, "base URL under which every Google endpoint (OAuth, Data Manager, Google Ads) is reached; empty for Google's real endpoints, a URL for the local fake")
	fs.StringVar(&c.OAuthClientID, "ads-oauth-client-id", c.OAuthClientID, "Google OAuth web client ID of the advertising connection; empty turns the connection off")
	fs.StringVar(&c.OAuthClientSecret, "ads-oauth-client-secret", c.OAuthClientSecret, "Google OAuth web client secret (keep it in the environment or a secret store)")
	fs.StringVar(&c.OAuthRedirectURL, "ads-oauth-redirect-url", c.OAuthRedirectURL, "redirect URI registered for the OAuth client (default <base-url>"+OAuthCallbackPath+")")
	fs.StringVar(&c.APIVersion, "ads-api-version", c.APIVersion, "Google Ads API version used for account and conversion-action discovery (vNN)")
	fs.BoolVar(&c.AccountDiscovery, "ads-account-discovery", c.AccountDiscovery, "list the conversion account's actions through the Google Ads API (off: actions are entered by ID and name)")
}

var adsAPIVersionRe = regexp.MustCompile(`^v[0-9]{1,3}$`)

// Validate checks the connection settings.
func (c ConnectConfig) Validate() error {
	var errs []error
	if c.GoogleBaseURL != "" {
		if u, err := url.Parse(c.GoogleBaseURL); !connectURLValid(c.GoogleBaseURL) || err != nil {
			errs = append(errs, fmt.Errorf("ads-google-base-url: %q is not an http(s) URL", c.GoogleBaseURL))
		} else if u.Scheme != "https" && !c.Egress.AllowPrivateNetworks {
			errs = append(errs, fmt.Errorf("ads-google-base-url: %q must be https (http only with --egress-allow-private-networks)", c.GoogleBaseURL))
		} else if err := c.Egress.CheckHost(u.Hostname()); err != nil {
			errs = append(errs, fmt.Errorf("ads-google-base-url: %w", err))
		}
	}
	if c.OAuthRedirectURL != "" && !connectURLValid(c.OAuthRedirectURL) {
		errs = append(errs, fmt.Errorf("ads-oauth-redirect-url: %q is not an http(s) URL", c.OAuthRedirectURL))
	}
	if c.OAuthClientID != "" && c.OAuthClientSecret == "" {
		errs = append(errs, errors.New("ads-oauth-client-secret: required with ads-oauth-client-id"))
	}
	if !adsAPIVersionRe.MatchString(c.APIVersion) {
		errs = append(errs, fmt.Errorf("ads-api-version: %q is not vNN", c.APIVersion))
	}
	if c.StateTTL < time.Minute {
		errs = append(errs, errors.New("ads OAuth state TTL must be at least 1m"))
	}
	return errors.Join(errs...)
}

func connectURLValid(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.User == nil
}

// HTTPClient is the client of every Google call: the egress policy's (no redirects, no internal
// addresses), with the Google clients' 30 s timeout.
func (c ConnectConfig) HTTPClient() *http.Client {
	return c.Egress.Client(30*time.Second, nil)
}

// Configured reports whether an OAuth client is configured, that is whether workspaces may connect.
func (c ConnectConfig) Configured() bool { return c.OAuthClientID != "" }

// Endpoints are the Google endpoints the clients use.
func (c ConnectConfig) Endpoints() google.Endpoints {
	ep := google.DefaultEndpoints()
	if c.GoogleBaseURL != "" {
		ep = google.EndpointsAt(c.GoogleBaseURL)
	}
	if c.APIVersion != "" {
		ep.AdsAPIVersion = c.APIVersion
	}
	return ep
}

// RedirectURL is the configured redirect URI, or the callback path under the public base URL.
func (c ConnectConfig) RedirectURL(baseURL string) string {
	if c.OAuthRedirectURL != "" {
		return c.OAuthRedirectURL
	}
	return strings.TrimRight(baseURL, "/") + OAuthCallbackPath
}
