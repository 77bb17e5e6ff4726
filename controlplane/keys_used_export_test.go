package controlplane

import "time"

// SetClock replaces the store's clock, for tests of time-dependent records (keys_used.go).
func (s *Store) SetClock(now func() time.Time) { s.now = now }
