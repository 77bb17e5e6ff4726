package budget

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"
)

// KeptCost is what every admitted request costs: a kept response still reads the tables' data
// version (one query on system.parts) and writes the body.
const KeptCost = 1

// Config is the reporting edge's cost limits (REST /api/v1 and MCP /api/mcp).
type Config struct {
	// Budget is the most tokens one key holds (its burst), in units of a kept response.
	Budget int
	// RefillPerMinute is how many tokens a key gets back per minute, continuously.
	RefillPerMinute int
	// ComputedCost is what a request costs when it computes its response from the data instead of
	// serving a kept one (KeptCost of it is taken on admission, the rest when the computation starts).
	ComputedCost int
	// NoCacheBudget and NoCacheRefillPerHour bound forced recomputations (`Cache-Control: no-cache`)
	// per key; beyond them the directive is ignored (see Call.ForceRecompute).
	NoCacheBudget        int
	NoCacheRefillPerHour int
	// MaxConcurrent is how many requests of this process may compute at once, whoever sends them.
	MaxConcurrent int
	// ComputeWait is how long a computation waits for one of those slots before it is refused (503).
	ComputeWait time.Duration
}

// DefaultConfig lets one key compute a full query_metrics series (120 computations) from a cold
// cache at once, then about 24 computed responses (or 240 kept ones) a minute. A computed summary
// costs about 300 ms of ClickHouse CPU and a kept one about 2 ms (docs/REPORTING_PERFORMANCE.md), so
// one key's sustained share of the shared ClickHouse stays near an eighth of a core. Eight
// computations at once keep the two-core ClickHouse busy without queueing every tenant behind one.
func DefaultConfig() Config {
	return Config{
		Budget:               1200,
		RefillPerMinute:      240,
		ComputedCost:         10,
		NoCacheBudget:        20,
		NoCacheRefillPerHour: 60,
		MaxConcurrent:        8,
		ComputeWait:          2 * time.Second,
	}
}

// RegisterFlags binds the flags.
func (c *Config) RegisterFlags(fs *pflag.FlagSet) {
	fs.IntVar(&c.Budget, "query-budget", c.Budget, "reporting budget of one key (REST and MCP), in units of a kept response; a computed one costs --query-computed-cost (then 429)")
	fs.IntVar(&c.RefillPerMinute, "query-budget-refill-per-minute", c.RefillPerMinute, "units of reporting budget a key gets back per minute")
	fs.IntVar(&c.ComputedCost, "query-computed-cost", c.ComputedCost, "budget units a reporting request costs when its response is computed rather than kept")
	fs.IntVar(&c.NoCacheBudget, "query-no-cache-budget", c.NoCacheBudget, "forced recomputations (Cache-Control: no-cache) a key may make at once; beyond them the directive is ignored")
	fs.IntVar(&c.NoCacheRefillPerHour, "query-no-cache-refill-per-hour", c.NoCacheRefillPerHour, "forced recomputations a key gets back per hour")
	fs.IntVar(&c.MaxConcurrent, "query-max-concurrent-computations", c.MaxConcurrent, "reporting computations one query process runs at once (then they wait, and 503 after --query-computation-wait)")
	fs.DurationVar(&c.ComputeWait, "query-computation-wait", c.ComputeWait, "how long a reporting computation waits for a free slot before 503")
}

// Validate checks the limits.
func (c Config) Validate() error {
	var errs []error
	if c.ComputedCost < KeptCost {
		errs = append(errs, fmt.Errorf("query-computed-cost: must be at least %d", KeptCost))
	}
	if c.Budget < c.ComputedCost {
		errs = append(errs, errors.New("query-budget: must be at least --query-computed-cost, or no computed request could ever pass"))
	}
	if c.RefillPerMinute < 1 || c.NoCacheRefillPerHour < 1 {
		errs = append(errs, errors.New("query-budget-refill-per-minute, query-no-cache-refill-per-hour: must be at least 1"))
	}
	if c.NoCacheBudget < 1 {
		errs = append(errs, errors.New("query-no-cache-budget: must be at least 1"))
	}
	if c.MaxConcurrent < 1 {
		errs = append(errs, errors.New("query-max-concurrent-computations: must be at least 1"))
	}
	if c.ComputeWait < 0 {
		errs = append(errs, errors.New("query-computation-wait: must not be negative"))
	}
	return errors.Join(errs...)
}

// cost and noCache are the two buckets of a key.
func (c Config) cost() Bucket {
	return Bucket{Size: float64(c.Budget), PerSecond: float64(c.RefillPerMinute) / 60}
}

func (c Config) noCache() Bucket {
	return Bucket{Size: float64(c.NoCacheBudget), PerSecond: float64(c.NoCacheRefillPerHour) / 3600}
}
