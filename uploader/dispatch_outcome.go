package uploader

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/uploader/google"
)

// msgReconnect is the message of rows that wait because the platform refuses the credential.
const msgReconnect = "waiting: the advertising connection needs to be reconnected (the platform refused its credential)"

// sentWith is what a request was sent with, recorded on its rows.
type sentWith struct {
	conn         controlplane.AdConnection
	mapping      controlplane.AdMapping
	validateOnly bool
	events       int
}

// attempt is r's next version after an ingestion attempt at now: attempts counted, the request's
// destination and mode recorded (a row once sent validate-only stays so, see validateOnly), the
// previous outcome cleared.
func attempt(r Row, s sentWith, now time.Time) Row {
	n := advance(r, now)
	n.Attempts++
	n.ValidationOnly = s.validateOnly
	n.ConversionCustomerID = s.conn.ConversionCustomerID
	n.LoginCustomerID = s.conn.LoginCustomerID
	n.ConversionActionID = s.mapping.ConversionActionID
	n.RequestEvents = uint32(s.events)
	n.RequestID, n.ReasonCodes, n.Message = "", []string{}, ""
	n.NextAttemptAt, n.PollAttempts, n.DiagnosticsStatus = nil, 0, ""
	return n
}

// succeeded: validated (Validation only) or accepted with diagnostics due after DiagnosticsDelay.
// Field warnings are kept in the message of the row they name (or of every row).
func (d *dispatcher) succeeded(batch []Row, s sentWith, resp google.IngestResponse, now time.Time) []change {
	warnings := make([][]string, len(batch))
	for _, w := range resp.FieldWarnings {
		text := fmt.Sprintf("warning %s (%s): %s", w.Reason, w.Field, w.Description)
		if w.EventIndex >= 0 && w.EventIndex < len(batch) {
			warnings[w.EventIndex] = append(warnings[w.EventIndex], text)
			continue
		}
		for i := range warnings {
			warnings[i] = append(warnings[i], text)
		}
	}
	out := make([]change, len(batch))
	for i, r := range batch {
		n := attempt(r, s, now)
		n.RequestID = resp.RequestID
		n.Message = strings.Join(warnings[i], "; ")
		switch {
		case s.validateOnly:
			// Never polled: the platform keeps no status for a validate-only request.
			n.Status = StatusValidated
		case resp.RequestID == "":
			n.Status, n.DiagnosticsStatus = StatusAccepted, DiagnosticsUnavailable
			n.Message = joinMessage("accepted without a request ID; diagnostics unavailable", n.Message)
		default:
			n.Status = StatusAccepted
			due := now.Add(d.cfg.DiagnosticsDelay)
			n.NextAttemptAt = &due
		}
		if r.Attempts == 0 {
			d.metrics.firstOutcome(r.CreatedAt, now)
		}
		out[i] = change{from: r.Status, row: n}
	}
	return out
}

// retrying schedules rows for another attempt after wait.
func (d *dispatcher) retrying(batch []Row, s sentWith, now time.Time, wait time.Duration, msg string) []change {
	out := make([]change, len(batch))
	for i, r := range batch {
		n := attempt(r, s, now)
		n.Status = StatusRetrying
		next := now.Add(wait)
		n.NextAttemptAt, n.Message = &next, msg
		out[i] = change{from: r.Status, row: n}
	}
	return out
}

// unauthenticated keeps the rows' state (a credential problem is not the event's fault, and
// rejecting would need a user Retry per row after the reconnect) and retries later with backoff.
func (d *dispatcher) unauthenticated(batch []Row, now time.Time) []change {
	out := make([]change, len(batch))
	for i, r := range batch {
		n := advance(r, now)
		n.Attempts++
		next := now.Add(d.backoff.transient(n.Attempts))
		n.NextAttemptAt, n.Message = &next, msgReconnect
		out[i] = change{from: r.Status, row: n}
	}
	return out
}

