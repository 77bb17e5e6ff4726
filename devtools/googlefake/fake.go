package googlefake

import (
	"bytes"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/revtrack/revtrack/uploader/google"
)

// Config describes the fake's world: one OAuth client, one Google user with the scopes they grant
// and the Google Ads accounts they can reach.
type Config struct {
	// ClientID and ClientSecret of the OAuth client; defaults "revtrack-local",
	// "revtrack-local-secret".
	ClientID, ClientSecret string
	// GrantedScopes are the scopes the user grants when asked (granular consent grants only the
	// requested ones among these); default both scopes. The sign-in scopes (openid, email) are
	// always granted when asked, as Google does.
	GrantedScopes []string
	// Account is the Google user signed in to the fake's consent page (SignIn changes it); default
	// DefaultAccount.
	Account google.Account
	// ProcessingDelay is how long an accepted request stays PROCESSING; 0 means terminal at once.
	ProcessingDelay time.Duration
	// Customers are the Google Ads accounts the user can reach. A customer listed as a Client of a
	// manager in this list is reached only through that manager (login-customer-id); every other
	// customer is directly accessible.
	Customers []Customer
	// CheckDestinations makes events:ingest check each destination against Customers (account
	// reachable, login account its manager, conversion action of UPLOAD_CLICKS type), as Google
	// does; off by default so tests may use arbitrary well-formed IDs.
	CheckDestinations bool
	// SearchPageSize is the number of GAQL rows per page; default 10000 (Google's page size).
	SearchPageSize int
	// QuotaRetryDelay is the RetryInfo.retryDelay of a scripted 429; default 30s.
	QuotaRetryDelay time.Duration
	// AccessTokenTTL is the lifetime of issued access tokens; default 1h (expires_in 3599).
	AccessTokenTTL time.Duration
	// Now is the fake's clock; default time.Now.
	Now func() time.Time
}

// Customer is a Google Ads account. Manager accounts list their direct Clients by ID.
type Customer struct {
	ID, Name string
	Manager  bool
	Clients  []string
	Actions  []google.ConversionAction
}

// DefaultAccount is the Google user of DefaultConfig.
var DefaultAccount = google.Account{ID: "104592000000000000001", Email: "ads-owner@example.com"}

// IDs of DefaultConfig.
const (
	DefaultManagerID  = "9876543210"
	DefaultCustomerID = "1234567890"
	DefaultActionID   = "7723667020"
	DefaultActionID2  = "7723667021"
)

// DefaultConfig: one manager 9876543210 whose client 1234567890 owns two ENABLED UPLOAD_CLICKS
// conversion actions (7723667020, 7723667021) plus one WEBPAGE action the discovery query filters
// out. The client is reached only through the manager.
func DefaultConfig() Config {
	return Config{
		ClientID:      "revtrack-local",
		ClientSecret:  "revtrack-local-secret",
		GrantedScopes: []string{google.ScopeDataManager, google.ScopeAdWords},
		Customers: []Customer{
			{ID: DefaultManagerID, Name: "Local manager", Manager: true, Clients: []string{DefaultCustomerID}},
			{ID: DefaultCustomerID, Name: "Local advertiser", Actions: []google.ConversionAction{
				{ID: DefaultActionID, Name: "Qualified lead (offline)", Status: "ENABLED", Type: "UPLOAD_CLICKS", Category: "QUALIFIED_LEAD"},
				{ID: DefaultActionID2, Name: "Purchase (offline)", Status: "ENABLED", Type: "UPLOAD_CLICKS", Category: "PURCHASE"},
				{ID: "7723667099", Name: "Website purchase", Status: "ENABLED", Type: "WEBPAGE", Category: "PURCHASE"},
			}},
		},
	}
}

func (c Config) withDefaults() Config {
	if c.ClientID == "" {
		c.ClientID = "revtrack-local"
	}
	if c.ClientSecret == "" {
		c.ClientSecret = "revtrack-local-secret"
	}
	if c.GrantedScopes == nil {
		c.GrantedScopes = []string{google.ScopeDataManager, google.ScopeAdWords}
	}
	if !c.Account.Known() {
		c.Account = DefaultAccount
	}
	if c.SearchPageSize <= 0 {
		c.SearchPageSize = 10000
	}
	if c.QuotaRetryDelay <= 0 {
		c.QuotaRetryDelay = 30 * time.Second
	}
	if c.AccessTokenTTL <= 0 {
		c.AccessTokenTTL = time.Hour
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	// The fake keeps its own copy so a caller changing its slices later cannot race with it.
	c.GrantedScopes = slices.Clone(c.GrantedScopes)
	customers := make([]Customer, len(c.Customers))
	for i, cu := range c.Customers {
		cu.Clients = slices.Clone(cu.Clients)
		cu.Actions = slices.Clone(cu.Actions)
		customers[i] = cu
	}
	c.Customers = customers
	return c
}

// RecordedRequest is one request the fake received, with its body as sent.
type RecordedRequest struct {
	Method, Path, RawQuery string
	Header                 http.Header
	Body                   []byte
	At                     time.Time
}

// Fake is the fake Google. Create it with New; it is an http.Handler.
type Fake struct {
	cfg Config
	mux *http.ServeMux

	mu       sync.Mutex
	requests []RecordedRequest
	codes    map[string]*authCode
	refresh  map[string]*refreshGrant
	access   map[string]*accessToken
	ingests  map[string]*ingestRecord
	// accepted transaction IDs per product destination, for DUPLICATE_TRANSACTION_ID.
	transactions map[string]bool
	failRevoke   int
	failIngest   scriptedFailure
	failRetrieve scriptedFailure
	seq          int
}

type scriptedFailure struct{ status, times int }

// New builds a fake from cfg, filling unset fields with defaults.
func New(cfg Config) *Fake {
	f := &Fake{
		cfg:          cfg.withDefaults(),
		codes:        map[string]*authCode{},
		refresh:      map[string]*refreshGrant{},
		access:       map[string]*accessToken{},
		ingests:      map[string]*ingestRecord{},
		transactions: map[string]bool{},
	}
	f.mux = http.NewServeMux()
	f.routes()
	return f
}

// ServeHTTP records the request, then answers it.
func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	_ = r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(body))
	f.mu.Lock()
	f.requests = append(f.requests, RecordedRequest{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Header: r.Header.Clone(), Body: body, At: f.cfg.Now()})
	f.mu.Unlock()
	f.mux.ServeHTTP(w, r)
}

// Requests returns every request received so far, oldest first.
func (f *Fake) Requests() []RecordedRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests)
}

// SignIn makes account the Google user of the following consents (another person at the browser).
func (f *Fake) SignIn(account google.Account) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cfg.Account = account
}

// FailRevocation makes the following revocations answer status (0 restores normal behaviour).
func (f *Fake) FailRevocation(status int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failRevoke = status
}

// FailIngest makes the next `times` authenticated ingests answer a canned error of status: 429
// RESOURCE_EXHAUSTED with RetryInfo, 500 INTERNAL, 503 UNAVAILABLE, 504 DEADLINE_EXCEEDED, 409
// ABORTED, or the canonical status of any other code.
func (f *Fake) FailIngest(status int, times int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failIngest = scriptedFailure{status, times}
}

// FailRetrieve is FailIngest for requestStatus:retrieve.
func (f *Fake) FailRetrieve(status int, times int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failRetrieve = scriptedFailure{status, times}
}

// take consumes one scripted failure; it reports the status to answer, 0 for none.
func (s *scriptedFailure) take() int {
	if s.times <= 0 || s.status == 0 {
		return 0
	}
	s.times--
	return s.status
}
