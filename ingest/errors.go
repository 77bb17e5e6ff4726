package ingest

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/controlplane"
)

// apiError is a rejection with its HTTP status and the closed-vocabulary code that is also the
// metric label and log field.
type apiError struct {
	Status  int
	Code    string
	Message string
}

func (e *apiError) Error() string { return e.Code + ": " + e.Message }

// The reasons the edge rejects a request. Messages name the specification's troubleshooting
// conditions so a developer can act on them.
var (
	errPayloadTooLarge    = &apiError{http.StatusRequestEntityTooLarge, "payload_too_large", "request body is too large"}
	errInvalidBody        = &apiError{http.StatusBadRequest, "invalid_body", "request body is not a JSON object"}
	errMissingKey         = &apiError{http.StatusUnauthorized, "missing_key", "send the tracking private key (or a workspace API key) as Authorization: Bearer tracker_sk_…"}
	errInvalidKey         = &apiError{http.StatusUnauthorized, "invalid_key", "private key, public key and team slug do not belong to one tracking source (check the team slug and keys; a rotated key stops working)"}
	errSourceUnavailable  = &apiError{http.StatusUnauthorized, "tracking_source_unavailable", "tracking source unavailable: the key was rotated or the source is disabled"}
	errOriginNotAllowed   = &apiError{http.StatusForbidden, "origin_not_allowed", "origin not allowed: scheme, host and port must match an allowed origin of the tracking source exactly"}
	errSubscription       = &apiError{http.StatusForbidden, "subscription_inactive", "the workspace lacks an active subscription"}
	errAppNotSelected     = &apiError{http.StatusForbidden, "app_not_selected", "the tracking source's app is no longer selected in the workspace"}
	errRateLimited        = &apiError{http.StatusTooManyRequests, "rate_limited", "ingestion called too often: wait 60 seconds and remove accidental loops"}
	errUnavailable        = &apiError{http.StatusServiceUnavailable, "unavailable", "temporary failure; retry with exponential backoff"}
	errUnacknowledged     = &apiError{http.StatusServiceUnavailable, "unavailable", "Kafka did not acknowledge in time; the event may still be stored: retry with the same event IDs, which never counts twice"}
	errEventInProgress    = &apiError{http.StatusServiceUnavailable, "event_in_progress", "a request with this eventId is being processed; retry shortly"}
	errUnsupportedContent = &apiError{http.StatusUnsupportedMediaType, "unsupported_media_type", "send Content-Type: application/json"}
)

// invalidField is a 400 naming the field.
func invalidField(format string, a ...any) *apiError {
	return &apiError{http.StatusBadRequest, "invalid_field", fmt.Sprintf(format, a...)}
}

// toAPIError is the one place where errors become statuses.
func toAPIError(err error) *apiError {
	var ae *apiError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.Is(err, controlplane.ErrInvalidKey):
		return errInvalidKey
	case errors.Is(err, controlplane.ErrSourceUnavailable):
		return errSourceUnavailable
	case errors.Is(err, controlplane.ErrInactiveSubs):
		return errSubscription
	default:
		return errUnavailable
	}
}

// writeError answers with {error, message}; 429 and 503 say when to come back.
func writeError(c *gin.Context, err error) *apiError {
	ae := toAPIError(err)
	switch ae.Status {
	case http.StatusTooManyRequests:
		c.Header("Retry-After", "60")
	case http.StatusServiceUnavailable:
		c.Header("Retry-After", "5")
	}
	c.Header("Cache-Control", "no-store")
	c.AbortWithStatusJSON(ae.Status, gin.H{"error": ae.Code, "message": ae.Message})
	return ae
}
