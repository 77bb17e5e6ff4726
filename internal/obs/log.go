// Package obs builds the logger and the metrics registry that every component receives.
package obs

import (
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/pflag"
)

// LogConfig selects the slog handler.
type LogConfig struct {
	Level  string // debug | info | warn | error
	Format string // text | json
}

// DefaultLogConfig logs info-level text, which reads well in a terminal; production sets json.
func DefaultLogConfig() LogConfig { return LogConfig{Level: "info", Format: "text"} }

// RegisterFlags binds the log flags.
func (c *LogConfig) RegisterFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.Level, "log-level", c.Level, "log level: debug, info, warn or error")
	fs.StringVar(&c.Format, "log-format", c.Format, "log format: text or json")
}

// Validate reports a bad level or format before anything starts.
func (c LogConfig) Validate() error {
	if _, err := parseLevel(c.Level); err != nil {
		return err
	}
	switch c.Format {
	case "text", "json":
		return nil
	default:
		return fmt.Errorf("log-format %q: want text or json", c.Format)
	}
}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.ToUpper(s))); err != nil {
		return 0, fmt.Errorf("log-level %q: want debug, info, warn or error", s)
	}
	return l, nil
}

// NewLogger returns a logger writing to w. The config must have been validated.
func NewLogger(c LogConfig, w io.Writer) *slog.Logger {
	lvl, _ := parseLevel(c.Level)
	opts := &slog.HandlerOptions{Level: lvl}
	if c.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
