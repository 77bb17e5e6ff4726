package googlefake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"golang.org/x/text/currency"
)

// Limits of one events:ingest request.
const (
	maxDestinations = 10
	maxEvents       = 2000
)

const (
	methodIngest   = "google.ads.datamanager.v1.IngestionService.IngestEvents"
	methodRetrieve = "google.ads.datamanager.v1.IngestionService.RetrieveRequestStatus"
)

// Wire types of the request after decodeStrict (JSON names only).
type wireAccount struct {
	AccountType string `json:"accountType,omitempty"`
	AccountID   string `json:"accountId,omitempty"`
}

type wireDestination struct {
	OperatingAccount     *wireAccount `json:"operatingAccount,omitempty"`
	LoginAccount         *wireAccount `json:"loginAccount,omitempty"`
	LinkedAccount        *wireAccount `json:"linkedAccount,omitempty"`
	ProductDestinationID string       `json:"productDestinationId,omitempty"`
	Reference            string       `json:"reference,omitempty"`
}

type wireConsent struct {
	AdUserData        string `json:"adUserData,omitempty"`
	AdPersonalization string `json:"adPersonalization,omitempty"`
}

type wireEvent struct {
	DestinationReferences []string        `json:"destinationReferences"`
	TransactionID         string          `json:"transactionId"`
	EventTimestamp        string          `json:"eventTimestamp"`
	LastUpdatedTimestamp  string          `json:"lastUpdatedTimestamp"`
	Consent               *wireConsent    `json:"consent"`
	AdIdentifiers         map[string]any  `json:"adIdentifiers"`
	UserData              json.RawMessage `json:"userData"`
	ThirdPartyUserData    json.RawMessage `json:"thirdPartyUserData"`
	CartData              json.RawMessage `json:"cartData"`
	Currency              string          `json:"currency"`
	EventSource           any             `json:"eventSource"`
}

type wireIngest struct {
	Destinations []wireDestination `json:"destinations"`
	Events       []wireEvent       `json:"events"`
	Consent      *wireConsent      `json:"consent"`
	ValidateOnly bool              `json:"validateOnly"`
	Encoding     any               `json:"encoding"`
}

// Enum values the fake accepts (proto3 JSON names).
var (
	accountTypes   = []string{"ACCOUNT_TYPE_UNSPECIFIED", "GOOGLE_ADS", "DISPLAY_VIDEO_PARTNER", "DISPLAY_VIDEO_ADVERTISER", "DATA_PARTNER", "GOOGLE_ANALYTICS_PROPERTY"}
	consentValues  = []string{"CONSENT_STATUS_UNSPECIFIED", "CONSENT_GRANTED", "CONSENT_DENIED"}
	eventSources   = []string{"EVENT_SOURCE_UNSPECIFIED", "WEB", "APP", "IN_STORE", "PHONE", "MESSAGE", "OTHER"}
	encodingValues = []string{"ENCODING_UNSPECIFIED", "HEX", "BASE64"}
	tenDigits      = regexp.MustCompile(`^[0-9]{10}$`)
	numeric        = regexp.MustCompile(`^[0-9]{1,19}$`)
	currencyCode   = regexp.MustCompile(`^[A-Z]{3}$`)
)

// ingestRecord is an accepted (non-validateOnly) request and its precomputed diagnostics.
type ingestRecord struct {
	id      string
	created time.Time
	dests   []*destOutcome
}

type destOutcome struct {
	dest     wireDestination
	records  int64
	errors   reasonCounts
	warnings reasonCounts
	// unexplained counts events that failed without a reason ("failed-…" click IDs): the platform
	// may report FAILED without error counts.
	unexplained int64
}

// reasonCounts keeps reasons in first-seen order so the response is deterministic.
type reasonCounts struct {
	order []string
	n     map[string]int64
}

func (r *reasonCounts) add(reason string) {
	if r.n == nil {
		r.n = map[string]int64{}
	}
	if _, ok := r.n[reason]; !ok {
		r.order = append(r.order, reason)
	}
	r.n[reason]++
}

func (r *reasonCounts) total() int64 {
	var t int64
	for _, n := range r.n {
		t += n
	}
	return t
}

