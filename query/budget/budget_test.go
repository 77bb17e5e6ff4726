package budget

import (
	"errors"
	"strings"
	"testing"

	"github.com/revtrack/revtrack/internal/testenv"
)

// testBudget is a budget on the test Redis whose buckets refill so slowly (one unit a minute, one
// forced recomputation an hour) that a test sees only what it spent.
func testBudget(t *testing.T, cfg Config) (*Budget, *RedisBuckets) {
	t.Helper()
	rdb, rc := testenv.Redis(t)
	cfg.RefillPerMinute, cfg.NoCacheRefillPerHour = 1, 1
	if cfg.ComputeWait == 0 {
		cfg.ComputeWait = DefaultConfig().ComputeWait
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	buckets := &RedisBuckets{Client: rdb, Prefix: rc.KeyPrefix}
	return New(cfg, buckets, nil), buckets
}

// left asserts that key's budget holds exactly n units: n can be taken, then not one more.
func left(t *testing.T, b *Budget, buckets *RedisBuckets, key string, n float64) {
	t.Helper()
	ctx := testenv.Ctx(t)
	if d, err := buckets.Take(ctx, "cost:"+key, b.cfg.cost(), n); err != nil || !d.OK {
		t.Fatalf("%s: %v units not left: %+v %v", key, n, d, err)
	}
	if d, err := buckets.Take(ctx, "cost:"+key, b.cfg.cost(), 1); err != nil || d.OK {
		t.Fatalf("%s: more than %v units left: %+v %v", key, n, d, err)
	}
}

func asLimit(t *testing.T, err error, reason error) *LimitError {
	t.Helper()
	var le *LimitError
	if !errors.As(err, &le) || !errors.Is(err, reason) {
		t.Fatalf("want a %v refusal, got %v", reason, err)
	}
	if le.RetryAfter <= 0 || le.RetryAfterSeconds() < 1 {
		t.Fatalf("refusal without a wait: %+v", le)
	}
	return le
}

func TestKeptAndComputedRequestsAreChargedTheirCost(t *testing.T) {
	b, buckets := testBudget(t, Config{Budget: 30, ComputedCost: 10, NoCacheBudget: 1, MaxConcurrent: 4})
	ctx := testenv.Ctx(t)
	for range 2 {
		call, err := b.Admit(ctx, "k1")
		if err != nil {
			t.Fatal(err)
		}
		// The parts of one request share its one charge.
		for range 3 {
			if err := Compute(WithCall(ctx, call)); err != nil {
				t.Fatal(err)
			}
		}
		call.Done()
	}
	left(t, b, buckets, "k1", 10)
	// The budget cannot pay for a kept response now: 429 with the time one unit takes to come back.
	_, err := b.Admit(ctx, "k1")
	if le := asLimit(t, err, ErrRateLimited); le.RetryAfterSeconds() > 60 {
		t.Fatalf("retry after %d s, but a unit comes back every minute", le.RetryAfterSeconds())
	}
	if err := b.Charge(ctx, "k1"); !errors.Is(err, ErrRateLimited) {
		t.Fatalf("tool call charge: %v", err)
	}
	// Another key has its own budget.
	if _, err := b.Admit(ctx, "k2"); err != nil {
		t.Fatal(err)
	}
	// Without a Call (the admin CLI, a store's own tests) nothing is limited.
	if err := Compute(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestAComputationThatCannotBePaidIsRefusedBeforeItRuns(t *testing.T) {
	b, buckets := testBudget(t, Config{Budget: 12, ComputedCost: 10, NoCacheBudget: 1, MaxConcurrent: 4})
	ctx := testenv.Ctx(t)
	first, err := b.Admit(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Compute(ctx); err != nil {
		t.Fatal(err)
	}
	first.Done()
	// Two units left: a kept response passes, a computation does not.
	call, err := b.Admit(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	defer call.Done()
	asLimit(t, call.Compute(ctx), ErrRateLimited)
	// The refusal is the request's answer for every part, and charged nothing.
	asLimit(t, call.Compute(ctx), ErrRateLimited)
	left(t, b, buckets, "k", 1)
}

func TestComputationsBeyondTheProcessCapAreRefusedAndRefunded(t *testing.T) {
	b, buckets := testBudget(t, Config{Budget: 100, ComputedCost: 10, NoCacheBudget: 1, MaxConcurrent: 1, ComputeWait: 1})
	ctx := testenv.Ctx(t)
	holder, err := b.Admit(ctx, "holder")
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Compute(ctx); err != nil {
		t.Fatal(err)
	}
	call, err := b.Admit(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	asLimit(t, call.Compute(ctx), ErrOverloaded)
	call.Done()
	// Only the admission was charged: nothing was computed.
	left(t, b, buckets, "k", 99)

	holder.Done()
	next, err := b.Admit(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	defer next.Done()
	if err := next.Compute(ctx); err != nil {
		t.Fatalf("a freed slot: %v", err)
	}
	// Done is idempotent: the slot is freed once.
	holder.Done()
	third, _ := b.Admit(ctx, "third")
	asLimit(t, third.Compute(ctx), ErrOverloaded)
	third.Done()
}

func TestForcedRecomputationsHaveTheirOwnAllowance(t *testing.T) {
	b, _ := testBudget(t, Config{Budget: 100, ComputedCost: 10, NoCacheBudget: 2, MaxConcurrent: 1})
	ctx := testenv.Ctx(t)
	call, err := b.Admit(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	defer call.Done()
	for i, want := range []bool{true, true, false, false} {
		got, err := call.ForceRecompute(ctx)
		if err != nil || got != want {
			t.Fatalf("forced recomputation %d: %v %v, want %v", i+1, got, err, want)
		}
	}
	other, _ := b.Admit(ctx, "other")
	if got, err := other.ForceRecompute(ctx); err != nil || !got {
		t.Fatalf("another key's allowance: %v %v", got, err)
	}
	other.Done()
}

func TestConfigValidation(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	c := DefaultConfig()
	c.Budget, c.ComputedCost, c.MaxConcurrent = 5, 10, 0
	err := c.Validate()
	for _, want := range []string{"query-budget", "query-max-concurrent-computations"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %s: %v", want, err)
		}
	}
}
