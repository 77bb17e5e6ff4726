package mcp

import (
	"context"
	"net/url"

	"github.com/revtrack/revtrack/query"
	"github.com/revtrack/revtrack/query/reporting"
)

// GetAttributionArgs are get_attribution's arguments: those of GET /api/v1/attribution. There is no
// customerScope: the route refuses it, excluded customers are always left out (docs/METRICS.md 10).
type GetAttributionArgs struct {
	GroupBy string `json:"groupBy" jsonschema:"enum=utm_source,enum=utm_medium,enum=utm_campaign,enum=tracker_ref,enum=click_id_type,enum=landing_path" jsonschema_description:"The channel dimension of each customer's first touch: utm_source, utm_medium, utm_campaign or tracker_ref (the value as sent, \"\" when the first touch had none); click_id_type (gclid, gbraid, wbraid or none); landing_path (the first landing URL's path, \"\" without one)."`
	RangeArgs
	Currency string `json:"currency,omitempty" jsonschema:"pattern=^[A-Za-z]{3}$" jsonschema_description:"Three-letter currency code (e.g. USD) to keep only that currency's money block in every row (the counts stay). Default: every currency, each reported separately (currencies are never summed or converted)."`
	AppID    string `json:"appId,omitempty" jsonschema:"minLength=1" jsonschema_description:"ID of one of the workspace's selected apps, to attribute that app's customers only. Default: all selected apps together."`
}

func (a GetAttributionArgs) values() url.Values {
	q := a.RangeArgs.values(url.Values{})
	set(q, "groupBy", a.GroupBy)
	set(q, "currency", a.Currency)
	set(q, "appId", a.AppID)
	return q
}

// The description says what the rows mean (docs/METRICS.md 10.2, 10.3), so a model neither reads
// the rows without a credited first touch as organic nor adds currencies.
const getAttributionDescription = "Revenue by acquisition channel, exactly as the REST endpoint GET /api/v1/attribution returns it: " +
	"which marketing channels brought the customers and what those customers pay. A customer's channel is the first touch " +
	"(UTM source/medium/campaign, tracker_ref, ad click ID, landing page) of the first browser that a verified event of the " +
	"customer's own app linked to its shop, grouped by `groupBy`. One row per channel (`kind: channel`, `key` the value), then " +
	"three rows with `key: null` that are NOT channels and NOT organic traffic: `unattributed` (no tracked first touch can be " +
	"credited: no link, or a browser first seen after the shop had installed), `before_tracking` (installed before the app's " +
	"tracking collected anything: not tracked yet, says nothing about the channel) and `no_browser_history` (linked, but the " +
	"browser's events have not landed or are older than the 180-day retention). Every customer counts in exactly one row, " +
	"so the rows' MRR and paying customers per currency add up to get_summary's for the same range and app (excluded customers " +
	"are always left out). Per row: acquisitions (browsers first seen in the range), installs, trialsStarted, trialsConverted " +
	"(verified events in the range), customers (whenever installed), payingCustomers on `to`, the rates installRate, " +
	"trialStartRate, trialConversionRate and payingRate (ratios 0..1, null when the denominator is 0; the funnel rates divide " +
	"flows of the same range and can exceed 1), and per currency in `byCurrency` paying customers, MRR (subscription and usage) " +
	"on `to` and net revenue in the range (after fees and refunds). `coverage.tracking` says per app since when browser history " +
	"is stored (`coversRange: false`: the range starts before tracking did, so channels there are incomplete); read it and " +
	"`staleDataWarning` before drawing conclusions." + moneyNote

func (t *tools) getAttribution() toolDef {
	return newTool(t, "get_attribution", "Revenue by acquisition channel", getAttributionDescription, nil,
		func(ctx context.Context, a GetAttributionArgs) (reporting.Attribution, error) {
			req, err := t.svc.attributionRequest(ctx, a.values())
			if err != nil {
				return reporting.Attribution{}, err
			}
			return t.svc.attribution(ctx, req)
		})
}

// attributionRequest parses the parameters of GET /api/v1/attribution, as the route does.
func (s *service) attributionRequest(ctx context.Context, q url.Values) (reporting.AttributionRequest, error) {
	ci, err := caller(ctx)
	if err != nil {
		return reporting.AttributionRequest{}, err
	}
	req, err := query.AttributionRequest(q, ci.caller.Workspace, s.now())
	return req, asQueryError(err)
}

// attribution is kept like the summary (docs/METRICS.md 10), so no-cache applies as on its route.
func (s *service) attribution(ctx context.Context, req reporting.AttributionRequest) (reporting.Attribution, error) {
	return read(ctx, s, true, func(ctx context.Context) (reporting.Attribution, error) { return s.reporting.Attribution(ctx, req) })
}
