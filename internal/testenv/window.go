package testenv

import (
	"testing"
	"time"
)

// AwayFromMinuteEdge waits, when less than margin is left in the current wall-clock minute, until
// the next minute starts. The edge's rate limits count in fixed one-minute windows, so a test that
// spends a small limit and expects the next request refused would see a fresh window, and a 2xx,
// when its requests straddle the boundary.
func AwayFromMinuteEdge(t testing.TB, margin time.Duration) {
	t.Helper()
	now := time.Now()
	next := now.Truncate(time.Minute).Add(time.Minute)
	if left := next.Sub(now); left < margin {
		time.Sleep(left + 50*time.Millisecond)
	}
}
