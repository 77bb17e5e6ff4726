package mcp

import (
	"context"
	"encoding/json"
	"net/url"

	"github.com/revtrack/revtrack/query/reporting"
)

// ComparePeriodsArgs are compare_periods' arguments.
type ComparePeriodsArgs struct {
	Current  CurrentPeriod  `json:"current,omitempty" jsonschema_description:"The period of interest. Default: the last 30 days ending today."`
	Previous PreviousPeriod `json:"previous,omitempty" jsonschema_description:"The period to compare with. Default: as many days as current, ending the day before current starts."`
	ScopeArgs
}

// CurrentPeriod is compare_periods' current range.
type CurrentPeriod struct {
	From string `json:"from,omitempty" jsonschema:"pattern=^[0-9]{4}-[0-9]{2}-[0-9]{2}$" jsonschema_description:"First date, inclusive, YYYY-MM-DD (UTC). Default: 29 days before to."`
	To   string `json:"to,omitempty" jsonschema:"pattern=^[0-9]{4}-[0-9]{2}-[0-9]{2}$" jsonschema_description:"Last date, inclusive, YYYY-MM-DD (UTC), not after today; point-in-time figures are evaluated on it. Default: today."`
}

// PreviousPeriod is compare_periods' previous range; both dates or neither.
type PreviousPeriod struct {
	From string `json:"from,omitempty" jsonschema:"pattern=^[0-9]{4}-[0-9]{2}-[0-9]{2}$" jsonschema_description:"First date, inclusive, YYYY-MM-DD (UTC)."`
	To   string `json:"to,omitempty" jsonschema:"pattern=^[0-9]{4}-[0-9]{2}-[0-9]{2}$" jsonschema_description:"Last date, inclusive, YYYY-MM-DD (UTC); point-in-time figures are evaluated on it."`
}

// ComparePeriodsResult is compare_periods' output.
type ComparePeriodsResult struct {
	Current  PeriodInfo `json:"current"`
	Previous PeriodInfo `json:"previous"`
	// Currencies is every currency reported in either period, sorted.
	Currencies []string `json:"currencies"`
	// ByCurrency mirrors the summary's currency block: every number becomes a Change, every other
	// scalar {current, previous}.
	ByCurrency map[string]CurrencyComparison `json:"byCurrency"`
	// UsageActivity compares the received usage events (all currencies), the same way.
	UsageActivity any `json:"usageActivity"`
}

// PeriodInfo is what a period's summary says about itself.
type PeriodInfo struct {
	Range            period          `json:"range"`
	AsOf             string          `json:"asOf"`
	StaleDataWarning *string         `json:"staleDataWarning"`
	Coverage         json.RawMessage `json:"coverage"`
}

// CurrencyComparison is one currency's block in both periods.
type CurrencyComparison struct {
	// InCurrent and InPrevious say whether the summary reported the currency in that period; a
	// currency with no rows in a period has null values there (no zero-filled block is invented).
	InCurrent  bool `json:"inCurrent"`
	InPrevious bool `json:"inPrevious"`
	Changes    any  `json:"changes"`
}

const comparePeriodsDescription = "Compares the workspace summary of two date ranges side by side: per currency, every figure of " +
	"get_summary's currency block (MRR and its parts, ARR, paying customers, ARPU, net revenue retention, concentration shares, " +
	"billed usage, observed usage charges) as {current, previous, absoluteChange, relativeChange}, plus usage activity. " +
	"relativeChange is (current - previous) / |previous| rounded to 4 decimals (0.25 = +25 %), null when previous is 0 or missing. " +
	"Both summaries are the REST summary for each range; each period's coverage and staleDataWarning are included: a change " +
	"may come from missing history rather than from the business. Use it for \"how did MRR change since last month\"." + moneyNote

func (t *tools) comparePeriods() toolDef {
	return newTool(t, "compare_periods", "Compare two periods", comparePeriodsDescription, nil, t.runComparePeriods)
}

// summaryBody is the part of a summary body compare_periods reads.
type summaryBody struct {
	Range            period                     `json:"range"`
	AsOf             string                     `json:"asOf"`
	StaleDataWarning *string                    `json:"staleDataWarning"`
	Coverage         json.RawMessage            `json:"coverage"`
	Currencies       []string                   `json:"currencies"`
	ByCurrency       map[string]json.RawMessage `json:"byCurrency"`
	UsageActivity    json.RawMessage            `json:"usageActivity"`
}