func newRequestID() string { return "t-" + uuid.NewString() }

type ingestResponse struct {
	RequestID     string         `json:"requestId"`
	FieldWarnings []fieldWarning `json:"fieldWarnings,omitempty"`
}

type fieldWarning struct {
	Reason      string `json:"reason"`
	Description string `json:"description"`
	Field       string `json:"field"`
}

// fieldWarnings are the non-blocking problems Google reports with an accepted request; the fake
// knows the documented one for click conversions: cart data cannot go with gbraid or wbraid.
func fieldWarnings(req *wireIngest) []fieldWarning {
	var out []fieldWarning
	for i, e := range req.Events {
		braid := e.AdIdentifiers["gbraid"] != nil || e.AdIdentifiers["wbraid"] != nil
		if braid && len(e.CartData) > 0 {
			out = append(out, fieldWarning{Reason: "WARNING_REASON_CART_DATA_NOT_SUPPORTED_WITH_GBRAID_OR_WBRAID",
				Description: "Cart data is not supported with gbraid or wbraid and was ignored.", Field: fmt.Sprintf("events[%d].cart_data", i)})
		}
	}
	return out
}

// ingest is POST /v1/events:ingest.
func (f *Fake) ingest(w http.ResponseWriter, r *http.Request) {
	if !f.authenticate(w, r, scopeDataManager, methodIngest) {
		return
	}
	requestID := newRequestID()
	f.mu.Lock()
	status := f.failIngest.take()
	f.mu.Unlock()
	if status != 0 {
		f.scriptedError(w, status, serviceDataManager, requestID)
		return
	}
	body, _ := readBody(r)
	canon, perr := decodeStrict(body, ingestRequestMsg)
	if perr != nil {
		writeParseError(w, perr)
		return
	}
	var req wireIngest
	if err := json.Unmarshal(canon, &req); err != nil {
		writeParseError(w, &parseError{message: "Invalid JSON payload received. " + err.Error()})
		return
	}
	if v := validateIngest(&req); len(v) > 0 {
		writeInvalid(w, requestID, v)
		return
	}
	if f.cfg.CheckDestinations {
		if code, v := f.checkDestinations(req.Destinations); len(v) > 0 {
			writeEnvelope(w, code, msgBadRequest,
				newErrorInfo(canonicalStatus(code), serviceDataManager, map[string]string{"requestId": requestID}),
				newRequestInfo(requestID), newBadRequest(v))
			return
		}
	}
	if !req.ValidateOnly {
		f.accept(requestID, &req)
	}
	writeJSON(w, http.StatusOK, ingestResponse{RequestID: requestID, FieldWarnings: fieldWarnings(&req)})
}

func writeParseError(w http.ResponseWriter, perr *parseError) {
	writeEnvelope(w, http.StatusBadRequest, perr.message,
		newBadRequest([]fieldViolation{{Field: perr.path, Description: perr.message}}))
}

func writeInvalid(w http.ResponseWriter, requestID string, v []fieldViolation) {
	writeEnvelope(w, http.StatusBadRequest, msgBadRequest,
		newErrorInfo("INVALID_ARGUMENT", serviceDataManager, map[string]string{"requestId": requestID}),
		newRequestInfo(requestID), newBadRequest(v))
}

