package tracking

import (
	"encoding/base64"
	"encoding/json"
	"strings"
)

// Page is one page of recent events and the cursor of the next ("" on the last page).
type Page struct {
	Events     []Event `json:"events"`
	NextCursor string  `json:"nextCursor"`
}

// Cursor is the position of the last event of a page in the listing's order: its time in epoch
// milliseconds, evidence, source and event ID. Keyset paging, so a page costs the same however deep
// it is and events that arrive meanwhile never shift the later pages.
type Cursor struct {
	AtMs     uint64 `json:"t"`
	Evidence string `json:"e"`
	SourceID string `json:"s"`
	EventID  string `json:"i"`
}

func cursorOf(ev Event) Cursor {
	return Cursor{AtMs: uint64(ev.OccurredAt.UnixMilli()), Evidence: ev.Evidence, SourceID: ev.SourceID, EventID: ev.EventID}
}

// String is the opaque form a client sends back (URL-safe base64 of JSON).
func (c Cursor) String() string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

// ParseCursor reads a cursor of EventsPage; anything else is an invalid filter.
func ParseCursor(s string) (*Cursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	var c Cursor
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err != nil || (c.Evidence != EvidenceBrowser && c.Evidence != EvidenceServer) || c.EventID == "" {
		return nil, invalid("cursor is not one this listing returned (pass nextCursor as it is)")
	}
	return &c, nil
}

// args appends the cursor's conditions to the browser (browser true) or server query.
func (c *Cursor) args(q *strings.Builder, browser bool) []any {
	if c == nil {
		return nil
	}
	q.WriteString(afterCoarse)
	args := []any{int64(c.AtMs / 1000)}
	own := (c.Evidence == EvidenceBrowser) == browser
	switch {
	case own:
		q.WriteString(afterSameEvidence)
		return append(args, c.AtMs, c.AtMs, c.SourceID, c.SourceID, c.EventID)
	case browser: // after a server event: browser events of the same instant came before it
		q.WriteString(afterServerCursor)
	default: // after a browser event: server events of the same instant follow it
		q.WriteString(afterBrowserCursor)
	}
	return append(args, c.AtMs)
}