func (t *tools) runComparePeriods(ctx context.Context, a ComparePeriodsArgs) (ComparePeriodsResult, error) {
	if (a.Previous.From == "") != (a.Previous.To == "") {
		return ComparePeriodsResult{}, invalidArgs("previous needs both from and to, or neither (then it is the period of the same length right before current)")
	}
	request := func(from, to string) (reporting.Request, error) {
		return t.svc.reportingRequest(ctx, a.ScopeArgs.values(RangeArgs{From: from, To: to}.values(url.Values{})))
	}
	cur, err := request(a.Current.From, a.Current.To)
	if err != nil {
		return ComparePeriodsResult{}, err
	}
	prevFrom, prevTo := a.Previous.From, a.Previous.To
	if prevFrom == "" {
		// The previous period follows from the current one as the REST parser resolved it (defaults).
		days := int(cur.Range.To.Start().Sub(cur.Range.From.Start()).Hours()/24) + 1
		prevFrom, prevTo = cur.Range.From.AddDays(-days).String(), cur.Range.From.AddDays(-1).String()
	}
	prev, err := request(prevFrom, prevTo)
	if err != nil {
		return ComparePeriodsResult{}, err
	}
	reqs := []reporting.Request{cur, prev}
	sums, err := readAll(ctx, len(reqs), func(ctx context.Context, i int) (reporting.Summary, error) { return t.svc.summary(ctx, reqs[i]) })
	if err != nil {
		return ComparePeriodsResult{}, err
	}
	// The comparison walks the summaries' JSON, the REST bodies, so that every figure a summary
	// answers is compared without a list of fields to keep up to date.
	bodies := make([][]byte, len(sums))
	for i, s := range sums {
		if bodies[i], err = json.Marshal(s); err != nil {
			return ComparePeriodsResult{}, err
		}
	}
	return compareSummaries(bodies[0], bodies[1])
}

// compareSummaries builds the result from two summary bodies.
func compareSummaries(curBody, prevBody []byte) (ComparePeriodsResult, error) {
	var cur, prev summaryBody
	if err := json.Unmarshal(curBody, &cur); err != nil {
		return ComparePeriodsResult{}, err
	}
	if err := json.Unmarshal(prevBody, &prev); err != nil {
		return ComparePeriodsResult{}, err
	}
	out := ComparePeriodsResult{
		Current:    PeriodInfo{Range: cur.Range, AsOf: cur.AsOf, StaleDataWarning: cur.StaleDataWarning, Coverage: cur.Coverage},
		Previous:   PeriodInfo{Range: prev.Range, AsOf: prev.AsOf, StaleDataWarning: prev.StaleDataWarning, Coverage: prev.Coverage},
		Currencies: sortedUnion(keys(cur.ByCurrency), keys(prev.ByCurrency)),
		ByCurrency: map[string]CurrencyComparison{},
	}
	for _, c := range out.Currencies {
		cb, inCur := cur.ByCurrency[c]
		pb, inPrev := prev.ByCurrency[c]
		cv, err := decodeOrNil(cb)
		if err != nil {
			return ComparePeriodsResult{}, err
		}
		pv, err := decodeOrNil(pb)
		if err != nil {
			return ComparePeriodsResult{}, err
		}
		changes, _ := compareValues(cv, pv)
		out.ByCurrency[c] = CurrencyComparison{InCurrent: inCur, InPrevious: inPrev, Changes: changes}
	}
	cu, err := decodeOrNil(cur.UsageActivity)
	if err != nil {
		return ComparePeriodsResult{}, err
	}
	pu, err := decodeOrNil(prev.UsageActivity)
	if err != nil {
		return ComparePeriodsResult{}, err
	}
	out.UsageActivity, _ = compareValues(cu, pu)
	return out, nil
}

func decodeOrNil(b json.RawMessage) (any, error) {
	if len(b) == 0 {
		return nil, nil
	}
	return decodeNumbers(b)
}

func keys(m map[string]json.RawMessage) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
