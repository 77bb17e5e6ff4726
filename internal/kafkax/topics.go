package kafkax

import (
	"context"
	"errors"
	"fmt"
	"strconv"

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

// EnsureTopics creates every missing topic. Existing topics are left as they are: partitions are
// only ever increased by an operator, because that changes key-to-partition placement.
func EnsureTopics(ctx context.Context, cl *kgo.Client, c Config, specs []TopicSpec) error {
	adm := kadm.NewClient(cl)
	for _, s := range specs {
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
	return nil
}

func strptr(s string) *string { return &s }
