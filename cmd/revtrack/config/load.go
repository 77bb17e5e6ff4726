package config

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/spf13/pflag"

	"github.com/revtrack/revtrack/internal/obs"
)

// Load finishes a command's configuration once its flags are parsed: REVTRACK_* variables fill the
// flags not given, the result is validated, and the logger it describes is built. Both binaries
// (revtrack and revtrack-dev) start this way, so they read the same settings the same way.
func (c *Config) Load(fs *pflag.FlagSet, logOut io.Writer) (*slog.Logger, error) {
	if err := ApplyEnv(fs); err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("invalid configuration:\n%w", err)
	}
	return obs.NewLogger(c.Log, logOut), nil
}
