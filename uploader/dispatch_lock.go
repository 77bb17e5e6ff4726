package uploader

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/revtrack/revtrack/internal/redisx"
)

// leases are per-workspace Redis leases (redisx.Lease) so that several uploader instances never
// send or poll the same rows at once. An instance that finds a workspace leased skips it for the
// round instead of waiting. Should a lease expire mid-request, the stable transaction IDs make the
// platform deduplicate the resend.
type leases struct {
	client redis.UniversalClient
	prefix string
	ttl    time.Duration
}

// tryAcquire takes name's lease, or returns nil when another holder has it.
func (l *leases) tryAcquire(ctx context.Context, name string) (*redisx.Lease, error) {
	return redisx.TryAcquire(ctx, l.client, l.prefix+"lock:"+name, l.ttl)
}
