package tracking

import (
	"fmt"

	"github.com/revtrack/revtrack/controlplane"
)

// refusalsHint replaces rejectionsHint once the edge's refusals are known (controlplane/refusals.go).
const refusalsHint = "Requests the ingest edge refuses (origin not allowed, tracking source unavailable) are not stored with the " +
	"events: the edge counts them per source for 7 days after the last one (refusals; under a flood of refusals the counts are " +
	"sampled), and revtrack_ingest_requests_total counts them by outcome."

// ApplyRefusals adds what the edge refused for the source, and with it answers the two conditions
// the stored events cannot: origin not allowed and tracking source unavailable.
func (t *Troubleshooting) ApplyRefusals(r controlplane.SourceRefusals) {
	t.Refusals = &r
	t.Hint = refusalsHint
	var origins, keys int64
	for _, o := range r.Origins {
		origins += o.Count
	}
	for _, k := range r.Keys {
		keys += k.Count
	}
	for i, c := range t.Conditions {
		switch c.Code {
		case ConditionOriginNotAllowed:
			t.Conditions[i] = Condition{Code: c.Code, Checked: true, Detected: origins > 0, Message: originMessage(origins, len(r.Origins))}
		case ConditionSourceUnavailable:
			t.Conditions[i] = Condition{Code: c.Code, Checked: true, Detected: keys > 0, Message: keysMessage(keys)}
		}
	}
}

func originMessage(n int64, distinct int) string {
	if n == 0 {
		return "No browser request with this source's key was refused for its origin in the last 7 days."
	}
	return fmt.Sprintf("%s from %s the source does not allow in the last 7 days (refusals.origins): the page's origin must "+
		"match an allowed origin exactly (scheme, host and port).", plural(n, "browser request"), plural(int64(distinct), "origin"))
}

func keysMessage(n int64) string {
	if n == 0 {
		return "No request was refused in the last 7 days for a rotated key, a private key that does not match or a disabled source."
	}
	return fmt.Sprintf("%s refused in the last 7 days (refusals.keys): a key was rotated (update data-key and the "+
		"server's publicKey or private key) or the source is disabled.", plural(n, "request"))
}

func plural(n int64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
