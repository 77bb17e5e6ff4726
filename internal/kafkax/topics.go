package kafkax

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TopicSpec is the subset of a topic declaration that the broker needs.
type TopicSpec struct {
	Name        string
	Partitions  int32
	RetentionMs int64 // -1 keeps forever (compacted state)
	Compact     bool
}

// EnsureTopics creates every missing topic and waits until the broker's metadata lists all of them
// with their leaders, so that components started right after can produce and consume at once.
// Existing topics are left as they are: partitions are only ever increased by an operator, because
// that changes key-to-partition placement.
func EnsureTopics(ctx context.Context, cl *kgo.Client, c Config, specs []TopicSpec) error {
	adm := kadm.NewClient(cl)
	names := make([]string, 0, len(specs))
	for _, s := range specs {
		names = append(names, c.Topic(s.Name))
		cfg := map[string]*string{"retention.ms": strptr(strconv.FormatInt(s.RetentionMs, 10))}
		if s.Compact {
			cfg["cleanup.policy"] = strptr("compact")
		}
		name := c.Topic(s.Name)
		resp, err := adm.CreateTopic(ctx, s.Partitions, c.ReplicationFactor, cfg, name)
		if err == nil {
			err = resp.Err
		}
		if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
			return fmt.Errorf("create topic %s: %w", name, err)
		}
	}
	return waitVisible(ctx, adm, names)
}

func waitVisible(ctx context.Context, adm *kadm.Client, names []string) error {
	for {
		details, err := adm.ListTopics(ctx, names...)
		if err == nil && ready(details, names) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("topics not visible in metadata: %w", ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func ready(details kadm.TopicDetails, names []string) bool {
	for _, n := range names {
		d, ok := details[n]
		if !ok || d.Err != nil || len(d.Partitions) == 0 {
			return false
		}
		for _, p := range d.Partitions {
			if p.Err != nil || p.Leader < 0 {
				return false
			}
		}
	}
	return true
}

func strptr(s string) *string { return &s }
