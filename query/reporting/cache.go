package reporting

import (
	"container/list"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/revtrack/revtrack/query/budget"
)

// Computed responses are kept with the version of the data they were computed from, and served
// again only while every table they read still has that version. A request reads the version first
// (one query on system.parts, a few milliseconds); the response is then either the kept one or
// computed again, so every call still reflects the latest synced data: a row that landed before
// the request changed its table's version, and a response computed after the version was read can
// only include more recent rows, never fewer.
//
// A table's version is what only a change of its data changes, partition by partition: the first
// and last block number its active parts cover and the greatest mutation applied to them. Every
// insert takes a block number greater than any before (the table's one increment), a mutation takes
// a number from the same increment, and a dropped partition is missing from the set. A merge changes
// none of them: it joins neighbouring block ranges of one partition and keeps the data the readers
// see (they all de-duplicate), so kept responses survive the background merges of a busy server.
// A part's data version is its first block number until a mutation rewrites it, and then the
// mutation's number, greater than the part's last block; a merged part that joins a mutated part
// with a newer one hides the mutation again, which only discards what was kept.

// Tables each kind of response reads; a change in any of them discards it.
var (
	summaryTables = slices.Concat(billingTables, activityTables, syncTables) // summary.go splits them by part
	listTables    = []string{"reporting_customers", "customer_exclusions", "reporting_charges", "reporting_charge_billing",
		"reporting_events", "reporting_transactions", "reporting_customer_payments", "reporting_usage_charges", "reporting_usage_events"}
)

// DefaultCacheEntries is how many computed responses a store keeps unless WithResultCache says
// otherwise: a summary takes a few kilobytes, a page of 200 customers about a hundred.
const DefaultCacheEntries = 256

// WithResultCache keeps up to entries computed summaries and customer pages (0: none).
func WithResultCache(entries int) Option {
	return func(s *Store) {
		s.cache = nil
		if entries > 0 {
			s.cache = newResultCache(entries)
		}
	}
}

// resultCache is a least-recently-used set of computed responses.
type resultCache struct {
	mu    sync.Mutex
	max   int
	order *list.List // of *cacheEntry, most recently used first
	byKey map[string]*list.Element
}

type cacheEntry struct {
	key, version string
	value        any
}

func newResultCache(entries int) *resultCache {
	return &resultCache{max: entries, order: list.New(), byKey: map[string]*list.Element{}}
}

// get returns the value kept for key if it was computed at version.
func (c *resultCache) get(key, version string) (any, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[key]
	if !ok {
		return nil, false
	}
	e := el.Value.(*cacheEntry)
	if e.version != version {
		return nil, false
	}
	c.order.MoveToFront(el)
	return e.value, true
}

func (c *resultCache) put(key, version string, value any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[key]; ok {
		el.Value = &cacheEntry{key: key, version: version, value: value}
		c.order.MoveToFront(el)
		return
	}
	c.byKey[key] = c.order.PushFront(&cacheEntry{key: key, version: version, value: value})
	for c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.byKey, last.Value.(*cacheEntry).key)
	}
}

// selectDataVersion is the version of each of a set of tables of the current database: how many
// partitions it has and a hash of each one's block range and greatest data version.
const selectDataVersion = `SELECT table, count(), sum(cityHash64(partition_id, first_block, last_block, last_version))
FROM (
    SELECT table, partition_id, min(min_block_number) AS first_block, max(max_block_number) AS last_block,
        max(if(data_version > max_block_number, data_version, 0)) AS last_version
    FROM system.parts
    WHERE database = currentDatabase() AND active AND table IN ?
    GROUP BY table, partition_id
)
GROUP BY table`

// tableVersions are the versions of a set of tables, as read by one query on system.parts.
type tableVersions map[string]string

// of is the version of the given tables as one string. A table without parts (empty) is absent
// from it, which is a version too. nil versions (the read failed) give "": nothing is kept.
func (v tableVersions) of(tables []string) string {
	if v == nil {
		return ""
	}
	parts := make([]string, 0, len(tables)+1)
	for _, t := range tables {
		if tv, ok := v[t]; ok {
			parts = append(parts, t+":"+tv)
		}
	}
	slices.Sort(parts)
	return "v" + strings.Join(parts, ",")
}

// dataVersions reads the version of each of the given tables.
func (s *Store) dataVersions(ctx context.Context, tables []string) (tableVersions, error) {
	names := make([]any, len(tables))
	for i, t := range tables {
		names[i] = t
	}
	rows, err := s.conn.Query(ctx, selectDataVersion, clickhouse.GroupSet{Value: names})
	if err != nil {
		return nil, fmt.Errorf("read data version: %w", err)
	}
	defer rows.Close()
	out := tableVersions{}
	for rows.Next() {
		var (
			table            string
			partitions, hash uint64
		)
		if err := rows.Scan(&table, &partitions, &hash); err != nil {
			return nil, fmt.Errorf("read data version: %w", err)
		}
		out[table] = fmt.Sprintf("%d:%x", partitions, hash)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read data version: %w", err)
	}
	return out, nil
}

// readVersions is dataVersions for the cache: nil without a cache, and a failed read is logged and
// gives nil (the response is still right, only computed).
func (s *Store) readVersions(ctx context.Context, tables []string) tableVersions {
	if s.cache == nil {
		return nil
	}
	v, err := s.dataVersions(ctx, tables)
	if err != nil {
		s.log.Warn("reporting cache bypassed", "err", err)
		return nil
	}
	return v
}

type noCacheKey struct{}

// WithNoCache marks a request whose response must be computed from the data, not taken from the
// kept ones: the client's `Cache-Control: no-cache`, which asks for a response from the origin. The
// computed response is still kept for the requests that follow, as any computed one is.
func WithNoCache(ctx context.Context) context.Context {
	return context.WithValue(ctx, noCacheKey{}, true)
}

func noCache(ctx context.Context) bool {
	v, _ := ctx.Value(noCacheKey{}).(bool)
	return v
}

// cached returns a response kept under one of keys, when the tables are still at the version it was
// computed at, else computes it with compute and keeps it under the last key when keep says it may
// be kept. A request marked WithNoCache skips the kept ones but keeps what it computed: the version
// is read first all the same, so that what it keeps is never labelled newer than the data it read.
func cached[T any](ctx context.Context, s *Store, keys []string, tables []string, compute func() (T, error), keep func(T) bool) (T, error) {
	return cachedAt(ctx, s, s.readVersions(ctx, tables).of(tables), keys, compute, keep)
}

// cachedAt is cached with the version already read ("": compute only, keep nothing).
func cachedAt[T any](ctx context.Context, s *Store, version string, keys []string, compute func() (T, error), keep func(T) bool) (T, error) {
	if s.cache != nil && version != "" && !noCache(ctx) {
		for _, key := range keys {
			if v, ok := s.cache.get(key, version); ok {
				return v.(T), nil
			}
		}
	}
	// Only now is the request known to compute: that is what its budget is charged for.
	if err := budget.Compute(ctx); err != nil {
		var zero T
		return zero, err
	}
	if s.cache == nil || version == "" {
		return compute()
	}
	v, err := compute()
	if err == nil && keep(v) {
		s.cache.put(keys[len(keys)-1], version, v)
	}
	return v, err
}

// cacheKey joins the parts of a request that decide its response.
func cacheKey(kind string, sc Scope, parts ...string) string {
	apps := append([]string(nil), sc.AppIDs...)
	slices.Sort(apps)
	return strings.Join(append([]string{kind, sc.WorkspaceID, strings.Join(apps, "\x1f")}, parts...), "\x1e")
}
