package google

import "strings"

// Scopes the connection needs: Data Manager ingestion and Google Ads discovery. The user may grant
// only one of them (granular consent), so the granted set is always checked (MissingScopes).
const (
	ScopeDataManager = "https://www.googleapis.com/auth/datamanager"
	ScopeAdWords     = "https://www.googleapis.com/auth/adwords"
)

// DefaultAdsAPIVersion is the Google Ads API version used when none is configured.
const DefaultAdsAPIVersion = "v26"

// Endpoints are the base URLs of Google's APIs. DataManagerURL and AdsURL are hosts without a
// version path; the clients append "/v1/…" and "/<AdsAPIVersion>/…".
type Endpoints struct {
	AuthURL        string
	TokenURL       string
	RevokeURL      string
	DataManagerURL string
	AdsURL         string
	AdsAPIVersion  string
}

// DefaultEndpoints are Google's production endpoints.
func DefaultEndpoints() Endpoints {
	return Endpoints{
		AuthURL:        "https://accounts.google.com/o/oauth2/v2/auth",
		TokenURL:       "https://oauth2.googleapis.com/token",
		RevokeURL:      "https://oauth2.googleapis.com/revoke",
		DataManagerURL: "https://datamanager.googleapis.com",
		AdsURL:         "https://googleads.googleapis.com",
		AdsAPIVersion:  DefaultAdsAPIVersion,
	}
}

// EndpointsAt puts every endpoint under one base URL, the layout of the local fake
// (devtools/googlefake): base+"/o/oauth2/v2/auth", base+"/token", base+"/revoke", and base as the
// Data Manager and Google Ads host.
func EndpointsAt(base string) Endpoints {
	base = strings.TrimRight(base, "/")
	return Endpoints{
		AuthURL:        base + "/o/oauth2/v2/auth",
		TokenURL:       base + "/token",
		RevokeURL:      base + "/revoke",
		DataManagerURL: base,
		AdsURL:         base,
		AdsAPIVersion:  DefaultAdsAPIVersion,
	}
}
