package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/revtrack/revtrack/query/reporting"
)

// movementCheck is the movement invariant of docs/METRICS.md 3.14 checked on the bench data set
// (issue 14 asks for it on every data set, the generated bench data included): one daily answer over
// the series row's 365 days, every period and currency.
type movementCheck struct {
	Periods, Blocks int
	Violations      []string
}

// checkMovements asks for the daily movements of [from, to] (computed) and checks, per period and
// currency, end = start + new + expansion + reactivation − contraction − churn to the cent, net =
// end − start, and that each period opens where the previous one closed.
func (a *api) checkMovements(ctx context.Context, from, to string) (movementCheck, error) {
	var c movementCheck
	o, body := a.do(ctx, "/api/v1/mrr-movements?interval=day&from="+from+"&to="+to, true, true)
	if o.err != nil || o.status != 200 {
		return c, fmt.Errorf("daily movements: status %d, %v %s", o.status, o.err, o.body)
	}
	// Only the periods: the envelope's dates are JSON strings, which reporting.Date does not decode.
	var m struct {
		Periods []struct {
			Date       string                             `json:"date"`
			ByCurrency map[string]reporting.MovementBlock `json:"byCurrency"`
		} `json:"periods"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return c, fmt.Errorf("daily movements: %w", err)
	}
	c.Periods = len(m.Periods)
	for i, p := range m.Periods {
		for cur, b := range p.ByCurrency {
			c.Blocks++
			if b.EndMRRCents != b.StartMRRCents+b.NewCents+b.ExpansionCents+b.ReactivationCents-b.ContractionCents-b.ChurnCents ||
				b.NetCents != b.EndMRRCents-b.StartMRRCents {
				c.Violations = append(c.Violations, fmt.Sprintf("%s %s: %+v", p.Date, cur, b))
			}
			if i > 0 && b.StartMRRCents != m.Periods[i-1].ByCurrency[cur].EndMRRCents {
				c.Violations = append(c.Violations, fmt.Sprintf("%s %s: opens at %d, the previous day closed at %d",
					p.Date, cur, b.StartMRRCents, m.Periods[i-1].ByCurrency[cur].EndMRRCents))
			}
		}
	}
	return c, nil
}
