package processors

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"
	"github.com/twmb/franz-go/pkg/kgo"
	"golang.org/x/sync/errgroup"

	"github.com/revtrack/revtrack/internal/kafkax"
	"github.com/revtrack/revtrack/schemas"
)

// Config tunes every consume loop of the process component.
type Config struct {
	// GroupPrefix prefixes consumer-group names; each consumer has its own group.
	GroupPrefix string
	MaxPoll     int
	Backoff     time.Duration
	MaxBackoff  time.Duration
}

// DefaultConfig batches up to 5,000 records: large enough for efficient ClickHouse inserts, small
// enough to bound memory and redelivery.
func DefaultConfig() Config {
	return Config{GroupPrefix: "revtrack", MaxPoll: 5000, Backoff: 200 * time.Millisecond, MaxBackoff: 10 * time.Second}
}

// RegisterFlags binds the processor flags.
func (c *Config) RegisterFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.GroupPrefix, "process-group-prefix", c.GroupPrefix, "prefix of the processors' consumer-group names")
	fs.IntVar(&c.MaxPoll, "process-max-poll", c.MaxPoll, "maximum records per consumed batch")
	fs.DurationVar(&c.Backoff, "process-backoff", c.Backoff, "first wait after a failed ClickHouse write")
	fs.DurationVar(&c.MaxBackoff, "process-max-backoff", c.MaxBackoff, "longest wait between ClickHouse write attempts")
}

// Validate checks the processor settings.
func (c Config) Validate() error {
	var errs []error
	if c.GroupPrefix == "" {
		errs = append(errs, errors.New("process-group-prefix: must not be empty"))
	}
	if c.MaxPoll < 1 || c.MaxPoll > 100000 {
		errs = append(errs, errors.New("process-max-poll: must be between 1 and 100000"))
	}
	if c.Backoff <= 0 || c.MaxBackoff < c.Backoff {
		errs = append(errs, errors.New("process-backoff must be positive and at most process-max-backoff"))
	}
	return errors.Join(errs...)
}

// Deps are the shared clients the processors use.
type Deps struct {
	Kafka      kafkax.Config
	ClickHouse driver.Conn
	// Producer writes dead letters (and, in later stages, derived topics).
	Producer *kgo.Client
	Registry prometheus.Registerer
	Log      *slog.Logger
	// RetentionCluster places retention on a ClickHouse cluster's local tables (zero: one node).
	RetentionCluster RetentionCluster
}

type runner interface {
	Run(ctx context.Context) error
	checkRecord(r *kgo.Record) error
}

// Service runs every consume loop of the process component.
type Service struct {
	loops   []runner
	checks  []RecordCheck
	clients []*kgo.Client
	log     *slog.Logger
	// retention is applied daily beside the loops (retention.go), on the cluster's local tables
	// when retentionCluster names one (retention_cluster.go).
	retention        RetentionConn
	retentionCluster RetentionCluster
}

