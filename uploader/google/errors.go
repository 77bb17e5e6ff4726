package google

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

// Violation is one BadRequest.fieldViolations entry (or one Google Ads error). Reason is the
// specific ErrorReason (INVALID_FORMAT, NO_IDENTIFIERS_PROVIDED, …) exactly as Google sent it.
type Violation struct {
	Field       string
	Reason      string
	Description string
	// EventIndex is the row named by "events[N]" in Field, -1 if the violation names no event.
	EventIndex int
}

// APIError is Google's AIP-193 error envelope, parsed. Unknown detail types are ignored and unknown
// reason strings kept verbatim.
type APIError struct {
	HTTPStatus int
	// Status is the canonical code (INVALID_ARGUMENT, RESOURCE_EXHAUSTED, …); derived from the HTTP
	// status when the body carries none (an HTML page from a proxy).
	Status  string
	Message string
	// Reason is ErrorInfo.reason, or for Google Ads the first GoogleAdsFailure error code.
	Reason   string
	Domain   string
	Metadata map[string]string
	// RequestID is Google's request ID from RequestInfo, GoogleAdsFailure or ErrorInfo metadata.
	RequestID  string
	Violations []Violation
	// RetryAfter is RetryInfo.retryDelay, else a Google Ads quota retryDelay, else the Retry-After
	// header; 0 if absent.
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "google api: HTTP %d %s", e.HTTPStatus, e.Status)
	if e.Reason != "" && e.Reason != e.Status {
		fmt.Fprintf(&b, " (%s)", e.Reason)
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	for i, v := range e.Violations {
		if i == 5 {
			fmt.Fprintf(&b, "; and %d more", len(e.Violations)-i)
			break
		}
		fmt.Fprintf(&b, "; %s %s", v.Field, v.Reason)
	}
	return b.String()
}

// EventIndexes returns the distinct event rows the violations name, in first-seen order.
func (e *APIError) EventIndexes() []int {
	var out []int
	seen := map[int]bool{}
	for _, v := range e.Violations {
		if v.EventIndex >= 0 && !seen[v.EventIndex] {
			seen[v.EventIndex] = true
			out = append(out, v.EventIndex)
		}
	}
	return out
}

// Class is what the caller should do about an error.
type Class int

const (
	// Transient: retry the same request with backoff (network, 500, 502, 503, 504, 409 ABORTED).
	Transient Class = iota + 1
	// Quota: retry later, no sooner than RetryAfter (429).
	Quota
	// Permanent: do not resend unchanged (other 4xx).
	Permanent
	// Unauthenticated: the credentials are bad (401, invalid_grant); refresh or reconnect.
	Unauthenticated
)

func (c Class) String() string {
	switch c {
	case Transient:
		return "transient"
	case Quota:
		return "quota"
	case Permanent:
		return "permanent"
	case Unauthenticated:
		return "unauthenticated"
	}
	return "none"
}

// Classify maps an error of this package's clients to a Class: network errors and 500/502/503/504
// and 409 ABORTED are Transient; 429 is Quota; 401, ErrInvalidGrant and ErrNoRefreshToken are
// Unauthenticated; other 4xx (and invalid_client from the token endpoint) are Permanent. An error it cannot place (a broken 200 body, a cancelled context) is Transient:
// resending is safe because events carry stable transaction IDs. Classify(nil) is 0.
func Classify(err error) Class {
	if err == nil {
		return 0
	}
	if errors.Is(err, ErrInvalidGrant) || errors.Is(err, ErrNoRefreshToken) {
		return Unauthenticated
	}
	var ae *APIError
	if errors.As(err, &ae) {
		return classifyStatus(ae.HTTPStatus, ae.Status)
	}
	var re *oauth2.RetrieveError
	if errors.As(err, &re) && re.Response != nil {
		if re.ErrorCode == "invalid_client" || re.ErrorCode == "unauthorized_client" {
			// A configuration error of the OAuth client: no retry fixes it.
			return Permanent
		}
		return classifyStatus(re.Response.StatusCode, "")
	}
	return Transient
}

func classifyStatus(code int, status string) Class {
	switch {
	case code == http.StatusTooManyRequests:
		return Quota
	case code == http.StatusUnauthorized:
		return Unauthenticated
	case code == http.StatusConflict:
		if status == "ABORTED" {
			return Transient
		}
		return Permanent
	case code == http.StatusInternalServerError, code == http.StatusBadGateway,
		code == http.StatusServiceUnavailable, code == http.StatusGatewayTimeout:
		return Transient
	case code == http.StatusRequestTimeout, code == 499:
		return Transient
	case code >= 400 && code < 500:
		return Permanent
	case code >= 500:
		// 501 UNIMPLEMENTED and other 5xx are not documented as retryable; retry anyway, bounded
		// by the caller's attempt cap, since the platform may recover.
		return Transient
	}
	return Transient
}

// eventIndexRE finds the row of a field path in any of the spellings Google documents:
// "events[3].ad_identifiers.gclid", "events.events[3]…", "events[3]".
var eventIndexRE = regexp.MustCompile(`\bevents\[(\d+)\]`)

// EventIndex returns the event row a field path names, -1 if none.
func EventIndex(field string) int {
	m := eventIndexRE.FindStringSubmatch(field)
	if m == nil {
		return -1
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return -1
	}
	return n
}

// Wire form of the envelope. Details are decoded by their "@type" suffix so that a future detail
// type or version (GoogleAdsFailure moves with the Ads API version) never breaks parsing.
type errorEnvelope struct {
	Error struct {
		Code    int               `json:"code"`
		Message string            `json:"message"`
		Status  string            `json:"status"`
		Details []json.RawMessage `json:"details"`
	} `json:"error"`
}

