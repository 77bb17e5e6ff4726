package ingest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/internal/httpserver/apierror"
	"github.com/revtrack/revtrack/schemas"
)

// CollectResponse is the 202 body. Rejected events are reported, not retried: resending a malformed
// event cannot succeed, and a browser that retries it only adds load (a retry storm).
type CollectResponse struct {
	Accepted int             `json:"accepted"`
	Rejected []RejectedEvent `json:"rejected"`
}

// RejectedEvent names one refused event of a batch by its index.
type RejectedEvent struct {
	Index   int           `json:"index"`
	Error   apierror.Code `json:"error"`
	Message string        `json:"message"`
}

// validName is `^[A-Za-z0-9_.:-]{1,64}$` (nameRe in the tests), by a loop: the regular expressions of
// the IDs and the name took a fifth of a browser batch's decoding (BenchmarkDecodeBrowserBatch).
func validName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == ':' || c == '-') {
			return false
		}
	}
	return true
}

const (
	maxURLLen        = 2048
	maxTextLen       = 512
	maxPropertyBytes = 8 << 10
)

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}

// decodeBrowserEvent validates one event. Long free text is truncated rather than refused; what
// cannot be interpreted (IDs, names, times) is refused.
func decodeBrowserEvent(raw json.RawMessage, now time.Time, maxSkew time.Duration, urls urlCache) (schemas.BrowserEvent, error) {
	var in schemas.BrowserEventRequest
	if err := json.Unmarshal(raw, &in); err != nil {
		return schemas.BrowserEvent{}, fmt.Errorf("event is not a JSON object")
	}
	switch {
	case !validID(in.EventID):
		return schemas.BrowserEvent{}, fmt.Errorf("eventId must be 1-128 printable characters")
	case !validName(in.Name):
		return schemas.BrowserEvent{}, fmt.Errorf("name must be 1-64 characters of letters, digits, _ . : -")
	case !validID(in.AcquisitionID):
		return schemas.BrowserEvent{}, fmt.Errorf("acquisitionId must be 1-128 printable characters")
	case in.SessionID != "" && !validID(in.SessionID):
		return schemas.BrowserEvent{}, fmt.Errorf("sessionId must be 1-128 printable characters")
	}
	at, err := parseTime(in.OccurredAt)
	if err != nil {
		return schemas.BrowserEvent{}, fmt.Errorf("occurredAt must be an ISO 8601 timestamp")
	}
	if _, until := schemas.EventTimeRange(now, maxSkew); at.After(until) {
		// A browser clock set ahead is common and the event is still real: stamp it with the receipt
		// time rather than lose it (server events, from clocks the publisher controls, are refused).
		at = now
	}
	// One set far back is refused, by the rule every consumer applies: the pipeline cannot store
	// such a time, or would delete the event at its next retention pass.
	if err := schemas.CheckEventTime(at, now, maxSkew); err != nil {
		return schemas.BrowserEvent{}, err
	}
	props := in.Properties
	if len(props) > 0 && string(props) != "null" {
		if len(props) > maxPropertyBytes || props[0] != '{' {
			return schemas.BrowserEvent{}, fmt.Errorf("properties must be a JSON object of at most %d bytes", maxPropertyBytes)
		}
	} else {
		props = nil
	}
	if in.Platform != nil {
		in.Platform.Shop = truncate(in.Platform.Shop, 255)
		in.Platform.UserID = truncate(in.Platform.UserID, 128)
		if in.Platform.IdentitySource != "embedded_bridge" {
			return schemas.BrowserEvent{}, fmt.Errorf("platform.platformIdentitySource must be embedded_bridge")
		}
	}
	ft := in.FirstTouch
	ft.LandingURL = truncate(urls.strip(ft.LandingURL), maxURLLen)
	ft.Referrer = truncate(urls.strip(ft.Referrer), maxURLLen)
	for _, f := range []*string{&ft.TrackerRef, &ft.UTMSource, &ft.UTMMedium, &ft.UTMCampaign, &ft.UTMTerm, &ft.UTMContent,
		&ft.Gclid, &ft.Gbraid, &ft.Wbraid} {
		*f = truncate(*f, maxTextLen)
	}
	return schemas.BrowserEvent{
		EventID: in.EventID, AcquisitionID: in.AcquisitionID, SessionID: in.SessionID, Name: in.Name,
		OccurredAt: at.UTC(), ReceivedAt: now.UTC(),
		URL: truncate(urls.strip(in.URL), maxURLLen), Path: truncate(in.Path, maxURLLen), Title: truncate(in.Title, maxTextLen),
		Referrer: truncate(urls.strip(in.Referrer), maxURLLen), Returning: in.Returning, FirstTouch: ft,
		Platform: in.Platform, Properties: props,
	}, nil
}

