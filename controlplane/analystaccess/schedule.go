package analystaccess

import (
	"context"
	"time"
)

// Schedule refreshes every workspace's copy about once per interval until ctx ends, in one process
// of the deployment at a time: a Redis lease of the interval's length, taken and never released,
// elects the process that runs the round. A failed round is logged; the next one tries again.
func (m *Manager) Schedule(ctx context.Context, interval time.Duration) error {
	if m.configured() != nil || interval <= 0 {
		<-ctx.Done()
		return nil
	}
	check := max(interval/4, time.Second)
	for {
		try, cancel := context.WithTimeout(ctx, time.Second)
		_, err := m.Locker.Lock(try, "analyst-access-refresh:"+m.ClickHouse.Database, interval)
		cancel()
		if err == nil {
			start := time.Now()
			n, err := m.RefreshAll(ctx)
			switch {
			case ctx.Err() != nil:
				return nil
			case err != nil:
				m.Log.Error("analyst copies: refresh round failed in part", "refreshed", n, "err", err)
			default:
				m.Log.Info("analyst copies refreshed", "workspaces", n, "took", time.Since(start).Round(time.Millisecond))
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(check):
		}
	}
}
