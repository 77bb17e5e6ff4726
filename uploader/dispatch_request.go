package uploader

import (
	"math"
	"time"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/uploader/google"

	"github.com/revtrack/revtrack/schemas"
)

// buildRequest is the events:ingest request for rows of one mapping (google.IngestRequest, whose wire
// form is uploader/google/testdata/ingest_request.golden.json). It carries exactly the allow-list of
// docs/ADS_UPLOAD.md, "Consent": click ID, event time, conversion action, transaction ID, optional
// value and currency, the event source and consent; never the shop domain, an e-mail or the source
// event ID. Consent is granted on the strength of the mapping's consent confirmation, which the
// dispatcher checks before building a request. validateOnly is the rows' mode
// (dispatcher.sendMapping), not necessarily the mapping's current flag.
func buildRequest(conn controlplane.AdConnection, m controlplane.AdMapping, rows []Row, eventSource string, validateOnly bool) google.IngestRequest {
	dest := google.Destination{
		OperatingAccount:     google.ProductAccount{AccountType: google.AccountTypeGoogleAds, AccountID: conn.ConversionCustomerID},
		ProductDestinationID: m.ConversionActionID,
	}
	// The login account is the manager through which the user reaches the conversion customer;
	// for direct access it stays unset.
	if conn.LoginCustomerID != "" && conn.LoginCustomerID != conn.ConversionCustomerID {
		dest.LoginAccount = &google.ProductAccount{AccountType: google.AccountTypeGoogleAds, AccountID: conn.LoginCustomerID}
	}
	events := make([]google.Event, len(rows))
	for i, r := range rows {
		e := google.Event{
			EventTimestamp: r.EventTime.UTC().Format(time.RFC3339),
			TransactionID:  r.TransactionID,
			EventSource:    eventSource,
		}
		switch r.ClickIDType {
		case "gclid":
			e.AdIdentifiers.Gclid = r.ClickID
		case "gbraid":
			e.AdIdentifiers.Gbraid = r.ClickID
		case "wbraid":
			e.AdIdentifiers.Wbraid = r.ClickID
		}
		if cents, currency, ok := conversionValue(m, r); ok {
			v := units(cents, currency)
			e.ConversionValue, e.Currency = &v, currency
		}
		events[i] = e
	}
	return google.IngestRequest{
		Destinations: []google.Destination{dest},
		Events:       events,
		Consent:      &google.Consent{AdUserData: google.ConsentGranted, AdPersonalization: google.ConsentGranted},
		ValidateOnly: validateOnly,
	}
}

// conversionValue is the mapping's fixed value when it has one, else the event's own value.
func conversionValue(m controlplane.AdMapping, r Row) (int64, string, bool) {
	if m.FixedValueCents != nil && m.FixedCurrency != "" {
		return *m.FixedValueCents, m.FixedCurrency, true
	}
	if r.ValueCents != nil && r.Currency != "" {
		return *r.ValueCents, r.Currency, true
	}
	return 0, "", false
}

// units converts minor units to the currency's major unit (4900 USD → 49, 500 JPY → 500).
func units(cents int64, currency string) float64 {
	return float64(cents) / math.Pow10(schemas.MinorExponent(currency))
}

// blocked says why rows of mapping m cannot be sent now, or "" when they can. Rows wait (their
// state unchanged) until the cause is fixed: no upload happens after a disconnect, for a disabled
// mapping, or for a mapping of an earlier connection.
func blocked(conn controlplane.AdConnection, found bool, m controlplane.AdMapping) string {
	switch {
	case !found || !conn.Connected():
		return "waiting: the advertising connection is disconnected; connect and map again to upload"
	case conn.ConversionCustomerID == "":
		return "waiting: no conversion customer is selected for the advertising connection"
	case m.ConnectionID != "" && m.ConnectionID != conn.ConnectionID:
		return "waiting: the mapping belongs to an earlier advertising connection and cannot be re-enabled; create a new mapping"
	case !m.Enabled:
		msg := "waiting: the mapping is disabled"
		if m.DisabledReason != "" {
			msg += " (" + m.DisabledReason + ")"
		}
		if m.Retired() {
			msg += "; it cannot be re-enabled: create a new mapping"
		}
		return msg
	case !m.ConsentConfirmed:
		return "waiting: the mapping's consent and processing-policy confirmation is missing"
	case m.ConversionActionID == "":
		return "waiting: the mapping has no conversion action"
	}
	return ""
}
