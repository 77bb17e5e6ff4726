package processors

import (
	"context"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/revtrack/revtrack/schemas"
)

// shopLookupChunk shops per lookup keep the bound IN list well under ClickHouse's max_query_size.
const shopLookupChunk = 1000

// IdentitySink is the identity-join consumer's sink (rules in identity.go). Per polled batch of
// server events it:
//
//  1. inserts the batch's links into acquisition_links (shop_attribution follows through its
//     materialized view, as part of the same insert);
//  2. reads the first link of the shops named by events without an acquisition ID (after step 1,
//     so links made by this very batch count);
//  3. inserts one funnel_events row per event, resolved;
//  4. re-reads the first links of every shop the batch linked or named without an acquisition,
//     and rewrites that shop's rows (from any batch) whose resolution differs. Doing this after
//     step 3 closes the race with another group member that links the shop concurrently: either
//     its re-check sees our rows, or ours sees its link.
//
// Every step is idempotent (links and states are re-insertable; rows are derived from the batch
// and what ClickHouse holds; versions rank resolutions), so a retry, a bisected half or a batch
// redelivered after a crash writes the same result. Attribution fields are not copied into
// funnel_events: readers join acquisitions at query time, so browser history that lands after
// the server event still attributes it.
type IdentitySink struct {
	conn    SessionConn
	metrics *IdentityMetrics
	links   *TableSink[linkRow]
	funnel  *TableSink[funnelRow]
}

// NewIdentitySink returns the sink.
func NewIdentitySink(conn SessionConn, m *IdentityMetrics) *IdentitySink {
	return &IdentitySink{conn: conn, metrics: m,
		links:  &TableSink[linkRow]{Conn: conn, Insert: insertAcquisitionLinks, Row: linkRowValues},
		funnel: &TableSink[funnelRow]{Conn: conn, Insert: insertFunnelEvents, Row: funnelRowValues},
	}
}

// Write joins and lands one batch; see IdentitySink.
func (s *IdentitySink) Write(ctx context.Context, batch []schemas.ServerEvent) error {
	links := linksOf(batch)
	if err := writeIfAny(ctx, s.links, links); err != nil {
		return err
	}
	known, err := s.shopLinks(ctx, shopsWithoutAcquisition(batch))
	if err != nil {
		return err
	}
	rows := make([]funnelRow, len(batch))
	for i, e := range batch {
		rows[i] = funnelRowOf(e, known)
	}
	if err := writeIfAny(ctx, s.funnel, rows); err != nil {
		return err
	}
	repaired, err := s.recheck(ctx, shopsToRecheck(links, rows))
	if err != nil {
		return err
	}
	s.metrics.links.Add(float64(len(links)))
	for _, r := range rows {
		s.metrics.resolved.WithLabelValues(resolutionLabel(r.ResolvedBy)).Inc()
	}
	s.metrics.repaired.Add(float64(repaired))
	return nil
}

// recheck rewrites the rows of the given shops whose resolution is behind shop_attribution and
// returns how many it rewrote.
func (s *IdentitySink) recheck(ctx context.Context, shops []shopKey) (int, error) {
	if len(shops) == 0 {
		return 0, nil
	}
	links, err := s.shopLinks(ctx, shops)
	if err != nil {
		return 0, err
	}
	if len(links) == 0 {
		return 0, nil // no shop has a link yet: nothing can resolve
	}
	var fix []funnelRow
	err = forChunks(shops, func(set []clickhouse.GroupSet) error {
		rows, err := s.conn.Query(ctx, selectShopFunnelRows, set)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				r  funnelRow
				at time.Time
				ms uint16
			)
			if err := rows.Scan(&r.WorkspaceID, &r.SourceID, &r.AppID, &r.EventID, &r.Name, &at, &ms, &r.AcqSourceID,
				&r.AcqID, &r.ResolvedBy, &r.Shop, &r.AmountCents, &r.Currency, &r.Version); err != nil {
				return err
			}
			r.OccurredAt = at.UTC().Add(time.Duration(ms) * time.Millisecond)
			if next, changed := r.resolve(links); changed {
				fix = append(fix, next)
			}
		}
		return rows.Err()
	})
	if err != nil {
		return 0, fmt.Errorf("read funnel rows to recheck: %w", err)
	}
	return len(fix), writeIfAny(ctx, s.funnel, fix)
}

// shopLinks reads the first link of each given shop that has one. Failures are transient: the
// loop retries the batch.
func (s *IdentitySink) shopLinks(ctx context.Context, shops []shopKey) (map[shopKey]shopLink, error) {
	out := map[shopKey]shopLink{}
	err := forChunks(shops, func(set []clickhouse.GroupSet) error {
		rows, err := s.conn.Query(ctx, selectShopLinks, set)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				k shopKey
				l shopLink
			)
			if err := rows.Scan(&k.WorkspaceID, &k.AppID, &k.Shop, &l.SourceID, &l.AcquisitionID, &l.EventID, &l.LinkedAt); err != nil {
				return err
			}
			l.LinkedAt = l.LinkedAt.UTC()
			out[k] = l
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("read shop links: %w", err)
	}
	return out, nil
}

// forChunks calls f with the shops as bound tuple lists of at most shopLookupChunk.
func forChunks(shops []shopKey, f func([]clickhouse.GroupSet) error) error {
	for start := 0; start < len(shops); start += shopLookupChunk {
		part := shops[start:min(start+shopLookupChunk, len(shops))]
		set := make([]clickhouse.GroupSet, len(part))
		for i, k := range part {
			set[i] = clickhouse.GroupSet{Value: []any{k.WorkspaceID, k.AppID, k.Shop}}
		}
		if err := f(set); err != nil {
			return err
		}
	}
	return nil
}

func linkRowValues(l linkRow) []any {
	return []any{l.SourceID, l.AcquisitionID, l.WorkspaceID, l.AppID, l.Shop, l.FirstEventID, l.LinkedAt, linkVersion(l.LinkedAt)}
}

func funnelRowValues(r funnelRow) []any {
	at, ms := utc(r.OccurredAt)
	return []any{r.WorkspaceID, r.SourceID, r.AppID, r.EventID, r.Name, at, ms, r.AcqSourceID, r.AcqID, r.ResolvedBy,
		r.Shop, r.AmountCents, r.Currency, r.Version}
}

// IdentityMetrics counts what the identity join did.
type IdentityMetrics struct {
	links    prometheus.Counter
	resolved *prometheus.CounterVec
	repaired prometheus.Counter
}

// NewIdentityMetrics registers the identity join's metrics, labelled with the consumer name.
func NewIdentityMetrics(reg prometheus.Registerer, consumer string) *IdentityMetrics {
	r := prometheus.WrapRegistererWith(prometheus.Labels{"consumer": consumer}, reg)
	m := &IdentityMetrics{
		links: prometheus.NewCounter(prometheus.CounterOpts{Name: "revtrack_identity_links_written_total",
			Help: "Acquisition-to-shop links written (one per acquisition and shop per batch)."}),
		resolved: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "revtrack_identity_funnel_events_total",
			Help: "Server events written to the funnel, by how their acquisition was resolved when first written."},
			[]string{"resolved_by"}),
		repaired: prometheus.NewCounter(prometheus.CounterOpts{Name: "revtrack_identity_funnel_events_reresolved_total",
			Help: "Funnel rows rewritten because their shop gained an earlier or a first link."}),
	}
	r.MustRegister(m.links, m.resolved, m.repaired)
	return m
}

// resolutionLabel names the empty resolution for the metric label.
func resolutionLabel(by string) string {
	if by == resolvedNone {
		return "none"
	}
	return by
}
