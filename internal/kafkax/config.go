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
	// DeliveryTimeout bounds how long a record that was never sent to a broker stays buffered before
	// it fails. A record already sent waits for its outcome (idempotence), so this is not a bound on
	// a caller's wait: the edge bounds its own (ingest.Config.ProduceTimeout).
	DeliveryTimeout time.Duration
	// Linger trades a few milliseconds of latency for batching under load.
	Linger time.Duration
	// TopicSuffix is appended to every topic name; tests use it to isolate runs on one broker.
	TopicSuffix string
	// InstanceID makes every consumer of the process a static group member (KIP-345) named
	// <InstanceID>.<consumer>. A restart under the same ID takes its partitions back at once,
	// without waiting for the old member's session to expire and without a rebalance. It must be
	// stable across restarts of one process and unique among the processes running at a time:
	// two live members with one ID fence each other. Empty keeps dynamic membership (tests, and
	// commands that consume nothing); the serve commands derive one (DefaultInstanceID).
	InstanceID string
	// SessionTimeout is how long the group waits for a silent member (a crashed process) before
	// giving its partitions to the survivors. The broker bounds it (group.min.session.timeout.ms,
	// 6 s by default).
	SessionTimeout time.Duration
}

// DefaultConfig targets the local stack started by deploy/local/stack.
func DefaultConfig() Config {
	return Config{
		Brokers:           []string{"127.0.0.1:19092"},
		ClientID:          "revtrack",
		ReplicationFactor: 1,
		DeliveryTimeout:   10 * time.Second,
		Linger:            5 * time.Millisecond,
		// The broker's minimum: a dead member's partitions move after 6 s plus one rebalance, inside
		// the 10 s the operations promise (docs/OPERATIONS.md), with six heartbeats per session so a
		// slow moment does not drop a live member.
		SessionTimeout: 6 * time.Second,
	}
}

// RegisterFlags binds the Kafka flags.
func (c *Config) RegisterFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&c.Brokers, "kafka-brokers", c.Brokers, "Kafka bootstrap brokers, comma-separated host:port")
	fs.StringVar(&c.ClientID, "kafka-client-id", c.ClientID, "Kafka client ID prefix")
	fs.Int16Var(&c.ReplicationFactor, "kafka-replication-factor", c.ReplicationFactor, "replication factor for topics created at start-up (3 in production)")
	fs.DurationVar(&c.DeliveryTimeout, "kafka-delivery-timeout", c.DeliveryTimeout, "how long a record not yet sent to a broker stays buffered before it fails (a record already sent waits for its outcome; the edge bounds its own wait with --ingest-produce-timeout)")
	fs.DurationVar(&c.Linger, "kafka-linger", c.Linger, "producer linger before a batch is sent")
	fs.StringVar(&c.TopicSuffix, "kafka-topic-suffix", c.TopicSuffix, "suffix appended to every topic name (isolates test runs)")
	fs.StringVar(&c.InstanceID, "kafka-instance-id", c.InstanceID, "static consumer-group member ID of this process, stable across its restarts and unique among running processes (empty: hostname_httpport_command)")
	fs.DurationVar(&c.SessionTimeout, "kafka-session-timeout", c.SessionTimeout, "how long a silent consumer keeps its partitions before the group gives them to the others (within the broker's group.min/max.session.timeout.ms)")
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
	if err := validInstanceID(c.InstanceID); err != nil {
		errs = append(errs, fmt.Errorf("kafka-instance-id: %w", err))
	}
	if c.SessionTimeout < time.Second || c.SessionTimeout > 30*time.Minute {
		errs = append(errs, errors.New("kafka-session-timeout: must be between 1s and 30m"))
	}
	return errors.Join(errs...)
}

// Topic returns the full name of a declared topic, with the configured suffix.
func (c Config) Topic(name string) string { return name + c.TopicSuffix }
