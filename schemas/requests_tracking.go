package schemas

import "encoding/json"

// The bodies the tracking edge accepts (ingest/server_events.go, ingest/collect.go). The edge decodes
// them; the benchmarks (bench/) and tests encode them, so a renamed or added field reaches every
// client at compile time instead of drifting in copies. Decoding ignores omitempty: the tags only
// keep an encoder from sending fields it did not set, as a publisher's server or tracker.js would.

// ServerEventRequest is the body of POST /api/tracking/server-events (docs/TRACKING.md, section 4).
// AmountCents stays raw so that the edge reports 10.5 or "10" as a bad amount, not a bad body.
type ServerEventRequest struct {
	TeamSlug      string          `json:"teamSlug,omitempty"`
	PublicKey     string          `json:"publicKey,omitempty"`
	EventID       string          `json:"eventId,omitempty"`
	AcquisitionID string          `json:"acquisitionId,omitempty"`
	Name          string          `json:"name,omitempty"`
	CustomerRef   string          `json:"customerRef,omitempty"`
	AmountCents   json.RawMessage `json:"amountCents,omitempty"`
	Currency      string          `json:"currency,omitempty"`
	OccurredAt    string          `json:"occurredAt,omitempty"`
}

// CollectRequest is what tracker.js posts to /v1/collect (ingest/tracker/README.md). The events stay
// raw so that the edge refuses one malformed event of a batch, not the batch: each decodes into a
// BrowserEventRequest on its own.
type CollectRequest struct {
	Key   string            `json:"key,omitempty"`
	Batch []json.RawMessage `json:"batch"`
}

// BrowserEventRequest is one event of a CollectRequest's batch, as the browser sends it.
type BrowserEventRequest struct {
	EventID       string           `json:"eventId,omitempty"`
	Name          string           `json:"name,omitempty"`
	OccurredAt    string           `json:"occurredAt,omitempty"`
	AcquisitionID string           `json:"acquisitionId,omitempty"`
	SessionID     string           `json:"sessionId,omitempty"`
	Returning     bool             `json:"returning,omitempty"`
	URL           string           `json:"url,omitempty"`
	Path          string           `json:"path,omitempty"`
	Title         string           `json:"title,omitempty"`
	Referrer      string           `json:"referrer,omitempty"`
	FirstTouch    FirstTouch       `json:"firstTouch,omitzero"`
	Platform      *PlatformContext `json:"platform,omitempty"`
	Properties    json.RawMessage  `json:"properties,omitempty"`
}
