package health

import (
	"fmt"
	"slices"
)

// The backing services a readiness check can probe; the names are the keys of Report.Checks.
const (
	Kafka      = "kafka"
	ClickHouse = "clickhouse"
	Redis      = "redis"
)

// needs is, per component, what it cannot serve without. A service outside a component's list may
// still be used on a side path, but its outage must not take the component out of rotation:
//   - ingest answers from Kafka and Redis (dedup, limits, the control-plane cache). ClickHouse is
//     read only on a control-plane cache miss, which an outage turns into that request's 503.
//   - process consumes Kafka into ClickHouse and takes its schedule locks (platform sync, analyst
//     refresh) in Redis.
//   - query reads ClickHouse and authenticates and budgets through Redis. Kafka carries only the
//     on-demand sync runs of the admin API, which fail on their own while it is down.
//   - upload consumes Kafka into the ClickHouse queue and leases workspaces in Redis.
var needs = map[string][]string{
	"ingest":  {Kafka, Redis},
	"process": {Kafka, ClickHouse, Redis},
	"query":   {ClickHouse, Redis},
	"upload":  {Kafka, ClickHouse, Redis},
}

// Needs returns the services the given components need together, sorted. An unknown component
// is an error rather than an empty list, so a new component cannot ship without deciding.
func Needs(components ...string) ([]string, error) {
	var out []string
	for _, c := range components {
		n, ok := needs[c]
		if !ok {
			return nil, fmt.Errorf("health: no readiness needs declared for component %q", c)
		}
		out = append(out, n...)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
