package platformsync

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
)

// The estimate of a walk's time left is the remaining history at the rate the walk has moved so
// far, bounded by the row limit and the budget; it is null while nothing supports a rate.
func TestProgressEstimate(t *testing.T) {
	day := 24 * time.Hour
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	secs := func(p *int64) any {
		if p == nil {
			return nil
		}
		return *p
	}
	newWalk := func(direction string, from, target time.Time, began time.Time) *tracker {
		tr := newTracker()
		tr.walk(3, StreamTransactions, direction, from, target)
		tr.began = began
		return tr
	}
	now := time.Now()

	// Forward, 10 of 40 days in 5 s: 30 days left at 2 days/s is 15 s.
	tr := newWalk("forward", t0, t0.Add(40*day), now.Add(-5*time.Second))
	tr.page(25, t0.Add(10*day))
	if sp, ok := tr.snapshot(now); !ok || secs(sp.Walk.EstimatedSecondsLeft) != int64(15) || sp.TransactionsCount != 25 || sp.Pages != 1 ||
		sp.Walk.Target == nil || sp.Walk.Steps != walkSteps {
		t.Errorf("forward: %+v %+v", sp, sp.Walk)
	}
	// Backward toward the first record, same rate, walking back in time.
	tr = newWalk("backward", t0, time.Time{}, now.Add(-5*time.Second))
	if sp, _ := tr.snapshot(now); sp.Walk.EstimatedSecondsLeft != nil || sp.Walk.Target != nil {
		t.Errorf("backward without a target: %+v", sp.Walk)
	}
	tr.bound(t0.Add(-40*day), 0, time.Time{})
	tr.began = now.Add(-5 * time.Second)
	tr.page(10, time.Time{})
	tr.reach(t0.Add(-10 * day))
	if sp, _ := tr.snapshot(now); secs(sp.Walk.EstimatedSecondsLeft) != int64(15) || sp.Walk.ReachedAt != t0.Add(-10*day) {
		t.Errorf("backward: %+v", sp.Walk)
	}
	// The row limit ends it sooner: 10 loaded in 5 s, 20 left, 10 s.
	tr.bound(t0.Add(-40*day), 30, time.Time{})
	tr.began = now.Add(-5 * time.Second)
	if sp, _ := tr.snapshot(now); secs(sp.Walk.EstimatedSecondsLeft) != int64(10) {
		t.Errorf("row limit: %v", secs(sp.Walk.EstimatedSecondsLeft))
	}
	// And the budget sooner still.
	tr.bound(t0.Add(-40*day), 30, now.Add(3*time.Second))
	tr.began = now.Add(-5 * time.Second)
	if sp, _ := tr.snapshot(now); secs(sp.Walk.EstimatedSecondsLeft) != int64(3) {
		t.Errorf("budget: %v", secs(sp.Walk.EstimatedSecondsLeft))
	}
	// No rate yet: under a second, or not moved.
	for name, tr := range map[string]*tracker{
		"too early": newWalk("forward", t0, t0.Add(day), now.Add(-500*time.Millisecond)),
		"not moved": newWalk("forward", t0, t0.Add(day), now.Add(-time.Minute)),
	} {
		if name == "too early" {
			tr.page(1, t0.Add(time.Hour))
		}
		if sp, _ := tr.snapshot(now); sp.Walk.EstimatedSecondsLeft != nil {
			t.Errorf("%s: estimate %d", name, *sp.Walk.EstimatedSecondsLeft)
		}
	}
	// Arrived: 0, whatever the rate.
	tr = newWalk("backward", t0, t0, now)
	if sp, _ := tr.snapshot(now); secs(sp.Walk.EstimatedSecondsLeft) != int64(0) {
		t.Errorf("arrived: %v", secs(sp.Walk.EstimatedSecondsLeft))
	}
	// Nothing published before the first walk starts.
	if _, ok := newTracker().snapshot(now); ok {
		t.Error("snapshot before any walk")
	}
}

// fakeProgressClient records progress writes, failing them while fail is set.
type fakeProgressClient struct {
	mu   sync.Mutex
	sets []string
	fail bool
}

func (f *fakeProgressClient) SetArgs(ctx context.Context, key string, value any, a redis.SetArgs) *redis.StatusCmd {
	f.mu.Lock()
	defer f.mu.Unlock()
	cmd := redis.NewStatusCmd(ctx)
	if f.fail {
		cmd.SetErr(errors.New("redis down"))
		return cmd
	}
	f.sets = append(f.sets, key)
	return cmd
}

func (f *fakeProgressClient) Del(ctx context.Context, keys ...string) *redis.IntCmd {
	return redis.NewIntCmd(ctx)
}

func (f *fakeProgressClient) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.sets)
}

// A walk's start is published at once, not an interval later; a failed publish is counted and the
// publisher goes on.
func TestProgressPublisher(t *testing.T) {
	fc := &fakeProgressClient{}
	p := &ProgressPublisher{Client: fc, Prefix: "p:", Interval: time.Hour}
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	tr := newTracker()
	stop := p.run(context.Background(), slog.New(slog.DiscardHandler), m, "ws", "app", "run", tr)
	defer stop()
	time.Sleep(50 * time.Millisecond)
	if n := fc.count(); n != 0 {
		t.Fatalf("%d publishes before any walk", n)
	}
	tr.walk(1, StreamTransactions, "forward", time.Unix(0, 0), time.Unix(3600, 0))
	waitFor(t, func() bool { return fc.count() == 1 })
	if fc.sets[0] != "p:platformsync:progress:ws/app/run" {
		t.Errorf("key %q", fc.sets[0])
	}
	fc.mu.Lock()
	fc.fail = true
	fc.mu.Unlock()
	tr.walk(2, StreamLifecycleEvents, "forward", time.Unix(0, 0), time.Unix(3600, 0))
	waitFor(t, func() bool { return failures(t, reg) == 1 })
	fc.mu.Lock()
	fc.fail = false
	fc.mu.Unlock()
	tr.walk(3, StreamLifecycleEvents, "backward", time.Unix(0, 0), time.Time{})
	waitFor(t, func() bool { return fc.count() == 2 })
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
	}
}

func failures(t *testing.T, reg *prometheus.Registry) float64 {
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "revtrack_platform_sync_progress_publish_failures_total" {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	return 0
}
