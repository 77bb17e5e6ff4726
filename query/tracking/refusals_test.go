package tracking

import (
	"strings"
	"testing"
	"time"

	"github.com/revtrack/revtrack/controlplane"
)

// TestApplyRefusalsAnswersTheEdgeConditions: with the edge's refusals, the two conditions the
// stored events cannot see are checked, detected from the counts and explained with them.
func TestApplyRefusalsAnswersTheEdgeConditions(t *testing.T) {
	base := func() Troubleshooting {
		return Troubleshooting{Hint: rejectionsHint, Conditions: []Condition{{Code: ConditionOriginNotAllowed}, {Code: ConditionSourceUnavailable},
			{Code: ConditionNoPageView, Checked: true, Detected: true, Message: "kept"}, {Code: ConditionNoLifecycleEvent, Checked: true}}}
	}
	at := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	st := base()
	st.ApplyRefusals(controlplane.SourceRefusals{Since: at.Add(-controlplane.RefusalWindow), Origins: []controlplane.RefusedOrigin{}, Keys: []controlplane.RefusedKey{}})
	if c := st.Conditions; !c[0].Checked || c[0].Detected || !c[1].Checked || c[1].Detected || st.Refusals == nil || st.Hint != refusalsHint {
		t.Fatalf("none refused: %+v", st)
	}
	st = base()
	st.ApplyRefusals(controlplane.SourceRefusals{Since: at.Add(-controlplane.RefusalWindow),
		Origins: []controlplane.RefusedOrigin{{Origin: "https://www.app.example", Count: 3, LastAt: at}, {Origin: "http://app.example", Count: 1, LastAt: at}},
		Keys:    []controlplane.RefusedKey{{Reason: controlplane.RefusedPublicKeyRotated, Count: 2, LastAt: at}}})
	c := st.Conditions
	if !c[0].Detected || !strings.HasPrefix(c[0].Message, "4 browser requests from 2 origins") || !c[1].Detected || !strings.HasPrefix(c[1].Message, "2 requests refused") {
		t.Fatalf("refused: %+v", c)
	}
	if c[2].Message != "kept" || !c[2].Detected {
		t.Fatalf("the stored events' conditions change: %+v", c[2])
	}
}
