package partnerfake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// ServerConfig configures the fake Partner API.
type ServerConfig struct {
	OrgID string // the {org_id} path segment the token belongs to
	// Tokens are the accepted X-Shopify-Access-Token values (one rate-limit bucket each).
	Tokens []string
	// Versions are the accepted {version} path segments; others answer 404 "Invalid API version".
	Versions []string
	// UnstableVersions get the unstable schema (processingFee, regulatoryOperatingFee).
	UnstableVersions []string
	// MaxPageSize caps first/last (the limit is undocumented; public clients use 50 or 100).
	MaxPageSize int
	// RequestsPerSecond and Burst set the per-token rate limit; RequestsPerSecond 0 disables it.
	RequestsPerSecond float64
	Burst             int
	// RetryAfter, when > 0, adds a Retry-After header (whole seconds) to 429s. The real API's 429
	// headers are undocumented, so the default sends none and clients must back off on their own.
	RetryAfter time.Duration
	// MaxQueryLength rejects longer query documents with the documented 400.
	MaxQueryLength int
	// HistoryFloor hides records created (or events occurring) before it, as if the platform's
	// history were truncated there. Zero: full history. SetHistoryFloor changes it at run time.
	HistoryFloor time.Time
	AmountStyle  AmountStyle
	// Now is the clock for rate limiting; nil means time.Now.
	Now func() time.Time
}

// DefaultServerConfig mirrors the documented behaviour: 4 requests/s per client, pages of up to 100.
func DefaultServerConfig() ServerConfig {
	return ServerConfig{
		OrgID:  "1234567",
		Tokens: []string{"prtapi_fake_partner_token"},
		Versions: []string{"2024-10", "2025-01", "2025-04", "2025-07", "2025-10", "2026-01", "2026-04",
			"2026-07", "2026-10", "unstable"},
		UnstableVersions:  []string{"unstable"},
		MaxPageSize:       100,
		RequestsPerSecond: 4,
		Burst:             4,
		MaxQueryLength:    50000,
	}
}

// Server is an http.Handler serving a Dataset as the Partner API at
// POST /{org_id}/api/{version}/graphql.json. It is safe for concurrent use.
type Server struct {
	ds       *Dataset
	cfg      ServerConfig
	versions map[string]bool
	unstable map[string]bool
	tokens   map[string]bool
	domains  map[string]int
	limiter  *limiter
	faults   faultQueue
	floor    atomic.Int64 // seconds since the dataset base
	reqID    atomic.Uint64
	stats    struct {
		requests, served, throttled, faulted, unauthorized, badRequests atomic.Int64
	}
}

// Stats counts what the server answered.
type Stats struct {
	Requests     int64 // every request
	Served       int64 // executed GraphQL (HTTP 200), including GraphQL-level errors
	Throttled    int64 // 429 from the rate limit (scripted 429s count as Faulted)
	Faulted      int64 // scripted faults
	Unauthorized int64
	BadRequests  int64 // 400, 404, 405
}

