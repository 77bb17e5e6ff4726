package ingest

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/internal/httpserver/apierror"
)

// The reasons the edge rejects a request, each a code of the API's closed list (docs/API.md
// "Errors") that is also the metric label and log field. Messages name the troubleshooting
// conditions of docs/TRACKING.md, "7. Troubleshooting", so a developer can act on them.
var (
	errPayloadTooLarge   = apierror.New(apierror.PayloadTooLarge, "request body is too large")
	errInvalidBody       = apierror.New(apierror.InvalidBody, "request body is not a JSON object")
	errMissingKey        = apierror.New(apierror.Unauthorized, "send the tracking private key (or a workspace API key) as Authorization: Bearer tracker_sk_…")
	errInvalidKey        = apierror.New(apierror.Unauthorized, "private key, public key and team slug do not belong to one tracking source (check the team slug and keys; a rotated key stops working)")
	errSourceUnavailable = apierror.New(apierror.TrackingSourceUnavailable, "tracking source unavailable: the key was rotated or the source is disabled")
	errOriginNotAllowed  = apierror.New(apierror.OriginNotAllowed, "origin not allowed: scheme, host and port must match an allowed origin of the tracking source exactly")
	errSubscription      = apierror.New(apierror.SubscriptionInactive, "the workspace lacks an active subscription")
	errAppNotSelected    = apierror.New(apierror.AppNotSelected, "the tracking source's app is no longer selected in the workspace")
	errRateLimited       = apierror.New(apierror.RateLimited, "ingestion called too often: wait 60 seconds and remove accidental loops")
	errUnavailable       = apierror.New(apierror.Unavailable, "temporary failure; retry with exponential backoff")
	errUnacknowledged    = apierror.New(apierror.Unavailable, "Kafka did not acknowledge in time; the event may still be stored: retry with the same event IDs, which never counts twice")
	errEventInProgress   = apierror.New(apierror.EventInProgress, "a request with this eventId is being processed; retry shortly")
)

// invalidField is a 400 naming the field.
func invalidField(format string, a ...any) *apierror.Error {
	return apierror.Newf(apierror.InvalidParameter, format, a...)
}

// toAPIError is the one place where errors become statuses.
func toAPIError(err error) *apierror.Error {
	var ae *apierror.Error
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
func writeError(c *gin.Context, err error) *apierror.Error {
	ae := toAPIError(err)
	switch ae.Status() {
	case http.StatusTooManyRequests:
		c.Header("Retry-After", "60")
	case http.StatusServiceUnavailable:
		c.Header("Retry-After", "5")
	}
	apierror.Write(c, ae)
	return ae
}
