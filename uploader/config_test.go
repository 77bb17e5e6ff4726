package uploader

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func TestConfigFlagsAndValidation(t *testing.T) {
	c := DefaultConfig()
	if err := c.Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	c.RegisterFlags(fs)
	for _, name := range []string{"ads-event-source", "ads-dispatch-interval", "ads-batch-size", "ads-live-batch-size",
		"ads-diagnostics-delay", "ads-diagnostics-max-attempts", "ads-max-event-age", "ads-group-prefix",
		"ads-google-base-url", "ads-oauth-client-id"} {
		if fs.Lookup(name) == nil {
			t.Errorf("flag --%s missing", name)
		}
	}
	if err := fs.Parse([]string{"--ads-live-batch-size=5", "--ads-diagnostics-delay=45m", "--ads-max-event-age=720h"}); err != nil {
		t.Fatal(err)
	}
	if c.LiveBatchSize != 5 || c.DiagnosticsDelay != 45*time.Minute || c.MaxEventAge != 720*time.Hour || c.Validate() != nil {
		t.Fatalf("parsed %+v", c)
	}
	for name, mutate := range map[string]func(*Config){
		"ads-event-source":             func(c *Config) { c.EventSource = "STORE" },
		"ads-batch-size":               func(c *Config) { c.BatchSize = 2001 },
		"ads-live-batch-size":          func(c *Config) { c.LiveBatchSize = 0 },
		"ads-diagnostics-delay":        func(c *Config) { c.DiagnosticsDelay = 10 * time.Minute },
		"ads-diagnostics-max-attempts": func(c *Config) { c.DiagnosticsMaxAttempts = 0 },
		"ads-max-event-age":            func(c *Config) { c.MaxEventAge = 100 * 24 * time.Hour },
		"ads-dispatch-interval":        func(c *Config) { c.DispatchInterval = 0 },
		"ads-group-prefix":             func(c *Config) { c.GroupPrefix = "" },
		"ads-google-base-url":          func(c *Config) { c.GoogleBaseURL = "ftp://x" },
	} {
		c := DefaultConfig()
		mutate(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