// New builds the consumers. Nothing connects until Run.
func New(cfg Config, d Deps) (*Service, error) {
	s := &Service{log: d.Log, retentionCluster: d.RetentionCluster}
	if d.ClickHouse != nil {
		s.retention = d.ClickHouse
	}
	dlq := &DeadLetterWriter{Producer: d.Producer, Topic: d.Kafka.Topic(schemas.TopicDeadLetters)}
	type spec struct {
		name  string
		topic string
		build func(cl *kgo.Client, m *LoopMetrics, log *slog.Logger) runner
		opts  []kgo.Opt
	}
	sessions := NewSessionSink(d.ClickHouse, NewSessionMetrics(d.Registry, "sessionize"), cfg.MaxPoll)
	specs := []spec{
		{"land-server-events", schemas.TopicServerEvents, func(cl *kgo.Client, m *LoopMetrics, log *slog.Logger) runner {
			return &Loop[schemas.ServerEvent]{Name: "land-server-events", Consumer: cl, Decode: decodeJSON[schemas.ServerEvent],
				Sink:        &TableSink[schemas.ServerEvent]{Conn: d.ClickHouse, Insert: insertServerEvents, Row: serverEventRow},
				DeadLetters: dlq, Metrics: m, Log: log, MaxPoll: cfg.MaxPoll, Backoff: cfg.Backoff, MaxBackoff: cfg.MaxBackoff}
		}, nil},
		// Sessionizes browser events and lands them with their sessions (it replaced the plain
		// land-browser-events consumer; its new group starts at the beginning of the topic).
		{"sessionize", schemas.TopicBrowserEvents, func(cl *kgo.Client, m *LoopMetrics, log *slog.Logger) runner {
			return &Loop[sessionEvent]{Name: "sessionize", Consumer: cl, Decode: decodeSessionEvent, Sink: sessions,
				DeadLetters: dlq, Metrics: m, Log: log, MaxPoll: cfg.MaxPoll, Backoff: cfg.Backoff, MaxBackoff: cfg.MaxBackoff}
		}, sessions.ConsumerOpts()},
		// Lands what the platform sync connector (ingest/platformsync) pulled from the partner API.
		{"land-platform-records", schemas.TopicPlatformRecords, func(cl *kgo.Client, m *LoopMetrics, log *slog.Logger) runner {
			return platformLandingLoop(cfg, d.ClickHouse, dlq, cl, m, log)
		}, nil},
		// Links browsers to shops and lands the funnel's view of server events (identity_sink.go).
		// Its own group beside land-server-events, so neither waits for the other.
		{"identity-join", schemas.TopicServerEvents, func(cl *kgo.Client, m *LoopMetrics, log *slog.Logger) runner {
			return &Loop[schemas.ServerEvent]{Name: "identity-join", Consumer: cl, Decode: decodeIdentityEvent,
				Sink:        NewIdentitySink(d.ClickHouse, NewIdentityMetrics(d.Registry, "identity-join")),
				DeadLetters: dlq, Metrics: m, Log: log, MaxPoll: cfg.MaxPoll, Backoff: cfg.Backoff, MaxBackoff: cfg.MaxBackoff}
		}, nil},
		// Turns verified milestones of mapped sources into upload jobs for the ads uploader
		// (upload_match_sink.go). Its own group, so a slow click lookup delays no landing.
		{"upload-match", schemas.TopicServerEvents, func(cl *kgo.Client, m *LoopMetrics, log *slog.Logger) runner {
			return uploadMatchLoop(cfg, d, dlq, cl, m, log)
		}, nil},
	}
	for _, sp := range specs {
		group := cfg.GroupPrefix + "." + sp.name + d.Kafka.TopicSuffix
		cl, err := kafkax.NewConsumer(d.Kafka, sp.name, group, []string{d.Kafka.Topic(sp.topic)}, d.Registry, sp.opts...)
		if err != nil {
			s.Close()
			return nil, err
		}
		s.clients = append(s.clients, cl)
		loop := sp.build(cl, NewLoopMetrics(d.Registry, sp.name), d.Log.With("consumer", sp.name))
		s.loops = append(s.loops, loop)
		s.checks = append(s.checks, RecordCheck{Consumer: sp.name, Topic: sp.topic, Check: loop.checkRecord})
	}
	return s, nil
}

// Run runs every loop until ctx ends, then leaves the groups (committing what was written).
func (s *Service) Run(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	for _, l := range s.loops {
		g.Go(func() error { return l.Run(gctx) })
	}
	if s.retention != nil {
		g.Go(func() error {
			runRetentionDaily(gctx, s.retention, s.retentionCluster, s.log.With("job", "retention"))
			return nil
		})
	}
	err := g.Wait()
	s.Close()
	return err
}

// Close closes the consumers. The revoke hook commits marked offsets on the way out; a dynamic
// member leaves its group, a static one (kafkax.Config.InstanceID) stays for its restart.
func (s *Service) Close() {
	for _, cl := range s.clients {
		cl.Close()
	}
	s.clients = nil
}