// NewServer serves d with cfg. Empty OrgID, Tokens, Versions, UnstableVersions (nil),
// MaxPageSize and MaxQueryLength take DefaultServerConfig's values; RequestsPerSecond 0 disables
// rate limiting, so start from DefaultServerConfig() for the documented limit.
func NewServer(d *Dataset, cfg ServerConfig) *Server {
	def := DefaultServerConfig()
	if cfg.OrgID == "" {
		cfg.OrgID = def.OrgID
	}
	if len(cfg.Tokens) == 0 {
		cfg.Tokens = def.Tokens
	}
	if len(cfg.Versions) == 0 {
		cfg.Versions = def.Versions
	}
	if cfg.UnstableVersions == nil {
		cfg.UnstableVersions = def.UnstableVersions
	}
	if cfg.MaxPageSize <= 0 {
		cfg.MaxPageSize = def.MaxPageSize
	}
	if cfg.MaxQueryLength <= 0 {
		cfg.MaxQueryLength = def.MaxQueryLength
	}
	if cfg.Burst <= 0 {
		cfg.Burst = max(1, int(cfg.RequestsPerSecond))
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Server{ds: d, cfg: cfg, versions: set(cfg.Versions), unstable: set(cfg.UnstableVersions),
		tokens: set(cfg.Tokens), domains: make(map[string]int, len(d.Shops)),
		limiter: &limiter{rate: cfg.RequestsPerSecond, burst: float64(cfg.Burst), buckets: map[string]*bucket{}}}
	for i := range d.Shops {
		s.domains[d.Shops[i].Domain] = i
	}
	s.SetHistoryFloor(cfg.HistoryFloor)
	return s
}

func set(xs []string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// Script queues faults (see Fault).
func (s *Server) Script(faults ...Fault) { s.faults.push(faults...) }

// ClearFaults drops queued faults.
func (s *Server) ClearFaults() { s.faults.clear() }

// SetHistoryFloor hides records before t (zero: none), as if the platform had truncated history.
func (s *Server) SetHistoryFloor(t time.Time) {
	if t.IsZero() {
		s.floor.Store(0)
		return
	}
	s.floor.Store(max(0, t.Unix()-s.ds.base+boolInt(t.Nanosecond() > 0)))
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// Stats returns the counters so far.
func (s *Server) Stats() Stats {
	return Stats{s.stats.requests.Load(), s.stats.served.Load(), s.stats.throttled.Load(), s.stats.faulted.Load(),
		s.stats.unauthorized.Load(), s.stats.badRequests.Load()}
}

// Dataset returns the data the server serves.
func (s *Server) Dataset() *Dataset { return s.ds }

// Path returns the request path for a version: /{org_id}/api/{version}/graphql.json.
func (s *Server) Path(version string) string {
	return "/" + s.cfg.OrgID + "/api/" + version + "/graphql.json"
}

// errorBody is the documented non-200 shape: {"errors":[{"message":…,"extensions":{"code":"<status>"}}]}.
func errorBody(status int, msg string) []byte {
	return append(appendErrors([]byte(`{"errors":`), []*gqlError{{Message: msg, Extensions: []kv{{"code", strconv.Itoa(status)}}}}), '}')
}

const maxBodyBytes = 1 << 20

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.stats.requests.Add(1)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Request-Id", fmt.Sprintf("fake-%08d", s.reqID.Add(1)))
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(parts) != 4 || parts[1] != "api" || parts[3] != "graphql.json" {
		s.stats.badRequests.Add(1)
		s.write(w, http.StatusNotFound, errorBody(404, "Not Found"))
		return
	}
	org, version := parts[0], parts[2]
	if r.Method != http.MethodPost {
		s.stats.badRequests.Add(1)
		w.Header().Set("Allow", http.MethodPost)
		s.write(w, http.StatusMethodNotAllowed, errorBody(405, "Method Not Allowed"))
		return
	}
	token := r.Header.Get("X-Shopify-Access-Token")
	if !s.tokens[token] || org != s.cfg.OrgID {
		s.stats.unauthorized.Add(1)
		s.write(w, http.StatusUnauthorized, errorBody(401, "Invalid access token"))
		return
	}
	if !s.versions[version] {
		s.stats.badRequests.Add(1)
		s.write(w, http.StatusNotFound, errorBody(404, "Invalid API version"))
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil || len(body) > maxBodyBytes {
		s.stats.badRequests.Add(1)
		s.write(w, http.StatusBadRequest, errorBody(400, "Request body too large or unreadable"))
		return
	}
	if f, ok := s.faults.take(string(body)); ok {
		if f.Delay > 0 {
			select {
			case <-time.After(f.Delay):
			case <-r.Context().Done():
				return
			}
		}
		if f.Status != 0 {
			s.stats.faulted.Add(1)
			b := []byte(f.Body)
			if f.Body == "" {
				b = defaultFaultBody(f.Status)
			}
			if !bytes.HasPrefix(b, []byte("{")) {
				w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			}
			s.write(w, f.Status, b)
			return
		}
	}
	if !s.limiter.allow(token, s.cfg.Now()) {
		s.stats.throttled.Add(1)
		if s.cfg.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int((s.cfg.RetryAfter+time.Second-1)/time.Second)))
		}
		s.write(w, http.StatusTooManyRequests, errorBody(429, "Too many requests"))
		return
	}
	var req gqlRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&req); err != nil || req.Query == "" {
		s.stats.badRequests.Add(1)
		msg := "No query string was present"
		if err != nil {
			msg = "Invalid JSON body: " + err.Error()
		}
		s.write(w, http.StatusBadRequest, errorBody(400, msg))
		return
	}
	if len(req.Query) > s.cfg.MaxQueryLength {
		s.stats.badRequests.Add(1)
		s.write(w, http.StatusBadRequest, errorBody(400, fmt.Sprintf("Maximum query length is %d characters", s.cfg.MaxQueryLength)))
		return
	}
	s.stats.served.Add(1)
	s.write(w, http.StatusOK, s.executeRequest(&req, version, s.floor.Load()))
}

func defaultFaultBody(status int) []byte {
	switch status {
	case http.StatusTooManyRequests:
		return errorBody(429, "Too many requests")
	case http.StatusUnauthorized:
		return errorBody(401, "Invalid access token")
	case http.StatusBadRequest, http.StatusNotFound, http.StatusInternalServerError:
		return errorBody(status, http.StatusText(status))
	}
	return []byte(http.StatusText(status))
}

func (s *Server) write(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
