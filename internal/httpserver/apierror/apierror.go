// Package apierror is the one closed list of error codes of revtrack's HTTP API, shared by its
// edges (ingest, the query edge's REST and MCP routes, the admin API, and the server's own
// refusals in internal/httpserver). Every refusal is the JSON object {"error": <code>,
// "message": <one line>}; the code alone fixes the HTTP status, so a client can branch on the code
// and a person reads the message. docs/API.md "Errors" and the OpenAPI document
// (query/openapi/openapi.yaml, the enum of Error.error) list the same codes: a test keeps the
// three equal, and another that every code an edge writes is one of them.
//
// It sits beside the HTTP server because it is plumbing: it knows statuses and codes, not the
// domain errors the edges map onto them (each edge keeps that table, e.g. ingest/errors.go).
package apierror

import (
	"fmt"
	"net/http"
	"strings"
)

// Code is a machine-readable error code: snake_case, stable, one per failure.
type Code string

// The codes, by status. Adding one means adding it to catalog, docs/API.md and the OpenAPI enum.
const (
	InvalidParameter          Code = "invalid_parameter"
	InvalidBody               Code = "invalid_body"
	MissingScopes             Code = "missing_scopes"
	AccessDenied              Code = "access_denied"
	Unauthorized              Code = "unauthorized"
	TrackingSourceUnavailable Code = "tracking_source_unavailable"
	Forbidden                 Code = "forbidden"
	SubscriptionInactive      Code = "subscription_inactive"
	OriginNotAllowed          Code = "origin_not_allowed"
	AppNotSelected            Code = "app_not_selected"
	NotFound                  Code = "not_found"
	MethodNotAllowed          Code = "method_not_allowed"
	RequestTimeout            Code = "request_timeout"
	Conflict                  Code = "conflict"
	AmbiguousCustomer         Code = "ambiguous_customer"
	NotRetryable              Code = "not_retryable"
	NotConfigured             Code = "not_configured"
	PayloadTooLarge           Code = "payload_too_large"
	RateLimited               Code = "rate_limited"
	RevocationUnconfirmed     Code = "revocation_unconfirmed"
	Unavailable               Code = "unavailable"
	Overloaded                Code = "overloaded"
	EventInProgress           Code = "event_in_progress"
)

// Entry is one code of the list: the status it is answered with, when, and what the caller does.
type Entry struct {
	Code    Code
	Status  int
	Meaning string
	Action  string
}