type errorDetail struct {
	Type            string            `json:"@type"`
	Reason          string            `json:"reason"`
	Domain          string            `json:"domain"`
	Metadata        map[string]string `json:"metadata"`
	RetryDelay      string            `json:"retryDelay"`
	RequestID       string            `json:"requestId"`
	FieldViolations []struct {
		Field       string `json:"field"`
		Description string `json:"description"`
		Reason      string `json:"reason"`
	} `json:"fieldViolations"`
	Errors []adsError `json:"errors"`
}

type adsError struct {
	ErrorCode map[string]json.RawMessage `json:"errorCode"`
	Message   string                     `json:"message"`
	Location  struct {
		FieldPathElements []struct {
			FieldName string `json:"fieldName"`
			Index     *int   `json:"index"`
		} `json:"fieldPathElements"`
	} `json:"location"`
	Details struct {
		QuotaErrorDetails struct {
			RetryDelay string `json:"retryDelay"`
		} `json:"quotaErrorDetails"`
	} `json:"details"`
}

// parseAPIError builds an *APIError from a non-2xx response; it never fails, falling back to the
// HTTP status and a prefix of the body.
func parseAPIError(resp *http.Response, body []byte) *APIError {
	e := &APIError{HTTPStatus: resp.StatusCode}
	var env errorEnvelope
	if err := json.Unmarshal(body, &env); err != nil || (env.Error.Code == 0 && env.Error.Status == "" && env.Error.Message == "") {
		e.Message = strings.TrimSpace(truncate(string(body), 512))
	} else {
		e.Status = env.Error.Status
		e.Message = env.Error.Message
		for _, raw := range env.Error.Details {
			var d errorDetail
			if json.Unmarshal(raw, &d) != nil {
				continue
			}
			e.addDetail(d)
		}
	}
	if e.Status == "" {
		e.Status = statusForHTTP(resp.StatusCode)
	}
	if e.RetryAfter == 0 {
		e.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	}
	return e
}

func (e *APIError) addDetail(d errorDetail) {
	switch typeName(d.Type) {
	case "google.rpc.ErrorInfo":
		if e.Reason == "" {
			e.Reason, e.Domain, e.Metadata = d.Reason, d.Domain, d.Metadata
		}
		if e.RequestID == "" {
			e.RequestID = d.Metadata["requestId"]
		}
	case "google.rpc.RetryInfo":
		if dur, err := time.ParseDuration(d.RetryDelay); err == nil && dur > 0 {
			e.RetryAfter = dur
		}
	case "google.rpc.RequestInfo":
		if d.RequestID != "" {
			e.RequestID = d.RequestID
		}
	case "google.rpc.BadRequest":
		for _, v := range d.FieldViolations {
			e.Violations = append(e.Violations, Violation{Field: v.Field, Reason: v.Reason, Description: v.Description, EventIndex: EventIndex(v.Field)})
		}
	default:
		if strings.HasSuffix(d.Type, ".GoogleAdsFailure") {
			e.addAdsFailure(d)
		}
	}
}

func (e *APIError) addAdsFailure(d errorDetail) {
	if d.RequestID != "" && e.RequestID == "" {
		e.RequestID = d.RequestID
	}
	for _, ae := range d.Errors {
		reason := adsErrorCode(ae.ErrorCode)
		if e.Reason == "" {
			e.Reason = reason
		}
		var path []string
		for _, el := range ae.Location.FieldPathElements {
			p := el.FieldName
			if el.Index != nil {
				p += "[" + strconv.Itoa(*el.Index) + "]"
			}
			path = append(path, p)
		}
		field := strings.Join(path, ".")
		e.Violations = append(e.Violations, Violation{Field: field, Reason: reason, Description: ae.Message, EventIndex: EventIndex(field)})
		if dur, err := time.ParseDuration(ae.Details.QuotaErrorDetails.RetryDelay); err == nil && dur > 0 && e.RetryAfter == 0 {
			e.RetryAfter = dur
		}
	}
}

// adsErrorCode reads the one set member of a Google Ads errorCode oneof, e.g.
// {"authorizationError":"USER_PERMISSION_DENIED"} → "USER_PERMISSION_DENIED".
func adsErrorCode(code map[string]json.RawMessage) string {
	for _, raw := range code {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	return ""
}

// typeName strips the "type.googleapis.com/" prefix of an Any type URL.
func typeName(t string) string {
	if i := strings.LastIndexByte(t, '/'); i >= 0 {
		return t[i+1:]
	}
	return t
}

// statusForHTTP is google/rpc/code.proto's HTTP mapping, read backwards.
func statusForHTTP(code int) string {
	switch code {
	case 400:
		return "INVALID_ARGUMENT"
	case 401:
		return "UNAUTHENTICATED"
	case 403:
		return "PERMISSION_DENIED"
	case 404:
		return "NOT_FOUND"
	case 409:
		return "ABORTED"
	case 429:
		return "RESOURCE_EXHAUSTED"
	case 499:
		return "CANCELLED"
	case 501:
		return "UNIMPLEMENTED"
	case 503:
		return "UNAVAILABLE"
	case 504:
		return "DEADLINE_EXCEEDED"
	}
	if code >= 500 {
		return "INTERNAL"
	}
	return "UNKNOWN"
}

// parseRetryAfter reads an HTTP Retry-After header: delay-seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
