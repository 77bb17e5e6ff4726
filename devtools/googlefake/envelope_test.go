package googlefake_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/revtrack/revtrack/uploader/google"
)

// TestErrorEnvelopes pins the fake's error answers: they are what the clients are tested against.
func TestErrorEnvelopes(t *testing.T) {
	h := start(t)
	tok, refresh := h.token()
	adsOnly, _ := h.token(google.ScopeAdWords)
	dmOnly, _ := h.token(google.ScopeDataManager)

	golden(t, "ingest_401_missing", h.do(http.MethodPost, "/v1/events:ingest", http.Header{"Content-Type": {"application/json"}}, validBody))
	golden(t, "ingest_401_invalid", h.ingest("ya29.not-issued", validBody))
	golden(t, "ingest_403_scope", h.ingest(adsOnly, validBody))
	golden(t, "ingest_400_fast_fail", h.ingest(tok, strings.NewReplacer(
		`"Cj0KCQ-ok"`, `"invalid-1"`, `"EUR"`, `"EURO"`, `"1234567890"`, `"123-456-7890"`).Replace(validBody)))
	golden(t, "ingest_400_unknown_field", h.ingest(tok, strings.Replace(validBody, `"currency"`, `"currencyCode"`, 1)))
	golden(t, "ingest_400_wrong_type", h.ingest(tok, strings.Replace(validBody, `49.0`, `"forty-nine"`, 1)))
	h.fake.FailIngest(http.StatusTooManyRequests, 1)
	golden(t, "ingest_429", h.ingest(tok, validBody))
	h.fake.FailIngest(http.StatusServiceUnavailable, 1)
	golden(t, "ingest_503", h.ingest(tok, validBody))
	h.fake.FailIngest(http.StatusInternalServerError, 1)
	golden(t, "ingest_500", h.ingest(tok, validBody))
	golden(t, "retrieve_400_invalid_request_id", h.do(http.MethodGet, "/v1/requestStatus:retrieve?requestId=t-unknown", bearer(tok), ""))

	golden(t, "ads_401_invalid", h.do(http.MethodGet, "/v26/customers:listAccessibleCustomers", bearer("ya29.bogus"), ""))
	golden(t, "ads_403_scope", h.do(http.MethodGet, "/v26/customers:listAccessibleCustomers", bearer(dmOnly), ""))
	golden(t, "ads_403_permission", h.do(http.MethodPost, "/v26/customers/1234567890/googleAds:search", bearer(tok),
		`{"query":"SELECT conversion_action.id FROM conversion_action"}`))
	golden(t, "ads_400_query", h.do(http.MethodPost, "/v26/customers/9876543210/googleAds:search", bearer(tok),
		`{"query":"SELECT conversion_action.idd FROM conversion_action"}`))

	golden(t, "token_400_invalid_grant", h.form("/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"1//unknown"},
		"client_id": {"revtrack-local"}, "client_secret": {"revtrack-local-secret"}}))
	golden(t, "token_401_invalid_client", h.form("/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh},
		"client_id": {"revtrack-local"}, "client_secret": {"nope"}}))
	golden(t, "revoke_200", h.form("/revoke", url.Values{"token": {refresh}}))
	golden(t, "revoke_400_invalid_token", h.form("/revoke", url.Values{"token": {refresh}}))
}
