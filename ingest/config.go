package ingest

import (
	"errors"
	"time"

	"github.com/spf13/pflag"
)

// Config bounds what the edge accepts.
type Config struct {
	// MaxServerEventBytes bounds one server-event request body.
	MaxServerEventBytes int64
	// MaxBatchBytes and MaxBatchEvents bound one browser batch; tracker.js stays below both.
	MaxBatchBytes  int64
	MaxBatchEvents int
	// ServerEventsPerMinute is the limit per tracking source's private key.
	ServerEventsPerMinute int
	// BrowserRequestsPerMinute is the limit of collection requests per tracking source.
	BrowserRequestsPerMinute int
	// DedupTTL is how long a server event ID is remembered in Redis; storage deduplicates beyond it.
	DedupTTL time.Duration
	// MaxFutureSkew rejects events stamped further in the future (a broken clock, not a real event).
	MaxFutureSkew time.Duration
	// ProduceTimeout is the longest an event request waits for Kafka's acknowledgement (and the
	// dedup confirm that follows it) before it is answered 503 with Retry-After, whatever the broker
	// does. The write may still complete after that answer; a retry with the same event IDs is safe
	// (docs/TRACKING.md).
	ProduceTimeout time.Duration
	// FlushWhenIdle has the producer send what it buffers as soon as no other request is on its way
	// to it, instead of waiting out the linger that only batches concurrent requests (handoff.go).
	FlushWhenIdle bool
}

// DefaultConfig suits one publisher's traffic with room: a server sending 10 lifecycle events per
// second, and a busy app's page views.
func DefaultConfig() Config {
	return Config{
		MaxServerEventBytes:      16 << 10,
		MaxBatchBytes:            64 << 10,
		MaxBatchEvents:           50,
		ServerEventsPerMinute:    600,
		BrowserRequestsPerMinute: 6000,
		DedupTTL:                 30 * 24 * time.Hour,
		MaxFutureSkew:            time.Hour,
		// Kafka with acks=all answers in milliseconds (docs/BENCHMARKS.md); 5 s is far beyond a
		// healthy broker and short enough that clients and load balancers do not give up first.
		ProduceTimeout: 5 * time.Second,
		FlushWhenIdle:  true,
	}
}

// RegisterFlags binds the ingest flags.
func (c *Config) RegisterFlags(fs *pflag.FlagSet) {
	fs.Int64Var(&c.MaxServerEventBytes, "ingest-max-server-event-bytes", c.MaxServerEventBytes, "largest accepted server-event request body")
	fs.Int64Var(&c.MaxBatchBytes, "ingest-max-batch-bytes", c.MaxBatchBytes, "largest accepted browser batch body")
	fs.IntVar(&c.MaxBatchEvents, "ingest-max-batch-events", c.MaxBatchEvents, "most events in one browser batch")
	fs.IntVar(&c.ServerEventsPerMinute, "ingest-server-events-per-minute", c.ServerEventsPerMinute, "server events accepted per private key per minute (then 429)")
	fs.IntVar(&c.BrowserRequestsPerMinute, "ingest-browser-requests-per-minute", c.BrowserRequestsPerMinute, "browser collection requests accepted per tracking source per minute (then 429)")
	fs.DurationVar(&c.DedupTTL, "ingest-dedup-ttl", c.DedupTTL, "how long a server event ID is remembered in Redis")
	fs.DurationVar(&c.MaxFutureSkew, "ingest-max-future-skew", c.MaxFutureSkew, "how far in the future an event's occurredAt may be")
	fs.DurationVar(&c.ProduceTimeout, "ingest-produce-timeout", c.ProduceTimeout, "longest an event request waits for Kafka before it is answered 503 with Retry-After (the write may still land; a retry with the same event IDs is safe)")
	fs.BoolVar(&c.FlushWhenIdle, "ingest-flush-when-idle", c.FlushWhenIdle, "send buffered records to Kafka as soon as no other request is on its way to the producer (false: every record waits out --kafka-linger)")
}

// Validate checks the ingest settings.
func (c Config) Validate() error {
	var errs []error
	if c.MaxServerEventBytes < 1024 || c.MaxBatchBytes < 1024 {
		errs = append(errs, errors.New("ingest body limits must be at least 1024 bytes"))
	}
	if c.MaxBatchEvents < 1 {
		errs = append(errs, errors.New("ingest-max-batch-events: must be at least 1"))
	}
	if c.ServerEventsPerMinute < 1 || c.BrowserRequestsPerMinute < 1 {
		errs = append(errs, errors.New("ingest rate limits must be at least 1 per minute"))
	}
	if c.DedupTTL < time.Hour {
		errs = append(errs, errors.New("ingest-dedup-ttl: must be at least 1h"))
	}
	if c.MaxFutureSkew < 0 {
		errs = append(errs, errors.New("ingest-max-future-skew: must not be negative"))
	}
	if c.ProduceTimeout < 100*time.Millisecond || c.ProduceTimeout > time.Minute {
		errs = append(errs, errors.New("ingest-produce-timeout: must be between 100ms and 1m"))
	}
	return errors.Join(errs...)
}
