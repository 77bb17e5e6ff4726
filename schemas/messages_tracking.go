package schemas

import (
	"encoding/json"
	"time"
)

// FirstTouch is the attribution the browser kept from its first observed visit per source.
type FirstTouch struct {
	TrackerRef  string `json:"trackerRef,omitempty"`
	UTMSource   string `json:"utmSource,omitempty"`
	UTMMedium   string `json:"utmMedium,omitempty"`
	UTMCampaign string `json:"utmCampaign,omitempty"`
	UTMTerm     string `json:"utmTerm,omitempty"`
	UTMContent  string `json:"utmContent,omitempty"`
	Gclid       string `json:"gclid,omitempty"`
	Gbraid      string `json:"gbraid,omitempty"`
	Wbraid      string `json:"wbraid,omitempty"`
	LandingURL  string `json:"landingUrl,omitempty"`
	Referrer    string `json:"referrer,omitempty"`
}

// PlatformContext is the embedded-app identity read from the platform's bridge. The raw identity
// token is never part of it.
type PlatformContext struct {
	Shop           string `json:"platformShop"`
	UserID         string `json:"platformUserId,omitempty"`
	IdentitySource string `json:"platformIdentitySource" jsonschema:"enum=embedded_bridge"`
}

// BrowserEvent is one event from tracker.js, enriched by the edge with the source's workspace and app.
type BrowserEvent struct {
	EventID       string           `json:"eventId" jsonschema:"minLength=1,description=client-generated; retries reuse it"`
	SourceID      string           `json:"sourceId" jsonschema:"minLength=1"`
	WorkspaceID   string           `json:"workspaceId" jsonschema:"minLength=1"`
	AppID         string           `json:"appId" jsonschema:"minLength=1"`
	AcquisitionID string           `json:"acquisitionId" jsonschema:"minLength=1"`
	SessionID     string           `json:"sessionId,omitempty"`
	Name          string           `json:"name" jsonschema:"minLength=1,description=page_view, platform_context or a custom name"`
	OccurredAt    time.Time        `json:"occurredAt" jsonschema:"description=at most 172 days before receivedAt and never later than 2106-02-07T06:28:15Z (schemas/event_time.go)"`
	ReceivedAt    time.Time        `json:"receivedAt" jsonschema:"description=the edge's clock at receipt: 1970-01-01T00:00:00Z to 2106-02-07T06:28:15Z"`
	URL           string           `json:"url,omitempty" jsonschema:"description=authentication query parameters already stripped"`
	Path          string           `json:"path,omitempty"`
	Title         string           `json:"title,omitempty"`
	Referrer      string           `json:"referrer,omitempty"`
	Returning     bool             `json:"returning"`
	FirstTouch    FirstTouch       `json:"firstTouch"`
	Platform      *PlatformContext `json:"platform,omitempty"`
	Properties    json.RawMessage  `json:"properties,omitempty" jsonschema:"type=object"`
	UserAgent     string           `json:"userAgent,omitempty"`
}

// ServerEvent names, the closed vocabulary of verified lifecycle events.
var ServerEventNames = []string{"identified", "install", "trial_started", "trial_converted", "paid", "qualified", "canceled", "churned", "refunded"}

// ServerEvent is a verified lifecycle event from the publisher's server, after validation.
type ServerEvent struct {
	EventID       string    `json:"eventId" jsonschema:"minLength=1"`
	SourceID      string    `json:"sourceId" jsonschema:"minLength=1"`
	WorkspaceID   string    `json:"workspaceId" jsonschema:"minLength=1"`
	AppID         string    `json:"appId" jsonschema:"minLength=1"`
	AcquisitionID string    `json:"acquisitionId,omitempty"`
	Name          string    `json:"name" jsonschema:"enum=identified,enum=install,enum=trial_started,enum=trial_converted,enum=paid,enum=qualified,enum=canceled,enum=churned,enum=refunded"`
	CustomerRef   string    `json:"customerRef,omitempty" jsonschema:"description=verified shop domain; never sent to the advertising platform"`
	AmountCents   *int64    `json:"amountCents,omitempty" jsonschema:"minimum=1,description=integer minor units"`
	Currency      string    `json:"currency,omitempty" jsonschema:"pattern=^[A-Z]{3}$"`
	OccurredAt    time.Time `json:"occurredAt" jsonschema:"description=at most 172 days before receivedAt and never later than 2106-02-07T06:28:15Z (schemas/event_time.go)"`
	ReceivedAt    time.Time `json:"receivedAt" jsonschema:"description=the edge's clock at receipt: 1970-01-01T00:00:00Z to 2106-02-07T06:28:15Z"`
}

// SessionState is the sessionizer's state for one browser of one source.
type SessionState struct {
	SourceID       string    `json:"sourceId" jsonschema:"minLength=1"`
	WorkspaceID    string    `json:"workspaceId" jsonschema:"minLength=1"`
	AcquisitionID  string    `json:"acquisitionId" jsonschema:"minLength=1"`
	SessionID      string    `json:"sessionId" jsonschema:"minLength=1"`
	StartedAt      time.Time `json:"startedAt"`
	LastEventAt    time.Time `json:"lastEventAt"`
	EventCount     uint32    `json:"eventCount"`
	PageViewCount  uint32    `json:"pageViewCount"`
	EntryURL       string    `json:"entryUrl,omitempty"`
	ExitURL        string    `json:"exitUrl,omitempty"`
	Referrer       string    `json:"referrer,omitempty"`
	Returning      bool      `json:"returning"`
	SessionOrdinal uint32    `json:"sessionOrdinal" jsonschema:"minimum=1"`
}

// AcquisitionLink joins a browser's acquisition ID to a verified shop.
type AcquisitionLink struct {
	SourceID      string    `json:"sourceId" jsonschema:"minLength=1"`
	WorkspaceID   string    `json:"workspaceId" jsonschema:"minLength=1"`
	AppID         string    `json:"appId" jsonschema:"minLength=1"`
	AcquisitionID string    `json:"acquisitionId" jsonschema:"minLength=1"`
	ShopDomain    string    `json:"shopDomain" jsonschema:"minLength=1"`
	FirstEventID  string    `json:"firstEventId" jsonschema:"minLength=1"`
	LinkedAt      time.Time `json:"linkedAt"`
}