// rejected applies a permanent error. When its violations name events of the request, only those
// rows are rejected (with the violations' reasons); the platform processed nothing (fast-fail), so
// the other rows stay as they are and go in the next round's request. Otherwise every row of the
// request is rejected with the error's reason.
func (d *dispatcher) rejected(batch []Row, s sentWith, err error, now time.Time) []change {
	var apiErr *google.APIError
	errors.As(err, &apiErr)
	byIndex := map[int][]google.Violation{}
	if apiErr != nil {
		for _, v := range apiErr.Violations {
			if v.EventIndex >= 0 && v.EventIndex < len(batch) {
				byIndex[v.EventIndex] = append(byIndex[v.EventIndex], v)
			}
		}
	}
	reject := func(r Row, codes []string, msg string) change {
		n := attempt(r, s, now)
		n.Status, n.ReasonCodes, n.Message = StatusRejected, codes, msg
		if r.Attempts == 0 {
			d.metrics.firstOutcome(r.CreatedAt, now)
		}
		return change{from: r.Status, row: n}
	}
	var out []change
	if len(byIndex) > 0 {
		idx := make([]int, 0, len(byIndex))
		for i := range byIndex {
			idx = append(idx, i)
		}
		sort.Ints(idx)
		for _, i := range idx {
			var texts []string
			for _, v := range byIndex[i] {
				texts = append(texts, strings.TrimSpace(v.Field+": "+v.Description))
			}
			codes := violationCodes(byIndex[i])
			out = append(out, reject(batch[i], codes, "rejected by the platform: "+strings.Join(texts, "; ")))
		}
		return out
	}
	codes, msg := []string{}, errMessage(err)
	if apiErr != nil {
		codes = violationCodes(apiErr.Violations)
		if len(codes) == 0 {
			codes = appendUnique(codes, apiErr.Reason)
		}
		if len(codes) == 0 {
			codes = appendUnique(codes, apiErr.Status)
		}
	}
	for _, r := range batch {
		out = append(out, reject(r, codes, "rejected by the platform: "+msg))
	}
	return out
}

// clickFieldRe matches a field path naming an event's click ID, in the snake_case Google writes and
// the camelCase of the JSON body: "events[0].ad_identifiers.gclid", "events.events[2].adIdentifiers.wbraid".
var clickFieldRe = regexp.MustCompile(`(?i)\bad_?identifiers\.(gclid|gbraid|wbraid)\b`)

// violationCodes are the violations' reasons as sent, after ReasonInvalidClickIDField when one of
// them names a click-ID field: the platform's reason (INVALID_FORMAT, REQUIRED_FIELD_MISSING, …)
// alone does not say that the click ID is what it refused, and the diagnosis reads codes only
// (the first that maps wins; without a valid click ID nothing else matters).
func violationCodes(vs []google.Violation) []string {
	codes := []string{}
	for _, v := range vs {
		if clickFieldRe.MatchString(v.Field) {
			codes = append(codes, ReasonInvalidClickIDField)
			break
		}
	}
	for _, v := range vs {
		codes = appendUnique(codes, v.Reason)
	}
	return codes
}

func appendUnique(list []string, s string) []string {
	if s == "" {
		return list
	}
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

func joinMessage(parts ...string) string {
	var keep []string
	for _, p := range parts {
		if p != "" {
			keep = append(keep, p)
		}
	}
	return strings.Join(keep, "; ")
}

// errMessage is the platform's message when it sent one.
func errMessage(err error) string {
	var apiErr *google.APIError
	if errors.As(err, &apiErr) && apiErr.Message != "" {
		return apiErr.Message
	}
	return err.Error()
}

// backoff is the retry policy (docs/ADS_UPLOAD.md, "Retries"): exponential with full jitter for
// transient failures; a 429 waits for the platform's RetryInfo / Retry-After as given (at least
// minQuotaWait), or quota when it gave none.
type backoff struct {
	base, max, quota time.Duration
	// jitter returns a duration in [0, d]; nil uses math/rand.
	jitter func(d time.Duration) time.Duration
}

// minQuotaWait guards against a zero or tiny RetryInfo: the platform would only refuse again.
const minQuotaWait = time.Second

// transient is the wait before attempt number attempts+1: uniformly random up to
// min(max, base·2^(attempts-1)).
func (b backoff) transient(attempts uint16) time.Duration {
	ceil := b.max
	if attempts > 0 && attempts <= 40 {
		if c := b.base << (attempts - 1); c > 0 && c < b.max {
			ceil = c
		}
	}
	if b.jitter != nil {
		return b.jitter(ceil)
	}
	return time.Duration(rand.Int64N(int64(ceil) + 1))
}

// quotaWait is the wait after a 429: the platform's RetryInfo / Retry-After when it sent one, else
// the configured quota wait (60 s).
func (b backoff) quotaWait(err error) time.Duration {
	var apiErr *google.APIError
	if errors.As(err, &apiErr) && apiErr.RetryAfter > 0 {
		return max(apiErr.RetryAfter, minQuotaWait)
	}
	return b.quota
}