// validateIngest applies the documented fast-fail checks; any violation rejects the request.
// Field paths use the documented snake_case form with the "events.events[i]" prefix.
func validateIngest(req *wireIngest) []fieldViolation {
	var v []fieldViolation
	add := func(field, reason, desc string) {
		v = append(v, fieldViolation{Field: field, Description: desc, Reason: reason})
	}
	switch n := len(req.Destinations); {
	case n == 0:
		add("destinations", "REQUIRED_FIELD_MISSING", "At least one destination is required.")
	case n > maxDestinations:
		add("destinations", "TOO_MANY_DESTINATIONS", fmt.Sprintf("A request can have at most %d destinations.", maxDestinations))
	}
	refs := map[string]bool{}
	for i, d := range req.Destinations {
		p := fmt.Sprintf("destinations[%d]", i)
		if d.OperatingAccount == nil {
			add(p+".operating_account", "REQUIRED_FIELD_MISSING", "The operating account is required.")
		} else {
			checkAccount(add, p+".operating_account", d.OperatingAccount)
		}
		if d.LoginAccount != nil {
			checkAccount(add, p+".login_account", d.LoginAccount)
		}
		switch {
		case d.ProductDestinationID == "":
			add(p+".product_destination_id", "REQUIRED_FIELD_MISSING", "The product destination ID is required.")
		case !numeric.MatchString(d.ProductDestinationID):
			add(p+".product_destination_id", "INVALID_CONVERSION_ACTION_ID", "The conversion action ID must be the numeric ID, not a resource name.")
		}
		if d.Reference != "" {
			if refs[d.Reference] {
				add(p+".reference", "DUPLICATE_DESTINATION_REFERENCE", "Destination references must be unique within a request.")
			}
			refs[d.Reference] = true
		}
	}
	if req.Consent != nil {
		checkConsent(add, "consent", req.Consent)
	}
	if s, ok := req.Encoding.(string); ok && !slices.Contains(encodingValues, s) {
		add("encoding", "INVALID_ENUM_VALUE", fmt.Sprintf("Invalid encoding %q.", s))
	}
	switch n := len(req.Events); {
	case n == 0:
		add("events", "REQUIRED_FIELD_MISSING", "At least one event is required.")
	case n > maxEvents:
		add("events", "TOO_MANY_EVENTS", fmt.Sprintf("A request can have at most %d events.", maxEvents))
		return v
	}
	for i, e := range req.Events {
		p := fmt.Sprintf("events.events[%d]", i)
		checkEvent(add, p, &e, refs)
	}
	return v
}

func checkAccount(add func(field, reason, desc string), p string, a *wireAccount) {
	switch {
	case a.AccountType == "" || a.AccountType == "ACCOUNT_TYPE_UNSPECIFIED":
		add(p+".account_type", "REQUIRED_FIELD_MISSING", "The account type is required.")
	case !slices.Contains(accountTypes, a.AccountType):
		add(p+".account_type", "INVALID_ENUM_VALUE", fmt.Sprintf("Invalid account type %q.", a.AccountType))
	}
	switch {
	case a.AccountID == "":
		add(p+".account_id", "REQUIRED_FIELD_MISSING", "The account ID is required.")
	case a.AccountType == "GOOGLE_ADS" && !tenDigits.MatchString(a.AccountID):
		add(p+".account_id", "INVALID_NUMBER_FORMAT", "A Google Ads account ID must be 10 digits without hyphens.")
	}
}

func checkConsent(add func(field, reason, desc string), p string, c *wireConsent) {
	if c.AdUserData != "" && !slices.Contains(consentValues, c.AdUserData) {
		add(p+".ad_user_data", "INVALID_ENUM_VALUE", fmt.Sprintf("Invalid consent status %q.", c.AdUserData))
	}
	if c.AdPersonalization != "" && !slices.Contains(consentValues, c.AdPersonalization) {
		add(p+".ad_personalization", "INVALID_ENUM_VALUE", fmt.Sprintf("Invalid consent status %q.", c.AdPersonalization))
	}
}

