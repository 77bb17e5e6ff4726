package benchkit

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/internal/redisx"
	"github.com/revtrack/revtrack/schemas"
)

// Admin is a Kafka admin client on brokers; its Close closes the connection too.
func Admin(brokers []string) (*kadm.Client, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return nil, err
	}
	return kadm.NewClient(cl), nil
}

// TopicNames are revtrack's topics as a run with the --kafka-topic-suffix suffix names them.
func TopicNames(suffix string) []string {
	var names []string
	for _, t := range schemas.Topics() {
		names = append(names, t.Name+suffix)
	}
	return names
}

// DeleteGroups deletes the consumer groups whose names start with prefix, so a later run does not
// resume from the offsets of an earlier one.
func DeleteGroups(ctx context.Context, adm *kadm.Client, prefix string) error {
	groups, err := adm.ListGroups(ctx)
	if err != nil {
		return fmt.Errorf("list consumer groups: %w", err)
	}
	var mine []string
	for _, g := range groups.Groups() {
		if strings.HasPrefix(g, prefix) {
			mine = append(mine, g)
		}
	}
	if len(mine) > 0 {
		if _, err := adm.DeleteGroups(ctx, mine...); err != nil {
			return fmt.Errorf("delete consumer groups: %w", err)
		}
	}
	return nil
}

// DeleteTopics deletes topics; one that does not exist (a run that stopped before creating it) is
// not an error. The broker deletes asynchronously: a topic can still be listed for a while after.
func DeleteTopics(ctx context.Context, adm *kadm.Client, topics []string) error {
	resps, err := adm.DeleteTopics(ctx, topics...)
	if err != nil {
		return fmt.Errorf("delete topics: %w", err)
	}
	var errs []error
	for _, r := range resps {
		if r.Err != nil && !strings.Contains(r.Err.Error(), "UNKNOWN_TOPIC") {
			errs = append(errs, fmt.Errorf("delete topic %s: %w", r.Topic, r.Err))
		}
	}
	return errors.Join(errs...)
}

// DeleteKeys unlinks every Redis key that starts with prefix, SCAN by SCAN (on each primary of a
// Redis Cluster), without blocking Redis the way KEYS and DEL would on a large data set.
func DeleteKeys(ctx context.Context, rdb redis.UniversalClient, prefix string) error {
	return redisx.DeleteMatching(ctx, rdb, prefix+"*")
}
