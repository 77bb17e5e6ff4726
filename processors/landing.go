package processors

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/schemas"
)

// validator is what every landed message type implements.
type validator interface{ Validate() error }

// decodeJSON decodes a record value into T and checks its contract.
func decodeJSON[T validator](r *kgo.Record) (T, error) {
	var v T
	if err := json.Unmarshal(r.Value, &v); err != nil {
		return v, fmt.Errorf("decode %s: %w", r.Topic, err)
	}
	return v, v.Validate()
}

func utc(t time.Time) (time.Time, uint16) {
	t = t.UTC()
	return t.Truncate(time.Second), uint16(t.Nanosecond() / int(time.Millisecond))
}

func serverEventRow(e schemas.ServerEvent) []any {
	at, ms := utc(e.OccurredAt)
	return []any{e.EventID, e.SourceID, e.WorkspaceID, e.AppID, e.AcquisitionID, e.Name,
		e.CustomerRef, e.AmountCents, e.Currency, at, ms, e.ReceivedAt.UTC()}
}

func browserEventRow(e schemas.BrowserEvent) []any {
	at, ms := utc(e.OccurredAt)
	ft := e.FirstTouch
	var p schemas.PlatformContext
	if e.Platform != nil {
		p = *e.Platform
	}
	props := string(e.Properties)
	if props == "" {
		props = "{}"
	}
	return []any{e.EventID, e.SourceID, e.WorkspaceID, e.AppID, e.AcquisitionID,
		e.SessionID, e.Name, at, ms, e.ReceivedAt.UTC(), e.URL, e.Path, e.Title, e.Referrer, boolByte(e.Returning), ft.TrackerRef,
		ft.UTMSource, ft.UTMMedium, ft.UTMCampaign, ft.UTMTerm, ft.UTMContent, ft.Gclid, ft.Gbraid,
		ft.Wbraid, ft.LandingURL, ft.Referrer, p.Shop, p.UserID, p.IdentitySource,
		props, e.UserAgent}
}

func boolByte(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}