func checkEvent(add func(field, reason, desc string), p string, e *wireEvent, refs map[string]bool) {
	switch {
	case e.EventTimestamp == "":
		add(p+".event_timestamp", "REQUIRED_FIELD_MISSING", "The event timestamp is required.")
	case !isRFC3339(e.EventTimestamp):
		add(p+".event_timestamp", "INVALID_FORMAT", "The event timestamp must be an RFC 3339 timestamp.")
	}
	if e.LastUpdatedTimestamp != "" && !isRFC3339(e.LastUpdatedTimestamp) {
		add(p+".last_updated_timestamp", "INVALID_FORMAT", "The last updated timestamp must be an RFC 3339 timestamp.")
	}
	if !hasIdentifier(e) {
		add(p, "NO_IDENTIFIERS_PROVIDED", "The event has no user data or ad identifiers.")
	}
	for _, key := range []string{"gclid", "gbraid", "wbraid"} {
		if id, _ := e.AdIdentifiers[key].(string); strings.HasPrefix(id, "invalid-") {
			add(p+".ad_identifiers."+key, "INVALID_FORMAT", fmt.Sprintf("The %s is not in a valid format.", key))
		}
	}
	if e.Currency != "" {
		if _, err := currency.ParseISO(e.Currency); err != nil || !currencyCode.MatchString(e.Currency) {
			add(p+".currency", "INVALID_CURRENCY_CODE", fmt.Sprintf("%q is not an ISO 4217 currency code.", e.Currency))
		}
	}
	if s, ok := e.EventSource.(string); ok && !slices.Contains(eventSources, s) {
		add(p+".event_source", "INVALID_ENUM_VALUE", fmt.Sprintf("Invalid event source %q.", s))
	}
	if e.Consent != nil {
		checkConsent(add, p+".consent", e.Consent)
	}
	for j, ref := range e.DestinationReferences {
		if !refs[ref] {
			add(fmt.Sprintf("%s.destination_references[%d]", p, j), "INVALID_DESTINATION", fmt.Sprintf("No destination has the reference %q.", ref))
		}
	}
}

func isRFC3339(s string) bool {
	_, err := time.Parse(time.RFC3339Nano, s)
	return err == nil
}

func hasIdentifier(e *wireEvent) bool {
	for _, v := range e.AdIdentifiers {
		if s, ok := v.(string); ok && s != "" {
			return true
		}
	}
	return len(e.UserData) > 2 || len(e.ThirdPartyUserData) > 2 // more than "{}"
}

// clickID is the event's first click ID, the one outcome scripting reads.
func clickID(e *wireEvent) string {
	for _, key := range []string{"gclid", "gbraid", "wbraid"} {
		if id, _ := e.AdIdentifiers[key].(string); id != "" {
			return id
		}
	}
	return ""
}

// scriptedReason reads "fake-<REASON>-…" (error) or "warn-<REASON>-…" (warning) from a click ID.
func scriptedReason(id, prefix string) string {
	rest, ok := strings.CutPrefix(id, prefix)
	if !ok {
		return ""
	}
	reason, _, _ := strings.Cut(rest, "-")
	return reason
}

func processingError(reason string) string {
	if strings.HasPrefix(reason, "PROCESSING_ERROR") {
		return reason
	}
	return "PROCESSING_ERROR_REASON_" + reason
}

func processingWarning(reason string) string {
	if strings.HasPrefix(reason, "PROCESSING_WARNING") {
		return reason
	}
	return "PROCESSING_WARNING_REASON_" + reason
}

// accept stores a live request with its diagnostics, decided now: scripted click IDs fail or warn,
// an already accepted transaction ID for the same conversion action is a duplicate, the rest
// succeeds and is remembered for deduplication.
func (f *Fake) accept(id string, req *wireIngest) {
	f.mu.Lock()
	defer f.mu.Unlock()
	rec := &ingestRecord{id: id, created: f.cfg.Now()}
	for _, d := range req.Destinations {
		rec.dests = append(rec.dests, &destOutcome{dest: d})
	}
	for i := range req.Events {
		e := &req.Events[i]
		for _, out := range rec.dests {
			if len(e.DestinationReferences) > 0 && !slices.Contains(e.DestinationReferences, out.dest.Reference) {
				continue
			}
			out.records++
			click := clickID(e)
			if strings.HasPrefix(click, "failed-") {
				out.unexplained++
				continue
			}
			if reason := scriptedReason(click, "fake-"); reason != "" {
				out.errors.add(processingError(reason))
				continue
			}
			if e.TransactionID != "" {
				key := out.dest.ProductDestinationID + "\x00" + e.TransactionID
				if f.transactions[key] {
					out.errors.add("PROCESSING_ERROR_REASON_DUPLICATE_TRANSACTION_ID")
					continue
				}
				f.transactions[key] = true
			}
			if reason := scriptedReason(click, "warn-"); reason != "" {
				out.warnings.add(processingWarning(reason))
			}
		}
	}
	f.ingests[id] = rec
}