// CORS of /v1/collect. An answer carries credentials (Access-Control-Allow-Credentials with the
// exact origin echoed) only once the origin is one of the tracking source's allowed origins. Before
// that — the preflight, which has no body and so no key, and every refusal made before or because of
// the origin check — it carries "Access-Control-Allow-Origin: *" without credentials: tracker.js
// (an XMLHttpRequest without credentials) can still read the refusal and stop instead of retrying
// what it sees as a network error, while a credentialed request from any other origin cannot read
// anything. Beacons need no CORS: sendBeacon with a text/plain body is a no-cors request.

// corsAnyOrigin makes an answer readable by any page, without credentials.
func corsAnyOrigin(c *gin.Context) {
	if c.GetHeader("Origin") == "" {
		return
	}
	h := c.Writer.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	// tracker.js honours Retry-After on 429 and 503; cross-origin it can read it only when exposed.
	h.Set("Access-Control-Expose-Headers", "Retry-After")
	h.Add("Vary", "Origin")
}

// corsAllowedOrigin echoes an origin the source allows, with credentials (beacons may carry
// cookies; the edge ignores them). Call it only after src.AllowsOrigin.
func corsAllowedOrigin(c *gin.Context) {
	h := c.Writer.Header()
	h.Set("Access-Control-Allow-Origin", c.GetHeader("Origin"))
	h.Set("Access-Control-Allow-Credentials", "true")
}

// collectPreflight answers without credentials: it cannot know the source (see corsAnyOrigin), and
// tracker.js never sends one (its text/plain POST is a simple request).
func (s *Service) collectPreflight(c *gin.Context) {
	corsAnyOrigin(c)
	h := c.Writer.Header()
	h.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
	h.Set("Access-Control-Allow-Headers", "Content-Type")
	h.Set("Access-Control-Max-Age", "600")
	c.Status(http.StatusNoContent)
}

func (s *Service) collect(c *gin.Context) {
	ctx := c.Request.Context()
	corsAnyOrigin(c)
	body, err := readBody(c, s.cfg.MaxBatchBytes)
	if err != nil {
		s.reject(c, routeCollect, err)
		return
	}
	handed := s.hand.arrive()
	defer handed()
	var req schemas.CollectRequest
	if err := json.Unmarshal(body, &req); err != nil {
		s.reject(c, routeCollect, errInvalidBody)
		return
	}
	a, err := s.admitBatch(ctx, c, req.Key)
	if err != nil {
		s.noteRefused(err, a.sourceID, req.Key, c.GetHeader("Origin"))
		s.reject(c, routeCollect, err)
		return
	}
	if len(req.Batch) == 0 || len(req.Batch) > s.cfg.MaxBatchEvents {
		s.reject(c, routeCollect, invalidField("batch must hold 1-%d events", s.cfg.MaxBatchEvents))
		return
	}
	now := s.d.Now()
	ua := truncate(c.GetHeader("User-Agent"), maxTextLen)
	resp := CollectResponse{Rejected: []RejectedEvent{}}
	recs := make([]*kgo.Record, 0, len(req.Batch))
	urls := urlCache{}
	for i, raw := range req.Batch {
		ev, err := decodeBrowserEvent(raw, now, s.cfg.MaxFutureSkew, urls)
		if err != nil {
			resp.Rejected = append(resp.Rejected, RejectedEvent{Index: i, Error: apierror.InvalidParameter, Message: apierror.OneLine(err.Error())})
			s.metrics.events.WithLabelValues(kindBrowser, string(apierror.InvalidParameter)).Inc()
			continue
		}
		ev.SourceID, ev.WorkspaceID, ev.AppID, ev.UserAgent = a.sourceID, a.workspaceID, a.appID, ua
		value, _ := json.Marshal(ev)
		recs = append(recs, &kgo.Record{Topic: s.d.BrowserTopic, Key: []byte(ev.SourceID + ":" + ev.AcquisitionID), Value: value})
	}
	if len(recs) > 0 {
		if err := s.produce(ctx, handed, nil, recs...); err != nil {
			s.reject(c, routeCollect, err)
			return
		}
	}
	resp.Accepted = len(recs)
	s.metrics.events.WithLabelValues(kindBrowser, "accepted").Add(float64(len(recs)))
	s.metrics.requests.WithLabelValues(routeCollect, "accepted").Inc()
	c.Header("Cache-Control", "no-store")
	writeJSON(c, http.StatusAccepted, resp)
}
