package rediscluster

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/revtrack/revtrack/ingest"
	"github.com/revtrack/revtrack/internal/redisx"
	"github.com/revtrack/revtrack/internal/testenv"
)

// BenchmarkAdmit measures the edge's admission script (rate window and event-ID reservation, one
// round trip) on whatever Redis the test environment names, one Redis or a cluster, so the two can
// be compared in one run: over 64 workspaces, whose hash tags spread over a cluster's primaries.
func BenchmarkAdmit(b *testing.B) {
	rc := testenv.RedisConfig(b)
	rdb, err := redisx.Open(testenv.Ctx(b), rc)
	if err != nil {
		b.Fatal(err)
	}
	defer rdb.Close()
	dedup := &ingest.RedisDeduper{Client: rdb, Prefix: rc.KeyPrefix, TTL: time.Minute, PendingTTL: 10 * time.Second}
	admitter := &ingest.RedisAdmitter{Limiter: &ingest.RedisLimiter{Client: rdb, Prefix: rc.KeyPrefix}, Deduper: dedup}
	limit := ingest.Limit{N: 1 << 30, Window: time.Minute}
	var n atomic.Int64
	ctx := testenv.Ctx(b)
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			scope := fmt.Sprintf("{ws-%d}:src", i%64)
			if _, _, err := admitter.Admit(ctx, "srv:"+scope, limit, scope, fmt.Sprint("e-", i), "t"); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
