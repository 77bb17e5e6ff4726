// Package kafkax builds franz-go clients with the project's delivery guarantees and creates the
// topics declared in schemas.
package kafkax

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// Config locates the brokers and bounds producer delivery.
type Config struct {
	Brokers           []string
	ClientID          string
	ReplicationFactor int16
	// DeliveryTimeout bounds how long a produce may wait for acks before the edge answers 503
	// instead of holding the browser or server connection open indefinitely.
	DeliveryTimeout time.Duration
	// Linger trades a few milliseconds of latency for batching under load.
	Linger time.Duration
	// TopicSuffix is appended to every topic name; tests use it to isolate runs on one broker.
	TopicSuffix string
}

// DefaultConfig targets the local stack started by deploy/local/stack.
func DefaultConfig() Config {
	return Config{
		Brokers:           []string{"127.0.0.1:19092"},
		ClientID:          "revtrack",
		ReplicationFactor: 1,
		DeliveryTimeout:   10 * time.Second,
		Linger:            5 * time.Millisecond,
	}
}

// RegisterFlags binds the Kafka flags.
func (c *Config) RegisterFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&c.Brokers, "kafka-brokers", c.Brokers, "Kafka bootstrap brokers, comma-separated host:port")
	fs.StringVar(&c.ClientID, "kafka-client-id", c.ClientID, "Kafka client ID prefix")
	fs.Int16Var(&c.ReplicationFactor, "kafka-replication-factor", c.ReplicationFactor, "replication factor for topics created at start-up (3 in production)")
	fs.DurationVar(&c.DeliveryTimeout, "kafka-delivery-timeout", c.DeliveryTimeout, "how long a produce waits for all in-sync replicas before failing")
	fs.DurationVar(&c.Linger, "kafka-linger", c.Linger, "producer linger before a batch is sent")
	fs.StringVar(&c.TopicSuffix, "kafka-topic-suffix", c.TopicSuffix, "suffix appended to every topic name (isolates test runs)")
}

// Validate checks the Kafka settings.
func (c Config) Validate() error {
	var errs []error
	if len(c.Brokers) == 0 {
		errs = append(errs, errors.New("kafka-brokers: at least one broker is required"))
	}
	for _, b := range c.Brokers {
		if !strings.Contains(b, ":") {
			errs = append(errs, fmt.Errorf("kafka-brokers: %q is not host:port", b))
		}
	}
	if c.ReplicationFactor < 1 {
		errs = append(errs, errors.New("kafka-replication-factor: must be at least 1"))
	}
	if c.DeliveryTimeout < time.Second {
		errs = append(errs, errors.New("kafka-delivery-timeout: must be at least 1s"))
	}
	if c.Linger < 0 || c.Linger > time.Second {
		errs = append(errs, errors.New("kafka-linger: must be between 0 and 1s"))
	}
	return errors.Join(errs...)
}

// Topic returns the full name of a declared topic, with the configured suffix.
func (c Config) Topic(name string) string { return name + c.TopicSuffix }
