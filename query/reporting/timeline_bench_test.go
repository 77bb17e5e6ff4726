package reporting

import (
	"os"
	"strconv"
	"testing"

	"github.com/revtrack/revtrack/internal/testenv/pipeline"
	"github.com/revtrack/revtrack/query/reporting/reportingtest"
)

// BenchmarkTimelineVsSummary compares, on generated data on the test stack (TIMELINE_BENCH_N
// customers, default 3,000), a computed summary with a 365-point daily MRR series, 12 months of
// movements and a year of cohorts: the engine's cost should be a small multiple of the summary's
// (docs/BENCHMARKS.md has the bench-scale figures; issue 14 asks series and movements ≤ 2×).
func BenchmarkTimelineVsSummary(b *testing.B) {
	n := 3000
	if v, err := strconv.Atoi(os.Getenv("TIMELINE_BENCH_N")); err == nil {
		n = v
	}
	db := pipeline.Migrated(b).Conn
	fx := reportingtest.New(db, "ws")
	generated(fx, "app-g", n, 7)
	if err := fx.FlushContext(b.Context()); err != nil {
		b.Fatal(err)
	}
	s := New(db, WithClock(reportingtest.Clock), WithResultCache(0))
	year := Range{From: MustDate("2025-04-01"), To: MustDate("2026-03-31")}
	req := Request{Scope: scopeOf("app-g"), Range: Range{From: MustDate("2026-03-02"), To: MustDate("2026-03-31")}, CustomerScope: ScopeIncluded}
	yearReq := Request{Scope: scopeOf("app-g"), Range: year, CustomerScope: ScopeIncluded}
	b.Run("summary", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.Summary(b.Context(), req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("series mrr daily 365", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.Series(b.Context(), MetricMRR, IntervalDay, yearReq); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("movements monthly 12", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.Movements(b.Context(), MovementsRequest{Request: yearReq, Interval: IntervalMonth}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cohorts by install", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.Cohorts(b.Context(), CohortsRequest{Request: yearReq, By: CohortByInstall}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
