package uploader

import "testing"

// TestDiagnose: every diagnosis of docs/ADS_UPLOAD.md, "Diagnostics on the row", is reached from the
// platform's reason codes as they are stored (with or without Google's prefixes), unknown codes are
// "other".
func TestDiagnose(t *testing.T) {
	for _, tc := range []struct {
		status Status
		codes  []string
		want   string
	}{
		{StatusUnattributed, nil, DiagnosisUnattributed},
		{StatusRejected, []string{"PROCESSING_ERROR_REASON_CLICK_NOT_FOUND"}, DiagnosisInvalidClickID},
		{StatusRejected, []string{"INVALID_FORMAT", "INVALID_GCLID"}, DiagnosisInvalidClickID},
		{StatusRejected, []string{"PROCESSING_ERROR_REASON_DENIED_CONSENT"}, DiagnosisNoConsent},
		{StatusRejected, []string{"PROCESSING_ERROR_REASON_NO_CONSENT"}, DiagnosisNoConsent},
		{StatusAccepted, []string{"PROCESSING_ERROR_REASON_DUPLICATE_TRANSACTION_ID"}, DiagnosisDuplicateTransaction},
		{StatusRejected, []string{"PROCESSING_ERROR_REASON_INVALID_OPERATING_ACCOUNT_FOR_CLICK"}, DiagnosisWrongAccount},
		{StatusRejected, []string{"PROCESSING_ERROR_OPERATING_ACCOUNT_MISMATCH_FOR_AD_IDENTIFIER"}, DiagnosisWrongAccount},
		{StatusRejected, []string{"INVALID_CONVERSION_ACTION_ID"}, DiagnosisWrongAccount},
		{StatusRejected, []string{ReasonEventBeforeMapping}, DiagnosisEventWindow},
		{StatusRejected, []string{"PROCESSING_ERROR_REASON_EVENT_TOO_OLD"}, DiagnosisEventWindow},
		{StatusRejected, []string{"PROCESSING_ERROR_REASON_SOMETHING_NEW"}, DiagnosisOther},
		{StatusRejected, []string{ReasonInvalidClickIDField, "INVALID_FORMAT"}, DiagnosisInvalidClickID},
		{StatusRejected, []string{ReasonProcessingFailedWithoutDetails}, DiagnosisOther},
		{StatusAccepted, []string{ReasonConnectionDisconnected}, DiagnosisOutcomeUnknown},
		{StatusValidated, nil, ""},
		{StatusQueued, []string{}, ""},
	} {
		d := Diagnose(Row{Status: tc.status, ReasonCodes: tc.codes})
		got := ""
		if d != nil {
			got = d.Code
			if d.Hint == "" {
				t.Errorf("%v %v: diagnosis %s without a hint", tc.status, tc.codes, d.Code)
			}
		}
		if got != tc.want {
			t.Errorf("%v %v: diagnosis %q, want %q", tc.status, tc.codes, got, tc.want)
		}
	}
}

// TestDiagnoseFailedWithoutDetails: a failure the platform gave no reason for gets its own hint.
func TestDiagnoseFailedWithoutDetails(t *testing.T) {
	d := Diagnose(Row{Status: StatusRejected, ReasonCodes: []string{ReasonProcessingFailedWithoutDetails}})
	if d == nil || d.Hint == diagnosisHints[DiagnosisOther] || d.Hint != reasonHints[ReasonProcessingFailedWithoutDetails] {
		t.Fatalf("diagnosis %+v", d)
	}
}

// TestDiagnoseOutcomeUnknown: the diagnostics state alone is enough for the diagnosis, whatever
// codes the row kept from a partial success before.
func TestDiagnoseOutcomeUnknown(t *testing.T) {
	d := Diagnose(Row{Status: StatusAccepted, DiagnosticsStatus: DiagnosticsOutcomeUnknown, ReasonCodes: []string{"DUPLICATE_GCLID"}})
	if d == nil || d.Code != DiagnosisOutcomeUnknown {
		t.Fatalf("diagnosis %+v", d)
	}
}
