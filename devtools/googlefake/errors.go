package googlefake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// AIP-193 envelope, proto3 JSON, details in the order Google writes them.
type envelope struct {
	Error envelopeBody `json:"error"`
}

type envelopeBody struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Status  string `json:"status"`
	Details []any  `json:"details,omitempty"`
}

const typePrefix = "type.googleapis.com/"

type errorInfo struct {
	Type     string            `json:"@type"`
	Reason   string            `json:"reason"`
	Domain   string            `json:"domain"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

type retryInfo struct {
	Type       string `json:"@type"`
	RetryDelay string `json:"retryDelay"`
}

type requestInfo struct {
	Type      string `json:"@type"`
	RequestID string `json:"requestId"`
}

type badRequest struct {
	Type            string           `json:"@type"`
	FieldViolations []fieldViolation `json:"fieldViolations"`
}

type fieldViolation struct {
	Field       string `json:"field,omitempty"`
	Description string `json:"description"`
	Reason      string `json:"reason,omitempty"`
}

type googleAdsFailure struct {
	Type      string     `json:"@type"`
	Errors    []adsError `json:"errors"`
	RequestID string     `json:"requestId"`
}

type adsError struct {
	ErrorCode map[string]string `json:"errorCode"`
	Message   string            `json:"message"`
}

func newErrorInfo(reason, domain string, metadata map[string]string) errorInfo {
	return errorInfo{Type: typePrefix + "google.rpc.ErrorInfo", Reason: reason, Domain: domain, Metadata: metadata}
}

func newRetryInfo(d time.Duration) retryInfo {
	return retryInfo{Type: typePrefix + "google.rpc.RetryInfo", RetryDelay: protoDuration(d)}
}

func newRequestInfo(id string) requestInfo {
	return requestInfo{Type: typePrefix + "google.rpc.RequestInfo", RequestID: id}
}

func newBadRequest(v []fieldViolation) badRequest {
	return badRequest{Type: typePrefix + "google.rpc.BadRequest", FieldViolations: v}
}

func newAdsFailure(version, category, code, message, requestID string) googleAdsFailure {
	return googleAdsFailure{
		Type:      typePrefix + "google.ads.googleads." + version + ".errors.GoogleAdsFailure",
		Errors:    []adsError{{ErrorCode: map[string]string{category: code}, Message: message}},
		RequestID: requestID,
	}
}

// protoDuration writes a google.protobuf.Duration in its JSON form ("30s", "1.500s").
func protoDuration(d time.Duration) string {
	s := fmt.Sprintf("%.3f", d.Seconds())
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s + "s"
}

// canonicalStatus is google/rpc/code.proto's HTTP mapping.
func canonicalStatus(code int) string {
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
	case 500:
		return "INTERNAL"
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
	return "FAILED_PRECONDITION"
}

// writeEnvelope answers an error the way Google's front end does: indented JSON, UTF-8.
func writeEnvelope(w http.ResponseWriter, code int, message string, details ...any) {
	writeJSON(w, code, envelope{Error: envelopeBody{Code: code, Message: message, Status: canonicalStatus(code), Details: details}})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	body, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(code)
	_, _ = w.Write(append(body, '\n'))
}

// Canned messages of Google's front end.
const (
	msgCredentialsMissing = "Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project."
	msgInvalidCredentials = "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project."
	msgScopeInsufficient  = "Request had insufficient authentication scopes."
	msgBadRequest         = "There was a problem with the request."
)

// scriptedError answers a canned error of status for service (a scripted FailIngest/FailRetrieve).
func (f *Fake) scriptedError(w http.ResponseWriter, status int, service, requestID string) {
	switch status {
	case http.StatusTooManyRequests:
		writeEnvelope(w, status,
			"Quota exceeded for quota metric 'Ingestion requests' and limit 'Ingestion requests per minute per project' of service '"+service+"' for consumer 'project_number:000000000000'.",
			newErrorInfo("RATE_LIMIT_EXCEEDED", "googleapis.com", map[string]string{
				"consumer":          "projects/000000000000",
				"quota_limit":       "IngestionRequestsPerMinutePerProject",
				"quota_limit_value": "300",
				"quota_location":    "global",
				"quota_metric":      service + "/ingestion_requests",
				"quota_unit":        "1/min/{project}",
				"service":           service,
			}),
			newRetryInfo(f.cfg.QuotaRetryDelay),
		)
	case http.StatusInternalServerError:
		writeEnvelope(w, status, "Internal error encountered.")
	case http.StatusServiceUnavailable:
		writeEnvelope(w, status, "The service is currently unavailable.")
	case http.StatusGatewayTimeout:
		writeEnvelope(w, status, "The request deadline was exceeded.")
	case http.StatusConflict:
		writeEnvelope(w, status, "The operation was aborted.", newErrorInfo("ABORTED", service, map[string]string{"requestId": requestID}))
	default:
		writeEnvelope(w, status, http.StatusText(status), newErrorInfo(canonicalStatus(status), service, map[string]string{"requestId": requestID}))
	}
}
