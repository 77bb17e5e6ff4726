package kafkax

import (
	"context"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/plugin/kprom"
)

// NewProducer returns a client for producing. franz-go's producer is idempotent by default; the
// options below make the guarantees explicit so a reviewer need not know the defaults. extra options
// come last (tests route the connections through a proxy with kgo.Dialer).
func NewProducer(c Config, name string, reg prometheus.Registerer, extra ...kgo.Opt) (*kgo.Client, error) {
	opts := append(common(c, name, reg),
		// An event acknowledged to a caller must survive the loss of the leader.
		kgo.RequiredAcks(kgo.AllISRAcks()),
		// Idempotence stays on (the franz-go default), so a retried batch is not written twice.
		// lz4 rather than zstd: the edge produces many small batches, where zstd's CPU cost showed
		// in the ingest profile (docs/BENCHMARKS.md) and its better ratio buys little.
		kgo.ProducerBatchCompression(kgo.Lz4Compression(), kgo.NoCompression()),
		// Bounds how long a record that was never sent may wait in the buffer, so an unreachable
		// broker does not pile records up in memory. It cannot bound a record already sent: the
		// idempotent producer waits for that record's outcome (failing it could break the sequence
		// and lose the broker's duplicate check), however long the broker takes. Callers that must
		// answer in time bound their own wait (the edge: --ingest-produce-timeout).
		kgo.RecordDeliveryTimeout(c.DeliveryTimeout),
		kgo.ProducerLinger(c.Linger),
		// Unknown topics fail fast instead of waiting: topics are created at start-up.
		kgo.UnknownTopicRetries(2),
	)
	return kgo.NewClient(append(opts, extra...)...)
}

// NewConsumer returns a group consumer that commits only records the consume loop has marked, and
// the loop marks a record only after its sink accepted it. Marks (rather than "commit what was
// polled") keep a shutdown or revoke in the middle of a failing sink write from committing records
// that never reached ClickHouse. Rebalances wait while a polled batch is in flight.
//
// With c.InstanceID the consumer is a static member: Close commits but does not leave the group,
// so a restart within the session timeout resumes its partitions with no rebalance, and a process
// that does not come back hands them over after the session timeout.
func NewConsumer(c Config, name, group string, topics []string, reg prometheus.Registerer, extra ...kgo.Opt) (*kgo.Client, error) {
	opts := append(common(c, name, reg),
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topics...),
		kgo.AutoCommitMarks(),
		kgo.BlockRebalanceOnPoll(),
		kgo.OnPartitionsRevoked(func(ctx context.Context, cl *kgo.Client, _ map[string][]int32) {
			_ = cl.CommitMarkedOffsets(ctx)
		}),
		// A new group starts at the beginning so nothing produced before its first start is lost.
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		// Partitions a member gains in a rebalance join its fetches only when the fetch already
		// waiting on the broker returns: an idle member would sit up to the 5 s default on a
		// takeover. One second costs an idle consumer one small request a second.
		kgo.FetchMaxWait(time.Second),
	)
	if c.SessionTimeout > 0 {
		opts = append(opts,
			// A crashed member is noticed after this long, not the 45 s default.
			kgo.SessionTimeout(c.SessionTimeout),
			// Survivors learn of a rebalance at their next heartbeat, so a short interval is part
			// of the takeover time; six per session keep one slow heartbeat from expiring a member.
			kgo.HeartbeatInterval(c.SessionTimeout/6))
	}
	if c.InstanceID != "" {
		opts = append(opts, kgo.InstanceID(memberID(c.InstanceID, name)))
	}
	return kgo.NewClient(append(opts, extra...)...)
}

func common(c Config, name string, reg prometheus.Registerer) []kgo.Opt {
	opts := []kgo.Opt{
		kgo.SeedBrokers(c.Brokers...),
		kgo.ClientID(c.ClientID + "-" + name),
		// Topics are created at start-up and used right after; a short minimum metadata age lets a
		// client see them within half a second instead of the 5 s default.
		kgo.MetadataMinAge(500 * time.Millisecond),
	}
	if reg != nil {
		// One subsystem per client: kprom registers fixed label sets, so clients cannot share names.
		// kprom's default details (bytes by node and topic) plus batches and records, whose ratio
		// is the records per produce batch that the linger buys (docs/BENCHMARKS.md, issue 17).
		m := kprom.NewMetrics("revtrack_kafka", kprom.Subsystem(strings.ReplaceAll(name, "-", "_")), kprom.Registerer(reg),
			kprom.FetchAndProduceDetail(kprom.ByNode, kprom.ByTopic, kprom.UncompressedBytes, kprom.Batches, kprom.Records))
		opts = append(opts, kgo.WithHooks(m))
	}
	return opts
}
