package mcp

import (
	"encoding/json"
	"net/url"

	"github.com/invopop/jsonschema"
)

// Argument descriptions (jsonschema_description) are written for the model that calls the tools:
// what the value means, its format and its default. The REST API applies the rules; the schemas only
// state them up front.

// RangeArgs is an inclusive range of UTC dates.
type RangeArgs struct {
	From string `json:"from,omitempty" jsonschema:"pattern=^[0-9]{4}-[0-9]{2}-[0-9]{2}$" jsonschema_description:"First date of the range, inclusive, as YYYY-MM-DD in UTC. Default: 29 days before to (a 30-day range)."`
	To   string `json:"to,omitempty" jsonschema:"pattern=^[0-9]{4}-[0-9]{2}-[0-9]{2}$" jsonschema_description:"Last date of the range, inclusive, as YYYY-MM-DD in UTC; must not be after today. Point-in-time figures (MRR, ARR, paying customers, ARPU, concentration) are evaluated on this date. Default: today."`
}

// ScopeArgs are the filters of every reporting tool besides the range (docs/MCP.md, "Tools").
type ScopeArgs struct {
	Currency      string `json:"currency,omitempty" jsonschema:"pattern=^[A-Za-z]{3}$" jsonschema_description:"Three-letter currency code (e.g. USD) to report only that currency. Default: every currency, each reported separately (currencies are never summed or converted)."`
	AppID         string `json:"appId,omitempty" jsonschema:"minLength=1" jsonschema_description:"ID of one of the workspace's selected apps, to report on that app only. Default: all selected apps together."`
	CustomerScope string `json:"customerScope,omitempty" jsonschema:"enum=included,enum=excluded,enum=all" jsonschema_description:"Which customers enter the totals: included (default) leaves out customers the workspace excluded from reporting (its own development stores, partners' stores); excluded counts only those; all counts both."`
}

// ReportingArgs are the arguments of get_summary and get_report's filters.
type ReportingArgs struct {
	RangeArgs
	ScopeArgs
}

func (a RangeArgs) values(q url.Values) url.Values {
	set(q, "from", a.From)
	set(q, "to", a.To)
	return q
}

func (a ScopeArgs) values(q url.Values) url.Values {
	set(q, "currency", a.Currency)
	set(q, "appId", a.AppID)
	set(q, "customerScope", a.CustomerScope)
	return q
}

func (a ReportingArgs) values() url.Values {
	return a.ScopeArgs.values(a.RangeArgs.values(url.Values{}))
}

// set adds a query parameter only when given, so REST applies its own default otherwise.
func set(q url.Values, k, v string) {
	if v != "" {
		q.Set(k, v)
	}
}

// inputSchema derives a tool's JSON input schema from its argument struct, so the schema and the
// decoding cannot drift apart. Fields without omitempty are required; unknown arguments are refused
// (a misspelt argument must not silently fall back to a default).
func inputSchema(v any) json.RawMessage {
	r := jsonschema.Reflector{DoNotReference: true, ExpandedStruct: true, AllowAdditionalProperties: false}
	s := r.Reflect(v)
	s.Version, s.ID = "", "" // JSON Schema 2020-12 is MCP's default dialect; the schema is inline
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // a static struct always marshals
	}
	return b
}
