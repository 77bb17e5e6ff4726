package uploader

import "strings"

// Diagnosis is which of the upload diagnostics (docs/ADS_UPLOAD.md, "Diagnostics on the row") a
// row's state and reason codes point to, with what to check. The platform's reason codes stay on
// the row as sent; this only groups them so a user sees what to fix without knowing Google's
// vocabulary.
type Diagnosis struct {
	// Code is invalid_click_id, no_consent, duplicate_transaction, wrong_account, unattributed,
	// event_window (not uploaded: before the mapping or outside the platform's window),
	// outcome_unknown (accepted, but its diagnostics can no longer be read) or other.
	Code string `json:"code"`
	Hint string `json:"hint"`
}

// Diagnosis codes.
const (
	DiagnosisInvalidClickID       = "invalid_click_id"
	DiagnosisNoConsent            = "no_consent"
	DiagnosisDuplicateTransaction = "duplicate_transaction"
	DiagnosisWrongAccount         = "wrong_account"
	DiagnosisUnattributed         = "unattributed"
	DiagnosisEventWindow          = "event_window"
	DiagnosisOutcomeUnknown       = "outcome_unknown"
	DiagnosisOther                = "other"
)

var diagnosisHints = map[string]string{
	DiagnosisInvalidClickID: "the click ID is not one the platform can attribute: only genuine clicks on the advertiser's " +
		"Google Ads campaigns are eligible, and the conversion must follow the click within the action's window",
	DiagnosisNoConsent: "the platform has no consent for this data: confirm consent and the processing policy on the " +
		"mapping and the account's customer-data terms",
	DiagnosisDuplicateTransaction: "the platform already has this conversion: each event needs one stable event ID and " +
		"one mapping per conversion action",
	DiagnosisWrongAccount: "check the conversion customer ID, the manager login customer ID and the numeric conversion " +
		"action ID: the click must belong to the conversion customer and the action must be a click-import action it owns",
	DiagnosisUnattributed: "no supported click ID (gclid, gbraid or wbraid) was captured for the event's acquisition ID: " +
		"check that tracker.js runs on the landing page and that the server event carries the same acquisition ID",
	DiagnosisEventWindow: "not uploaded: the event happened before the mapping existed, or outside the platform's window",
	DiagnosisOutcomeUnknown: "the platform accepted the upload, but the advertising connection was disconnected before its " +
		"diagnostics could be read, so revtrack cannot tell whether the conversion was applied or rejected: look the conversion " +
		"up in Google Ads (Goals → Conversions → the action's uploads); the row is not resent, since that could count it twice",
	DiagnosisOther: "see the reason codes and the message",
}

// reasonDiagnoses maps reason codes (without Google's PROCESSING_ERROR_REASON_ / PROCESSING_ERROR_
// prefixes) to a diagnosis; the first code of a row that maps wins.
var reasonDiagnoses = map[string]string{
	ReasonInvalidClickIDField: DiagnosisInvalidClickID,
	"INVALID_GCLID":           DiagnosisInvalidClickID, "INVALID_GBRAID": DiagnosisInvalidClickID, "INVALID_WBRAID": DiagnosisInvalidClickID,
	"INVALID_CLICK": DiagnosisInvalidClickID, "CLICK_NOT_FOUND": DiagnosisInvalidClickID, "INVALID_AD_IDENTIFIERS": DiagnosisInvalidClickID,
	"CONVERSION_PRECEDES_CLICK": DiagnosisInvalidClickID, "TOO_RECENT_CLICK": DiagnosisInvalidClickID,
	"ONE_PER_CLICK_CONVERSION_ACTION_NOT_PERMITTED_WITH_BRAID": DiagnosisInvalidClickID,
	"DENIED_CONSENT": DiagnosisNoConsent, "NO_CONSENT": DiagnosisNoConsent, "UNKNOWN_CONSENT": DiagnosisNoConsent,
	"TERMS_AND_CONDITIONS_NOT_SIGNED":                           DiagnosisNoConsent,
	"DESTINATION_ACCOUNT_ENHANCED_CONVERSIONS_TERMS_NOT_SIGNED": DiagnosisNoConsent,
	"DUPLICATE_TRANSACTION_ID":                                  DiagnosisDuplicateTransaction, "DUPLICATE_GCLID": DiagnosisDuplicateTransaction,
	"INVALID_OPERATING_ACCOUNT_FOR_CLICK": DiagnosisWrongAccount, "OPERATING_ACCOUNT_MISMATCH_FOR_AD_IDENTIFIER": DiagnosisWrongAccount,
	"INVALID_CONVERSION_ACTION_ID": DiagnosisWrongAccount, "INVALID_CONVERSION_ACTION_TYPE": DiagnosisWrongAccount,
	"INVALID_DESTINATION": DiagnosisWrongAccount, "OPERATING_ACCOUNT_LOGIN_ACCOUNT_MISMATCH": DiagnosisWrongAccount,
	"DESTINATION_ACCOUNT_TYPE_MISMATCH": DiagnosisWrongAccount, "PERMISSION_DENIED": DiagnosisWrongAccount,
	"NOT_FOUND": DiagnosisWrongAccount, "EVENT_SOURCE_AND_DESTINATION_MISMATCH": DiagnosisWrongAccount,
	ReasonEventBeforeMapping: DiagnosisEventWindow, ReasonEventOutsideWindow: DiagnosisEventWindow,
	"EVENT_TOO_OLD": DiagnosisEventWindow, "EVENT_TIME_INVALID": DiagnosisEventWindow,
	ReasonProcessingFailedWithoutDetails: DiagnosisOther,
	ReasonConnectionDisconnected:         DiagnosisOutcomeUnknown,
}

// reasonHints replace the diagnosis' hint for codes that say more than their group.
var reasonHints = map[string]string{
	ReasonProcessingFailedWithoutDetails: "the platform reported that processing failed without saying why: check the " +
		"conversion action's diagnostics in Google Ads (Goals → Conversions) and that the click belongs to the conversion " +
		"customer, then Retry the row",
}

// Diagnose returns the row's diagnosis: unattributed rows always have one, other rows when they
// carry reason codes; nil for a row with nothing to diagnose.
func Diagnose(r Row) *Diagnosis {
	if r.Status == StatusUnattributed {
		return newDiagnosis(DiagnosisUnattributed)
	}
	if r.DiagnosticsStatus == DiagnosticsOutcomeUnknown {
		return newDiagnosis(DiagnosisOutcomeUnknown)
	}
	if len(r.ReasonCodes) == 0 {
		return nil
	}
	for _, code := range r.ReasonCodes {
		c := strings.TrimPrefix(strings.TrimPrefix(code, "PROCESSING_ERROR_REASON_"), "PROCESSING_ERROR_")
		if d, ok := reasonDiagnoses[c]; ok {
			diag := newDiagnosis(d)
			if h, ok := reasonHints[c]; ok {
				diag.Hint = h
			}
			return diag
		}
	}
	return newDiagnosis(DiagnosisOther)
}

func newDiagnosis(code string) *Diagnosis { return &Diagnosis{Code: code, Hint: diagnosisHints[code]} }

// withDiagnoses fills the diagnosis of every row.
func withDiagnoses(rows []Row) []Row {
	for i := range rows {
		rows[i].Diagnosis = Diagnose(rows[i])
	}
	return rows
}