var catalog = []Entry{
	{InvalidParameter, http.StatusBadRequest,
		"A query or path parameter, or a field of the body, is missing or invalid (the message names it); in a browser batch, an event refused on its own (`rejected[].error`).",
		"Correct that value; the request was not applied."},
	{InvalidBody, http.StatusBadRequest,
		"The body is not a JSON document of the operation's shape (not JSON, a field of the wrong type, an unknown field) or could not be read.",
		"Send the JSON object the operation describes."},
	{MissingScopes, http.StatusBadRequest,
		"Google's consent did not grant every permission the advertising connection needs (`missingScopes` lists them).",
		"Start the connection again and allow every requested permission."},
	{AccessDenied, http.StatusBadRequest,
		"Google sent the browser back without access (the user declined, or Google refused).",
		"Start the connection again and allow access."},
	{Unauthorized, http.StatusUnauthorized,
		"The key is missing, invalid or revoked; for a tracking private key also rotated away or of a disabled source; on ingestion, keys and team slug that do not belong to one source; in the console, no session (signed out, expired or revoked) or a wrong e-mail address or password.",
		"Send a valid key as `Authorization: Bearer <key>` (and the matching public key and team slug on ingestion), or sign in again."},
	{TrackingSourceUnavailable, http.StatusUnauthorized,
		"Ingestion: the tracking source's key was rotated or the source is disabled.",
		"Use the current keys (`data-key`, `publicKey`) or enable the source."},
	{Forbidden, http.StatusForbidden,
		"The key is valid but may not do this: a read-scoped key on the admin API, a tracking private key on the REST reporting routes, or a browser or key the advertising connection flow does not accept; for a console session, a role below the route's, a workspace the person is not a member of, or a missing or wrong `X-CSRF-Token` or a foreign `Origin` (the message says which).",
		"Use the key the message names (an admin-scoped workspace key, or the MCP endpoint for a private key); in the console, ask an owner for the role, or send the session's CSRF token."},
	{SubscriptionInactive, http.StatusForbidden,
		"The workspace lacks an active subscription.",
		"Renew the subscription; retrying does not help until it is active."},
	{OriginNotAllowed, http.StatusForbidden,
		"Ingestion: the browser's origin is not an allowed origin of the tracking source (scheme, host and port must match exactly).",
		"Add the origin to the source's allowed origins."},
	{AppNotSelected, http.StatusForbidden,
		"Ingestion: the tracking source's app is no longer selected in the workspace.",
		"Select the app again, or use a source of a selected app."},
	{NotFound, http.StatusNotFound,
		"No such route, metric, or resource in this workspace (customer, source, key, mapping, upload row, connection).",
		"Check the path and the ID; IDs of other workspaces are not found."},
	{MethodNotAllowed, http.StatusMethodNotAllowed,
		"The path exists for other methods (`Allow` lists them).",
		"Use one of the allowed methods."},
	{RequestTimeout, http.StatusRequestTimeout,
		"The request body did not arrive in time.",
		"Send the body promptly; retry."},
	{Conflict, http.StatusConflict,
		"The current state does not allow the operation (for example a sync already running, no partner or advertising connection, a duplicate mapping).",
		"Do what the message says first; retrying the same request does not help."},
	{AmbiguousCustomer, http.StatusConflict,
		"A shop domain matches customers of several apps (`customerIds` lists them).",
		"Retry with one of the customer IDs, or with `appId`."},
	{NotRetryable, http.StatusConflict,
		"The upload row cannot be retried (`reason` says why).",
		"Only a rejected row with click evidence and a platform reason can be retried."},
	{NotConfigured, http.StatusConflict,
		"This deployment does not offer the feature (the advertising connection without an OAuth client or account discovery, or per-workspace analyst access).",
		"Ask the operator to configure it; retrying does not help."},
	{PayloadTooLarge, http.StatusRequestEntityTooLarge,
		"The body is larger than the route's limit.",
		"Send a smaller body (fewer events per batch)."},
	{RateLimited, http.StatusTooManyRequests,
		"Too many requests: ingestion called too often, the key's reporting budget is spent, or too many failed sign-ins for the account or from the address.",
		"Wait `Retry-After` seconds (60 on ingestion) and remove accidental loops."},
	{RevocationUnconfirmed, http.StatusBadGateway,
		"Google did not confirm the revocation of the advertising credential; the connection and its credential stay.",
		"Retry the disconnection."},
	{Unavailable, http.StatusServiceUnavailable,
		"A temporary failure (a dependency did not answer, or did not acknowledge in time).",
		"Retry with exponential backoff; on ingestion with the same event IDs, which never count twice."},
	{Overloaded, http.StatusServiceUnavailable,
		"Every computation slot of the query instance stayed busy.",
		"Retry after `Retry-After` seconds."},
	{EventInProgress, http.StatusServiceUnavailable,
		"Ingestion: a request with the same eventId is being processed right now.",
		"Retry shortly with the same body."},
}

var byCode = func() map[Code]Entry {
	m := make(map[Code]Entry, len(catalog))
	for _, e := range catalog {
		m[e.Code] = e
	}
	return m
}()

// Catalog returns the closed list, ordered by status.
func Catalog() []Entry { return append([]Entry(nil), catalog...) }

// Lookup returns the entry of a code given as text, and whether it is in the list.
func Lookup(code string) (Entry, bool) {
	e, ok := byCode[Code(code)]
	return e, ok
}

// Status is the HTTP status of c; a code outside the list (a programming error the tests catch)
// answers 500.
func (c Code) Status() int {
	if e, ok := byCode[c]; ok {
		return e.Status
	}
	return http.StatusInternalServerError
}

// Error is a refusal: a code of the list and a message for a person.
type Error struct {
	Code    Code
	Message string
	// Fields are members of the body a client acts on besides error and message (customerIds,
	// missingScopes, reason).
	Fields map[string]any
}

// New is a refusal with code and msg.
func New(code Code, msg string) *Error { return &Error{Code: code, Message: msg} }

// Newf is New with a formatted message.
func Newf(code Code, format string, a ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, a...)}
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Status is the HTTP status of e's code.
func (e *Error) Status() int { return e.Code.Status() }

// Body is the JSON body of e: {error, message} plus its fields, the message on one line.
func (e *Error) Body() map[string]any {
	b := make(map[string]any, len(e.Fields)+2)
	for k, v := range e.Fields {
		b[k] = v
	}
	b["error"], b["message"] = e.Code, OneLine(e.Message)
	return b
}

// OneLine joins the lines of msg with "; ": a message is one line, whatever the error it was made
// from (errors.Join and validators separate with newlines), so logs and clients show it whole.
func OneLine(msg string) string {
	if !strings.ContainsAny(msg, "\r\n") {
		return msg
	}
	var parts []string
	for _, line := range strings.FieldsFunc(msg, func(r rune) bool { return r == '\n' || r == '\r' }) {
		if line = strings.TrimSpace(line); line != "" {
			parts = append(parts, line)
		}
	}
	return strings.Join(parts, "; ")
}
