package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/internal/clickhousex"
	"github.com/revtrack/revtrack/internal/health"
	"github.com/revtrack/revtrack/internal/kafkax"
	"github.com/revtrack/revtrack/internal/redisx"
	"github.com/revtrack/revtrack/schemas/bootstrap"
)

// infra holds the shared clients of one process.
type infra struct {
	redis      redis.UniversalClient
	clickhouse driver.Conn
	producer   *kgo.Client // nil when the command needs no Kafka
}

// openInfra connects to Redis and ClickHouse, and to Kafka when withKafka, after applying the
// migrations and creating the topics if auto-migrate is on.
func (a *app) openInfra(ctx context.Context, withKafka bool, reg prometheus.Registerer) (*infra, error) {
	in := &infra{}
	var err error
	if in.redis, err = redisx.Open(ctx, a.cfg.Redis); err != nil {
		return nil, err
	}
	if a.cfg.AutoMigrate {
		res, err := bootstrap.Migrate(ctx, a.cfg.ClickHouse, in.redis, a.cfg.Redis.KeyPrefix, a.log)
		if err != nil {
			in.close(ctx)
			return nil, fmt.Errorf("migrate: %w", err)
		}
		a.log.Debug("schema current", "version", res.Current, "applied", len(res.Applied))
	}
	if in.clickhouse, err = clickhousex.Open(ctx, a.cfg.ClickHouse); err != nil {
		in.close(ctx)
		return nil, err
	}
	if !withKafka {
		return in, nil
	}
	if in.producer, err = kafkax.NewProducer(a.cfg.Kafka, "producer", reg); err != nil {
		in.close(ctx)
		return nil, err
	}
	if err := in.producer.Ping(ctx); err != nil {
		in.close(ctx)
		return nil, fmt.Errorf("kafka ping %v: %w", a.cfg.Kafka.Brokers, err)
	}
	if a.cfg.AutoMigrate {
		if err := bootstrap.EnsureTopics(ctx, in.producer, a.cfg.Kafka); err != nil {
			in.close(ctx)
			return nil, err
		}
	}
	return in, nil
}

// readiness checks the backing services named (health.Needs of the process's components) and no
// others: an outage of a service the components do not need must not take them out of rotation.
func (in *infra) readiness(services []string) *health.Readiness {
	r := health.NewReadiness()
	for _, s := range services {
		switch s {
		case health.ClickHouse:
			r.Add(s, health.CheckFunc(func(ctx context.Context) error { return in.clickhouse.Ping(ctx) }))
		case health.Redis:
			r.Add(s, health.CheckFunc(func(ctx context.Context) error { return in.redis.Ping(ctx).Err() }))
		case health.Kafka:
			if in.producer != nil {
				r.Add(s, health.CheckFunc(in.producer.Ping))
			}
		}
	}
	return r
}

// close flushes the producer, then closes the stores: the reverse of the order they were opened in.
func (in *infra) close(ctx context.Context) error {
	var errs []error
	if in.producer != nil {
		if err := in.producer.Flush(ctx); err != nil {
			errs = append(errs, fmt.Errorf("flush producer: %w", err))
		}
		in.producer.Close()
	}
	if in.clickhouse != nil {
		errs = append(errs, in.clickhouse.Close())
	}
	if in.redis != nil {
		errs = append(errs, in.redis.Close())
	}
	return errors.Join(errs...)
}
