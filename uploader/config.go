package uploader

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"
)

// Config tunes the uploader: the queue consumer, the dispatcher and the diagnostics poller.
type Config struct {
	// ConnectConfig (connection_config.go) locates Google's APIs and holds the OAuth client the
	// dispatcher refreshes access tokens with.
	ConnectConfig

	// GroupPrefix prefixes the queue consumer's group name (<prefix>.upload-queue).
	GroupPrefix string
	// EventSource is sent with every event as the request's enum value; IN_STORE does not mean a
	// physical purchase (docs/ADS_UPLOAD.md, "Event source").
	EventSource string
	// DispatchInterval is how often due rows are sent and due diagnostics polled.
	DispatchInterval time.Duration
	// BatchSize bounds a Validation only request (the platform takes at most 2,000 events).
	BatchSize int
	// LiveBatchSize bounds a live request. 1 by default: the asynchronous diagnostics are reported
	// per request, so one event per request is the only way they name the row.
	LiveBatchSize int
	// DiagnosticsDelay is the wait from acceptance to the first diagnostics poll (at least 30 minutes).
	DiagnosticsDelay time.Duration
	// DiagnosticsMaxAttempts caps the polls of one request.
	DiagnosticsMaxAttempts int
	// MaxEventAge: older events are rejected locally (EVENT_OUTSIDE_WINDOW), as the platform would.
	MaxEventAge time.Duration

	// The retry policy (docs/ADS_UPLOAD.md, "Retries") is not a flag: it follows the platform's
	// guidance. Tests shorten it. QuotaWait is the wait after a 429 that carries no RetryInfo /
	// Retry-After; one that does is honoured as given.
	RetryBase, RetryMax, QuotaWait time.Duration
	// MaxPoll bounds one consumed batch of upload jobs.
	MaxPoll int
	// Backoff and MaxBackoff space the retries of a failed queue write.
	Backoff, MaxBackoff time.Duration
}

// DefaultConfig follows the platform's documented limits and the 30-minute diagnostics delay
// (docs/ADS_UPLOAD.md, "Diagnostics").
func DefaultConfig() Config {
	return Config{
		ConnectConfig:          DefaultConnectConfig(),
		GroupPrefix:            "revtrack",
		EventSource:            "IN_STORE",
		DispatchInterval:       5 * time.Second,
		BatchSize:              2000,
		LiveBatchSize:          1,
		DiagnosticsDelay:       30 * time.Minute,
		DiagnosticsMaxAttempts: 8,
		MaxEventAge:            90 * 24 * time.Hour,
		RetryBase:              time.Second,
		RetryMax:               time.Hour,
		QuotaWait:              time.Minute,
		MaxPoll:                1000,
		Backoff:                200 * time.Millisecond,
		MaxBackoff:             10 * time.Second,
	}
}

// RegisterFlags binds the uploader flags (prefixed --ads-).
func (c *Config) RegisterFlags(fs *pflag.FlagSet) {
	c.ConnectConfig.RegisterFlags(fs)
	fs.StringVar(&c.GroupPrefix, "ads-group-prefix", c.GroupPrefix, "prefix of the upload queue's consumer-group name")
	fs.StringVar(&c.EventSource, "ads-event-source", c.EventSource, "event source sent with every conversion (WEB, APP, IN_STORE, PHONE, MESSAGE, OTHER)")
	fs.DurationVar(&c.DispatchInterval, "ads-dispatch-interval", c.DispatchInterval, "how often due upload rows are sent and due diagnostics polled")
	fs.IntVar(&c.BatchSize, "ads-batch-size", c.BatchSize, "events per Validation only request (at most 2000)")
	fs.IntVar(&c.LiveBatchSize, "ads-live-batch-size", c.LiveBatchSize, "events per live request (1: diagnostics name the row)")
	fs.DurationVar(&c.DiagnosticsDelay, "ads-diagnostics-delay", c.DiagnosticsDelay, "wait from acceptance to the first diagnostics poll (at least 30m)")
	fs.IntVar(&c.DiagnosticsMaxAttempts, "ads-diagnostics-max-attempts", c.DiagnosticsMaxAttempts, "diagnostics polls per request before polling stops")
	fs.DurationVar(&c.MaxEventAge, "ads-max-event-age", c.MaxEventAge, "events older than this are not uploaded (the platform's window)")
}

var eventSources = map[string]bool{"WEB": true, "APP": true, "IN_STORE": true, "PHONE": true, "MESSAGE": true, "OTHER": true}

// Validate checks the uploader settings.
func (c Config) Validate() error {
	errs := []error{c.ConnectConfig.Validate()}
	if c.GroupPrefix == "" {
		errs = append(errs, errors.New("ads-group-prefix: must not be empty"))
	}
	if !eventSources[c.EventSource] {
		errs = append(errs, fmt.Errorf("ads-event-source: %q is not one of WEB, APP, IN_STORE, PHONE, MESSAGE, OTHER", c.EventSource))
	}
	if c.DispatchInterval < 100*time.Millisecond {
		errs = append(errs, errors.New("ads-dispatch-interval: must be at least 100ms"))
	}
	if c.BatchSize < 1 || c.BatchSize > 2000 {
		errs = append(errs, errors.New("ads-batch-size: must be between 1 and 2000"))
	}
	if c.LiveBatchSize < 1 || c.LiveBatchSize > c.BatchSize {
		errs = append(errs, errors.New("ads-live-batch-size: must be between 1 and ads-batch-size"))
	}
	if c.DiagnosticsDelay < 30*time.Minute {
		errs = append(errs, errors.New("ads-diagnostics-delay: must be at least 30m (the platform's processing time)"))
	}
	if c.DiagnosticsMaxAttempts < 1 || c.DiagnosticsMaxAttempts > 50 {
		errs = append(errs, errors.New("ads-diagnostics-max-attempts: must be between 1 and 50"))
	}
	if c.MaxEventAge < time.Hour || c.MaxEventAge > 90*24*time.Hour {
		errs = append(errs, errors.New("ads-max-event-age: must be between 1h and 2160h (90 days)"))
	}
	if c.RetryBase <= 0 || c.RetryMax < c.RetryBase || c.QuotaWait <= 0 {
		errs = append(errs, errors.New("retry policy: base must be positive and at most the maximum; the quota wait positive"))
	}
	if c.MaxPoll < 1 || c.Backoff <= 0 || c.MaxBackoff < c.Backoff {
		errs = append(errs, errors.New("queue consumer: max poll and backoff must be positive"))
	}
	return errors.Join(errs...)
}
