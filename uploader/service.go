package uploader

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kgo"
	"golang.org/x/oauth2"
	"golang.org/x/sync/errgroup"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/internal/kafkax"
	"github.com/revtrack/revtrack/schemas"
	"github.com/revtrack/revtrack/uploader/google"
)

// Credentials gives the dispatcher and the poller a workspace's connection (its destination
// accounts and state) and its refresh token. RefreshToken returns an error wrapping
// controlplane.ErrNotFound when no credential is stored. CredentialRefused shows on the connection
// that the platform refused refreshToken, unless another credential was stored meanwhile.
type Credentials interface {
	Connection(ctx context.Context, workspaceID string) (controlplane.AdConnection, bool, error)
	RefreshToken(ctx context.Context, workspaceID string) (string, error)
	CredentialRefused(ctx context.Context, actor, workspaceID, refreshToken, message string) (bool, error)
}

// Mappings reads a mapping; an unknown one is an error wrapping controlplane.ErrNotFound.
type Mappings interface {
	Get(ctx context.Context, workspaceID, mappingID string) (controlplane.AdMapping, error)
}

// TokenSources turns a refresh token into an access-token source (*google.OAuth).
type TokenSources interface {
	TokenSource(ctx context.Context, refreshToken string) oauth2.TokenSource
}

// DataManager is the part of the Data Manager API client the uploader calls (*google.DataManager).
type DataManager interface {
	Ingest(ctx context.Context, ts oauth2.TokenSource, req google.IngestRequest) (google.IngestResponse, error)
	RetrieveStatus(ctx context.Context, ts oauth2.TokenSource, requestID string) (google.RequestStatus, error)
}

var (
	_ Credentials  = (*controlplane.AdConnections)(nil)
	_ Mappings     = (*controlplane.AdMappings)(nil)
	_ TokenSources = (*google.OAuth)(nil)
	_ DataManager  = (*google.DataManager)(nil)
)

// leaseTTL is how long a workspace lease lasts without renewal; it is renewed before each request
// (which is bounded by requestTimeout), so a crashed instance frees its workspaces within it.
const leaseTTL = 2 * requestTimeout

// Deps are the clients and stores the uploader uses.
type Deps struct {
	ClickHouse driver.Conn
	Redis      redis.UniversalClient
	// RedisPrefix prefixes the workspace lease and due-hint keys (redisx.Config.KeyPrefix).
	RedisPrefix string
	Kafka       kafkax.Config
	// Producer writes dead letters; nil makes the service open (and close) its own.
	Producer    *kgo.Client
	Credentials Credentials
	Mappings    Mappings
	// Tokens and DataManager default to Google's clients at Config.Endpoints() (the fake when
	// --ads-google-base-url is set), with the configured OAuth client.
	Tokens      TokenSources
	DataManager DataManager
	Registry    prometheus.Registerer
	Log         *slog.Logger
	// Now is the clock (nil: time.Now); tests move it to make retries and diagnostics due.
	Now func() time.Time
}

// Service runs the queue consumer, the dispatcher and the diagnostics poller.
type Service struct {
	queue      *queueConsumer
	dispatcher *dispatcher
	poller     *poller
	rows       *Rows
	tokens     *tokenCache
	clients    []*kgo.Client
}

// New builds the uploader. The consumer's client is created (it connects lazily); nothing is sent
// until Run.
func New(cfg Config, d Deps) (*Service, error) {
	switch {
	case d.ClickHouse == nil || d.Redis == nil:
		return nil, errors.New("uploader: ClickHouse and Redis are required")
	case d.Credentials == nil || d.Mappings == nil:
		return nil, errors.New("uploader: Credentials and Mappings are required")
	}
	if d.Tokens == nil {
		d.Tokens = google.NewOAuth(cfg.OAuthClientID, cfg.OAuthClientSecret, cfg.OAuthRedirectURL, cfg.Endpoints(), cfg.HTTPClient())
	}
	if d.DataManager == nil {
		d.DataManager = google.NewDataManager(cfg.Endpoints().DataManagerURL, cfg.HTTPClient())
	}
	log := d.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	now := d.Now
	if now == nil {
		now = time.Now
	}
	m := NewMetrics(d.Registry)
	hints := &dueHints{client: d.Redis, prefix: d.RedisPrefix, log: log.With("component", "due-hints")}
	store := rowStore{conn: d.ClickHouse, hints: hints}
	s := &Service{rows: &Rows{store: store, metrics: m, now: now}, tokens: newTokenCache(d.Tokens, d.Credentials)}

	producer := d.Producer
	if producer == nil {
		p, err := kafkax.NewProducer(d.Kafka, "upload-dead-letters", d.Registry)
		if err != nil {
			return nil, err
		}
		producer = p
		s.clients = append(s.clients, p)
	}
	group := cfg.GroupPrefix + "." + queueConsumerName + d.Kafka.TopicSuffix
	cl, err := kafkax.NewConsumer(d.Kafka, queueConsumerName, group, []string{d.Kafka.Topic(schemas.TopicUploadJobs)}, d.Registry)
	if err != nil {
		s.Close()
		return nil, err
	}
	s.clients = append(s.clients, cl)

	s.queue = &queueConsumer{consumer: cl, producer: producer, deadTopic: d.Kafka.Topic(schemas.TopicDeadLetters),
		rows: store, mappings: d.Mappings, maxAge: cfg.MaxEventAge, maxPoll: cfg.MaxPoll,
		backoff: cfg.Backoff, maxBackoff: cfg.MaxBackoff, now: now, metrics: m, log: log.With("loop", "queue")}
	ls := &leases{client: d.Redis, prefix: d.RedisPrefix, ttl: leaseTTL}
	s.dispatcher = &dispatcher{rows: store, due: &dueIndex{kind: hintDispatch, rows: store, hints: hints}, creds: d.Credentials, mappings: d.Mappings, google: d.DataManager,
		tokens: s.tokens, leases: ls, cfg: cfg, now: now, metrics: m, log: log.With("loop", "dispatch"),
		backoff: backoff{base: cfg.RetryBase, max: cfg.RetryMax, quota: cfg.QuotaWait}}
	s.poller = &poller{rows: store, due: &dueIndex{kind: hintPoll, rows: store, hints: hints}, creds: d.Credentials, google: d.DataManager, tokens: s.tokens, leases: ls,
		cfg: cfg, now: now, metrics: m, log: log.With("loop", "diagnostics")}
	return s, nil
}

// Rows is the queue's list and Retry API (transitions counted in the service's metrics).
func (s *Service) Rows() *Rows { return s.rows }

// Run runs the consumer, the dispatcher and the poller until ctx ends, then leaves the consumer
// group (committing what was written). A request in flight at shutdown is abandoned before its
// outcome is recorded; its rows stay due, and a resend is deduplicated by the platform.
func (s *Service) Run(ctx context.Context) error {
	s.tokens.base = ctx
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return s.queue.Run(gctx) })
	g.Go(func() error { return s.dispatcher.Run(gctx) })
	g.Go(func() error { return s.poller.Run(gctx) })
	err := g.Wait()
	s.Close()
	return err
}

// Close leaves the consumer group and closes the clients the service opened.
func (s *Service) Close() {
	for i := len(s.clients) - 1; i >= 0; i-- {
		s.clients[i].Close()
	}
	s.clients = nil
}
