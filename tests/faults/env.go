package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/internal/clickhousex"
	"github.com/revtrack/revtrack/internal/redisx"
	"github.com/revtrack/revtrack/schemas"
)

const (
	faultsOrigin = "https://faults.example"
	faultsSlug   = "faults"
	faultsApp    = "faults-app"
	otherSlug    = "faults-other"
	otherApp     = "faults-other-app"
)

func randomID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// runNames isolate one run on the stack: its own database, topics, consumer groups and Redis keys,
// all removed at the end, so a run never sees what an earlier one left.
type runNames struct {
	id, database, topicSuffix, groupPrefix, redisPrefix string
}

func newRunNames() runNames {
	id := randomID()
	return runNames{id: id, database: "faults_" + id, topicSuffix: ".faults" + id, groupPrefix: "faults" + id,
		redisPrefix: "faults" + id + ":"}
}

// seeded is what a publisher has before sending events, plus a second workspace whose keys must
// not work for the first.
type seeded struct {
	src               controlplane.Source
	private           string
	adminKey          string
	otherSrc          controlplane.Source
	otherPrivate      string
	otherWorkspaceKey string
}

func seed(ctx context.Context, conn driver.Conn, rdb redis.UniversalClient, prefix string) (seeded, error) {
	st := controlplane.NewStore(conn, rdb, prefix)
	var s seeded
	mk := func(slug, app, platformID string) (controlplane.Source, string, string, error) {
		if _, err := st.CreateWorkspace(ctx, "faults", slug, "Faults "+slug, controlplane.StatusActive); err != nil {
			return controlplane.Source{}, "", "", fmt.Errorf("seed workspace: %w", err)
		}
		if err := st.PutApp(ctx, "faults", controlplane.App{ID: app, PlatformAppID: platformID, Name: "Faults " + app}); err != nil {
			return controlplane.Source{}, "", "", fmt.Errorf("seed app: %w", err)
		}
		if _, err := st.SetSelectedApps(ctx, "faults", slug, []string{app}); err != nil {
			return controlplane.Source{}, "", "", fmt.Errorf("seed selected apps: %w", err)
		}
		src, private, err := st.CreateSource(ctx, "faults", slug, app, "faults", []string{faultsOrigin})
		if err != nil {
			return controlplane.Source{}, "", "", fmt.Errorf("seed tracking source: %w", err)
		}
		key, _, err := st.CreateAPIKey(ctx, "faults", slug, "faults", "admin")
		if err != nil {
			return controlplane.Source{}, "", "", fmt.Errorf("seed API key: %w", err)
		}
		return src, private, key, nil
	}
	var err error
	if s.src, s.private, s.adminKey, err = mk(faultsSlug, faultsApp, "9101"); err != nil {
		return s, err
	}
	s.otherSrc, s.otherPrivate, s.otherWorkspaceKey, err = mk(otherSlug, otherApp, "9102")
	return s, err
}

// cleanup removes everything the run created on the stack: Redis keys and Kafka topics and groups
// first (quick), the database last (dropping its tables takes 18.16 a while), each step with its
// own deadline so a slow one does not starve the others.
func cleanup(ch clickhousex.Config, rc redisx.Config, brokers []string, n runNames) error {
	var errs []error
	step := func(limit time.Duration, f func(ctx context.Context) error) {
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		defer cancel()
		errs = append(errs, f(ctx))
	}
	step(30*time.Second, func(ctx context.Context) error {
		rdb, err := redisx.Open(ctx, rc)
		if err != nil {
			return err
		}
		defer rdb.Close()
		return redisx.DeleteMatching(ctx, rdb, n.redisPrefix+"*")
	})
	step(30*time.Second, func(ctx context.Context) error {
		cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
		if err != nil {
			return err
		}
		adm := kadm.NewClient(cl)
		defer adm.Close()
		groups, err := adm.ListGroups(ctx)
		if err != nil {
			return err
		}
		var mine []string
		for _, g := range groups.Groups() {
			if strings.HasPrefix(g, n.groupPrefix) {
				mine = append(mine, g)
			}
		}
		if len(mine) > 0 {
			if _, err := adm.DeleteGroups(ctx, mine...); err != nil {
				return err
			}
		}
		var topics []string
		for _, t := range schemas.Topics() {
			topics = append(topics, t.Name+n.topicSuffix)
		}
		_, err = adm.DeleteTopics(ctx, topics...)
		return err
	})
	step(2*time.Minute, func(ctx context.Context) error {
		ch.ReadTimeout = 2 * time.Minute
		srv, err := clickhousex.OpenServer(ctx, ch)
		if err != nil {
			return err
		}
		defer srv.Close()
		return srv.Exec(ctx, "DROP DATABASE IF EXISTS "+n.database)
	})
	return errors.Join(errs...)
}

// deadLetters counts the run's dead letters by consumer and reason, with a few event IDs each: the
// explanation of an acknowledged event that never landed.
func deadLetters(ctx context.Context, brokers []string, topic string) (map[string][]string, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return nil, err
	}
	var want int64
	ends.Each(func(o kadm.ListedOffset) { want += o.Offset })
	out := map[string][]string{}
	var got int64
	pctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	for got < want && pctx.Err() == nil {
		fs := cl.PollFetches(pctx)
		fs.EachRecord(func(r *kgo.Record) {
			got++
			var dl schemas.DeadLetter
			if json.Unmarshal(r.Value, &dl) != nil {
				return
			}
			var ev struct {
				EventID string `json:"eventId"`
			}
			_ = json.Unmarshal(dl.Value, &ev)
			k := dl.Consumer + ": " + dl.Reason + " (" + firstLine(dl.Error) + ")"
			out[k] = append(out[k], ev.EventID)
		})
	}
	for k := range out {
		sort.Strings(out[k])
	}
	return out, nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}
