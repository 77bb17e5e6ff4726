package analystmrr

import (
	"errors"
	"time"

	"github.com/spf13/pflag"
)

// Config is the job's schedule.
type Config struct {
	// Interval is how often a round runs (one process of the deployment at a time); 0 never.
	Interval time.Duration
}

// DefaultConfig recomputes every 15 minutes: a (workspace, app) costs a whole timeline over its
// history when its data changed, so rounds are spaced well beyond a sync's cadence of landing rows,
// and analysts read figures at most about that old.
func DefaultConfig() Config { return Config{Interval: 15 * time.Minute} }

// RegisterFlags binds the job's flags.
func (c *Config) RegisterFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&c.Interval, "analyst-mrr-interval", c.Interval, "how often the process component recomputes the analyst views of daily MRR "+
		"and MRR movements for each workspace's apps whose reporting data changed (or when the day changed), one process of the deployment at a time (0: never)")
}

// Validate checks the settings.
func (c Config) Validate() error {
	if c.Interval < 0 || (c.Interval > 0 && c.Interval < time.Second) {
		return errors.New("analyst-mrr-interval: must be 0 (never) or at least 1s")
	}
	return nil
}
