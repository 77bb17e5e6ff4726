package controlplane

import (
	"context"
	"strings"
)

// CountOccurrences counts rows of the key tables and audit log, and Redis values under the store's
// prefix, that contain s. Tests use it to prove secrets are stored only as hashes.
func (s *Store) CountOccurrences(ctx context.Context, needle string) (int, error) {
	var n uint64
	if err := s.ch.QueryRow(ctx, `SELECT
    (SELECT count() FROM api_keys WHERE position(key_hash, ?) > 0 OR position(name, ?) > 0)
  + (SELECT count() FROM tracking_sources WHERE position(private_key_hash, ?) > 0 OR position(name, ?) > 0)
  + (SELECT count() FROM audit_log WHERE position(details, ?) > 0)`, needle, needle, needle, needle, needle).Scan(&n); err != nil {
		return 0, err
	}
	total := int(n)
	keys, err := s.rdb.Keys(ctx, s.prefix+"*").Result()
	if err != nil {
		return 0, err
	}
	for _, k := range keys {
		if strings.Contains(k, needle) {
			total++
		}
		if v, err := s.rdb.Get(ctx, k).Result(); err == nil && strings.Contains(v, needle) {
			total++
		}
	}
	return total, nil
}
