package uploader

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/uploader/google"
)

func ptr[T any](v T) *T { return &v }

func sendableRows() []Row {
	at := time.Date(2026, 11, 20, 12, 3, 22, 500_000_000, time.UTC)
	return []Row{
		{RowID: "uq_1", ClickIDType: "gclid", ClickID: "Cj0KCQ-gclid", EventTime: at, TransactionID: "rt-1",
			ValueCents: ptr(int64(4900)), Currency: "USD", SourceID: "src-1", EventIDHash: strings.Repeat("a", 64),
			AcquisitionID: "acq-shop.example", WorkspaceID: "ws-1"},
		{RowID: "uq_2", ClickIDType: "gbraid", ClickID: "0AAAA-gbraid", EventTime: at, TransactionID: "rt-2",
			ValueCents: ptr(int64(500)), Currency: "JPY"},
		{RowID: "uq_3", ClickIDType: "wbraid", ClickID: "CkAAA-wbraid", EventTime: at, TransactionID: "rt-3"},
	}
}

// TestBuildRequestGolden records the events:ingest body the dispatcher sends (a contract surface):
// destination accounts, click IDs nested by type, RFC 3339 times, values in major units by the
// currency's exponent, IN_STORE, granted consent, validateOnly as the dispatcher chose it.
func TestBuildRequestGolden(t *testing.T) {
	conn := controlplane.AdConnection{WorkspaceID: "ws-1", ConnectionID: "c-1", State: controlplane.AdStateConnected,
		ConversionCustomerID: "1234567890", LoginCustomerID: "9876543210"}
	m := controlplane.AdMapping{MappingID: "m-1", ConnectionID: "c-1", ConversionActionID: "7723667020",
		ConsentConfirmed: true, ValidationOnly: true, Enabled: true}
	req := buildRequest(conn, m, sendableRows(), "IN_STORE", true)
	b, err := json.MarshalIndent(req, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	testenv.Golden(t, "testdata/ingest_request.golden.json", append(b, '\n'))
	for _, leak := range []string{"acq-shop.example", "src-1", strings.Repeat("a", 64), "ws-1", "uq_1", "@"} {
		if strings.Contains(string(b), leak) {
			t.Fatalf("the request carries %q", leak)
		}
	}

	// Direct access: no login account. A fixed value replaces the event's.
	conn.LoginCustomerID = conn.ConversionCustomerID
	m.FixedValueCents, m.FixedCurrency, m.ValidationOnly = ptr(int64(1234)), "KWD", false
	req = buildRequest(conn, m, sendableRows()[:1], "IN_STORE", false)
	if d := req.Destinations[0]; d.LoginAccount != nil || req.ValidateOnly {
		t.Fatalf("destination %+v validateOnly %v", d, req.ValidateOnly)
	}
	if e := req.Events[0]; *e.ConversionValue != 1.234 || e.Currency != "KWD" {
		t.Fatalf("fixed value %v %s", *e.ConversionValue, e.Currency)
	}
}

func TestBlockedReasons(t *testing.T) {
	conn := controlplane.AdConnection{ConnectionID: "c-1", State: controlplane.AdStateConnected, ConversionCustomerID: "1234567890"}
	m := controlplane.AdMapping{ConnectionID: "c-1", ConversionActionID: "1", ConsentConfirmed: true, Enabled: true}
	if r := blocked(conn, true, m); r != "" {
		t.Fatalf("sendable mapping blocked: %s", r)
	}
	for name, c := range map[string]struct {
		found bool
		conn  func(*controlplane.AdConnection)
		m     func(*controlplane.AdMapping)
		want  string
	}{
		"never connected":           {false, nil, nil, "disconnected"},
		"disconnected":              {true, func(c *controlplane.AdConnection) { c.State = controlplane.AdStateDisconnected }, nil, "disconnected"},
		"no account":                {true, func(c *controlplane.AdConnection) { c.ConversionCustomerID = "" }, nil, "conversion customer"},
		"mapping of old connection": {true, nil, func(m *controlplane.AdMapping) { m.ConnectionID = "c-0" }, "earlier"},
		"disabled":                  {true, nil, func(m *controlplane.AdMapping) { m.Enabled, m.DisabledReason = false, "disabled by u" }, "disabled by u"},
		"account changed": {true, nil, func(m *controlplane.AdMapping) {
			m.Enabled, m.DisabledReason, m.DisabledCause = false, "account changed", controlplane.AdDisabledByAccountChange
		}, "cannot be re-enabled: create a new mapping"},
		"no consent": {true, nil, func(m *controlplane.AdMapping) { m.ConsentConfirmed = false }, "consent"},
	} {
		cc, mm := conn, m
		if c.conn != nil {
			c.conn(&cc)
		}
		if c.m != nil {
			c.m(&mm)
		}
		if r := blocked(cc, c.found, mm); !strings.Contains(r, c.want) || !strings.HasPrefix(r, "waiting:") {
			t.Errorf("%s: %q", name, r)
		}
	}
}

func TestBackoff(t *testing.T) {
	b := backoff{base: time.Second, max: time.Hour, quota: time.Minute, jitter: func(d time.Duration) time.Duration { return d }}
	for attempts, want := range map[uint16]time.Duration{1: time.Second, 2: 2 * time.Second, 5: 16 * time.Second,
		12: 2048 * time.Second, 13: time.Hour, 60: time.Hour, 0: time.Hour} {
		if got := b.transient(attempts); got != want {
			t.Errorf("attempt %d: %s, want %s", attempts, got, want)
		}
	}
	b.jitter = nil
	for range 100 {
		if d := b.transient(3); d < 0 || d > 4*time.Second {
			t.Fatalf("full jitter out of [0, 4s]: %s", d)
		}
	}
	// RetryInfo is honoured as given (docs/ADS_UPLOAD.md, "Retries"), with a floor against a zero delay;
	// without one the quota wait applies.
	for name, c := range map[string]struct {
		err  error
		want time.Duration
	}{
		"shorter than the quota wait": {&google.APIError{HTTPStatus: 429, RetryAfter: 30 * time.Second}, 30 * time.Second},
		"longer":                      {&google.APIError{HTTPStatus: 429, RetryAfter: 5 * time.Minute}, 5 * time.Minute},
		"tiny":                        {&google.APIError{HTTPStatus: 429, RetryAfter: time.Millisecond}, time.Second},
		"none in the envelope":        {&google.APIError{HTTPStatus: 429}, time.Minute},
		"not an API error":            {errors.New("429"), time.Minute},
	} {
		if d := b.quotaWait(c.err); d != c.want {
			t.Errorf("%s: waits %s, want %s", name, d, c.want)
		}
	}
}

// TestRejectedByIndex: violations naming events reject only those rows; without indexes the
// whole request is rejected with the error's reason.
func TestRejectedByIndex(t *testing.T) {
	d := &dispatcher{}
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	rows := sendableRows()
	sent := sentWith{conn: controlplane.AdConnection{ConversionCustomerID: "1234567890"},
		mapping: controlplane.AdMapping{ConversionActionID: "7", ValidationOnly: true}, validateOnly: true, events: 3}
	err := &google.APIError{HTTPStatus: 400, Status: "INVALID_ARGUMENT", Message: "bad", Violations: []google.Violation{
		{Field: "events[1].ad_identifiers.gbraid", Reason: "INVALID_FORMAT", Description: "not a gbraid", EventIndex: 1},
		{Field: "events[1].event_timestamp", Reason: "EVENT_TIME_INVALID", Description: "too old", EventIndex: 1},
		{Field: "events[7]", Reason: "INVALID_FORMAT", EventIndex: 7}, // not an event of this request
	}}
	out := d.rejected(rows, sent, err, now)
	if len(out) != 1 || out[0].row.RowID != "uq_2" || out[0].row.Status != StatusRejected ||
		strings.Join(out[0].row.ReasonCodes, ",") != ReasonInvalidClickIDField+",INVALID_FORMAT,EVENT_TIME_INVALID" ||
		!strings.Contains(out[0].row.Message, "not a gbraid") || out[0].row.Attempts != 1 || !out[0].row.ValidationOnly {
		t.Fatalf("by index: %+v", out)
	}
	if d := Diagnose(out[0].row); d.Code != DiagnosisInvalidClickID {
		t.Fatalf("a violation of the gbraid field diagnosed %+v", d)
	}

	err = &google.APIError{HTTPStatus: 403, Status: "PERMISSION_DENIED", Reason: "PERMISSION_DENIED", Message: "caller lacks access"}
	out = d.rejected(rows, sent, err, now)
	if len(out) != 3 {
		t.Fatalf("whole request: %d rows", len(out))
	}
	for _, c := range out {
		if c.row.Status != StatusRejected || strings.Join(c.row.ReasonCodes, ",") != "PERMISSION_DENIED" ||
			!strings.Contains(c.row.Message, "caller lacks access") || c.row.ConversionCustomerID != "1234567890" {
			t.Fatalf("row %+v", c.row)
		}
	}
}
