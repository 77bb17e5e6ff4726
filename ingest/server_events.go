package ingest

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/schemas"
)

// ServerEventResponse is the success body: 202 for a new event, 200 for a repeated eventId.
type ServerEventResponse struct {
	Accepted  bool   `json:"accepted"`
	Duplicate bool   `json:"duplicate"`
	EventID   string `json:"eventId"`
}

var (
	currencyRe = regexp.MustCompile(`^[A-Z]{3}$`)
	domainRe   = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$`)
	integerRe  = regexp.MustCompile(`^-?[0-9]+$`)
)

// validID is `^[\x21-\x7e]{1,128}$` (idRe in the tests), by a loop: 1-128 printable ASCII characters.
func validID(s string) bool {
	if len(s) == 0 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// commissionable events carry money (docs/TRACKING.md, section 4: amountCents and currency for paid
// and refunded).
func commissionable(name string) bool { return name == "paid" || name == "refunded" }

// decodeServerEvent parses and validates a request body into the Kafka message. It checks only what
// the body says; credentials are checked by the caller.
func decodeServerEvent(body []byte, now time.Time, maxSkew time.Duration) (schemas.ServerEventRequest, schemas.ServerEvent, error) {
	var req schemas.ServerEventRequest
	// Unmarshal, not a Decoder: one value and nothing after it, without the Decoder's buffers.
	if err := json.Unmarshal(body, &req); err != nil {
		return req, schemas.ServerEvent{}, errInvalidBody
	}
	ev := schemas.ServerEvent{EventID: req.EventID, AcquisitionID: req.AcquisitionID, Name: req.Name, ReceivedAt: now.UTC()}
	if req.TeamSlug == "" {
		return req, ev, invalidField("teamSlug is required (the workspace slug)")
	}
	if req.PublicKey == "" {
		return req, ev, invalidField("publicKey is required (the tracking source's tracker_pk_ key)")
	}
	if !validID(req.EventID) {
		return req, ev, invalidField("eventId is required: 1-128 printable characters, stable per event and reused on retry")
	}
	if req.AcquisitionID != "" && !validID(req.AcquisitionID) {
		return req, ev, invalidField("acquisitionId must be 1-128 printable characters (the value of window.tracker.getAcquisitionId())")
	}
	if !slices.Contains(schemas.ServerEventNames, req.Name) {
		return req, ev, invalidField("name %q is not one of %s", req.Name, strings.Join(schemas.ServerEventNames, ", "))
	}
	if req.CustomerRef != "" {
		ref := strings.ToLower(strings.TrimSpace(req.CustomerRef))
		if len(ref) > 253 || !domainRe.MatchString(ref) {
			return req, ev, invalidField("customerRef must be the verified shop domain, e.g. example.myshopify.com")
		}
		ev.CustomerRef = ref
	}
	at, err := parseTime(req.OccurredAt)
	if err != nil {
		return req, ev, invalidField("occurredAt must be an ISO 8601 timestamp with a time zone, e.g. 2026-11-21T09:30:00Z")
	}
	// The rule every consumer applies too: what is acknowledged here is never dead-lettered for its time.
	if err := schemas.CheckEventTime(at, now, maxSkew); err != nil {
		return req, ev, invalidField("%s", err)
	}
	ev.OccurredAt = at.UTC()
	hasAmount := len(req.AmountCents) > 0 && string(req.AmountCents) != "null"
	if hasAmount {
		if !integerRe.Match(req.AmountCents) {
			return req, ev, invalidField("amountCents must be a positive integer in minor units (e.g. 1999 for 19.99)")
		}
		n, err := strconv.ParseInt(string(req.AmountCents), 10, 64)
		if err != nil || n <= 0 {
			return req, ev, invalidField("amountCents must be a positive integer in minor units (e.g. 1999 for 19.99)")
		}
		ev.AmountCents = &n
	}
	if req.Currency != "" {
		cur := strings.ToUpper(req.Currency)
		if !currencyRe.MatchString(cur) {
			return req, ev, invalidField("currency must be a three-letter code such as USD")
		}
		ev.Currency = cur
	}
	if commissionable(req.Name) && (!hasAmount || ev.Currency == "") {
		return req, ev, invalidField("%s needs amountCents and currency", req.Name)
	}
	if hasAmount != (ev.Currency != "") {
		return req, ev, invalidField("amountCents and currency go together")
	}
	return req, ev, nil
}

// parseTime accepts RFC 3339 (the ISO 8601 profile with a mandatory zone), with or without
// fractional seconds.
func parseTime(s string) (time.Time, error) {
	return time.Parse(time.RFC3339Nano, s)
}

func (s *Service) serverEvents(c *gin.Context) {
	ctx := c.Request.Context()
	body, err := readBody(c, s.cfg.MaxServerEventBytes)
	if err != nil {
		s.reject(c, routeServerEvents, err)
		return
	}
	handed := s.hand.arrive()
	defer handed()
	private := bearer(c)
	if private == "" {
		s.reject(c, routeServerEvents, errMissingKey)
		return
	}
	now := s.d.Now()
	req, ev, verr := decodeServerEvent(body, now, s.cfg.MaxFutureSkew)
	if verr == errInvalidBody || req.TeamSlug == "" || req.PublicKey == "" {
		s.reject(c, routeServerEvents, verr)
		return
	}
	// Credentials before field errors: a caller with wrong keys learns nothing about the payload.
	// Invalid requests count against the limit too: a loop sending bad data is still a loop.
	var token string
	if verr == nil {
		token = rand.Text()
	}
	a, err := s.admitServer(ctx, private, &req, verr == nil, token)
	if err != nil {
		s.noteRefused(err, a.sourceID, req.PublicKey, "")
		s.reject(c, routeServerEvents, err)
		return
	}
	if verr != nil {
		if !a.allowed {
			verr = errRateLimited
		}
		s.metrics.events.WithLabelValues(kindServer, string(toAPIError(verr).Code)).Inc()
		s.reject(c, routeServerEvents, verr)
		return
	}
	ev.SourceID, ev.WorkspaceID, ev.AppID = a.sourceID, a.workspaceID, a.appID
	switch {
	case !a.allowed:
		s.reject(c, routeServerEvents, errRateLimited)
		return
	case a.state == stateDone:
		s.metrics.requests.WithLabelValues(routeServerEvents, "duplicate").Inc()
		s.metrics.events.WithLabelValues(kindServer, "duplicate").Inc()
		c.Header("Cache-Control", "no-store")
		writeJSON(c, http.StatusOK, ServerEventResponse{Accepted: true, Duplicate: true, EventID: ev.EventID})
		return
	case a.state == statePending:
		s.reject(c, routeServerEvents, errEventInProgress)
		return
	}
	value, _ := json.Marshal(ev)
	rec := &kgo.Record{Topic: s.d.ServerTopic, Key: []byte(partitionKey(ev.SourceID, ev.AcquisitionID, ev.EventID)), Value: value}
	// The reservation follows the write's outcome, even one that arrives after a 503 (the broker
	// stalled past --ingest-produce-timeout): until then the ID stays pending, so the client's retry
	// is told to wait rather than written a second time. Both run off the request's path and context.
	settled := make(chan struct{})
	settle := func(err error) {
		if err == nil {
			s.confirms.add(confirmation{scope: a.ref.scope, eventID: ev.EventID, done: settled})
			return
		}
		go func() {
			defer close(settled)
			ctx, cancel := context.WithTimeout(context.Background(), settleTimeout)
			defer cancel()
			// The write failed, so the ID must not look seen: the client's retry is a first attempt.
			if rerr := s.d.Deduper.Release(ctx, a.ref.scope, ev.EventID, token); rerr != nil {
				s.d.Log.Warn("dedup release failed; the reservation expires on its own", "err", rerr)
			}
		}()
	}
	if err := s.produce(ctx, handed, settle, rec); err != nil {
		s.reject(c, routeServerEvents, err)
		if err != errUnacknowledged {
			s.awaitSettled(c, settled)
		}
		return
	}
	s.metrics.requests.WithLabelValues(routeServerEvents, "accepted").Inc()
	s.metrics.events.WithLabelValues(kindServer, "accepted").Inc()
	c.Header("Cache-Control", "no-store")
	writeJSON(c, http.StatusAccepted, ServerEventResponse{Accepted: true, Duplicate: false, EventID: ev.EventID})
	s.awaitSettled(c, settled)
}

// writeJSON answers with a Content-Length, so that awaitSettled's flush sends the whole answer in
// one write instead of switching it to chunked encoding (a second write for the last chunk).
func writeJSON(c *gin.Context, status int, v any) {
	b, _ := json.Marshal(v)
	c.Header("Content-Length", strconv.Itoa(len(b)))
	c.Data(status, "application/json; charset=utf-8", b)
}

// awaitSettled sends the answer already written, then holds the connection until the reservation
// was confirmed or released (at most settleTimeout). The client has its answer without waiting for
// Redis, and its next request on the same connection, a retry included, finds the ID settled.
func (s *Service) awaitSettled(c *gin.Context, settled <-chan struct{}) {
	c.Writer.Flush()
	t := time.NewTimer(settleTimeout)
	defer t.Stop()
	select {
	case <-settled:
	case <-t.C:
	}
}

// partitionKey keeps one browser's events in one partition; without an acquisition ID the event ID
// spreads load.
func partitionKey(sourceID, acquisitionID, eventID string) string {
	if acquisitionID != "" {
		return sourceID + ":" + acquisitionID
	}
	return sourceID + ":" + eventID
}
