// Package analystmrr writes the rows behind the analyst views of daily MRR per customer and MRR
// movements (analyst_customer_mrr_daily, analyst_mrr_movements; docs/ANALYSTS.md, migration 0022).
// MRR is computed by the reporting engine (query/reporting's timeline, the API's own rules), which
// no SQL view reproduces; this job runs that engine over each workspace app's whole history and
// stores the result, so that the views add up to the API. It is a scheduled job of the process
// component, not a Kafka consumer: the data lands through the other processors, and this job
// recomputes from what landed.
package analystmrr

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/query/reporting"
)

// Locker elects the process that runs a round (redisx.Locker).
type Locker interface {
	Lock(ctx context.Context, name string, ttl time.Duration) (func(context.Context) error, error)
}

// Workspaces lists the workspaces and their selected apps (controlplane.Store).
type Workspaces interface {
	Workspaces(ctx context.Context) ([]controlplane.Workspace, error)
}

// Job recomputes the analyst MRR rows.
type Job struct {
	Conn       driver.Conn      // writes the rows
	Reports    *reporting.Store // computes them (read-only)
	Workspaces Workspaces
	Locker     Locker
	// Lease names the Redis lease that elects one process per round (per database).
	Lease   string
	Log     *slog.Logger
	Metrics *Metrics
	// Now is the clock (time.Now when nil): its UTC date is the last day computed.
	Now func() time.Time
}

// scope is one (workspace, app), the unit of a recomputation.
type scope struct{ ws, app string }

// current is a scope's current generation.
type current struct {
	generation uint64
	inputs     string
	through    reporting.Date
}

// unselected is the inputs version of an empty generation written for an app no longer selected
// (or a deleted workspace): its rows leave the views.
const unselected = "unselected"

// Round is what one round did.
type Round struct {
	Scopes, Recomputed, Failed int
	Spans, Movements           int
}

func (j *Job) now() time.Time {
	if j.Now != nil {
		return j.Now().UTC()
	}
	return time.Now().UTC()
}

// Run runs a round about once per interval until ctx ends, in one process of the deployment at a
// time: a Redis lease of the interval's length, taken and never released, elects the process, as
// the analyst copies' schedule does. A failed round is logged; the next one tries again.
func (j *Job) Run(ctx context.Context, interval time.Duration) error {
	if interval <= 0 {
		<-ctx.Done()
		return nil
	}
	check := max(interval/4, time.Second)
	for {
		try, cancel := context.WithTimeout(ctx, time.Second)
		_, err := j.Locker.Lock(try, j.Lease, interval)
		cancel()
		if err == nil {
			r, err := j.RunOnce(ctx)
			switch {
			case ctx.Err() != nil:
				return nil
			case err != nil:
				j.Log.Error("analyst MRR: round failed", "recomputed", r.Recomputed, "failed", r.Failed, "err", err)
			case r.Recomputed > 0:
				j.Log.Info("analyst MRR recomputed", "apps", r.Recomputed, "of", r.Scopes, "spans", r.Spans, "movements", r.Movements)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(check):
		}
	}
}

// RunOnce recomputes every (workspace, app) whose reporting inputs changed since its current
// generation was computed, or whose current generation ends before today, and empties those no
// longer selected. A failed scope does not stop the others; the error joins theirs.
func (j *Job) RunOnce(ctx context.Context) (r Round, err error) {
	start := time.Now()
	defer func() {
		res := "ok"
		if err != nil {
			res = "failed"
		}
		j.Metrics.rounds.WithLabelValues(res).Inc()
		j.Metrics.seconds.Observe(time.Since(start).Seconds())
	}()
	// The version first: rows that land while a scope is computed change it again, so they are
	// computed next round at the latest.
	version, verr := j.Reports.BillingInputsVersion(ctx)
	if verr != nil {
		j.Log.Warn("analyst MRR: inputs version unreadable, recomputing every app", "err", verr)
		version = ""
	}
	currents, err := j.currents(ctx)
	if err != nil {
		return r, err
	}
	wss, err := j.Workspaces.Workspaces(ctx)
	if err != nil {
		return r, fmt.Errorf("list workspaces: %w", err)
	}
	today := reporting.DateOf(j.now())
	selected := map[scope]bool{}
	for _, w := range wss {
		for _, app := range w.SelectedAppIDs {
			selected[scope{w.ID, app}] = true
		}
	}
	var (
		errs       []error
		superseded = map[scope]uint64{}
	)
	for _, sc := range sortedScopes(selected, currents) {
		r.Scopes++
		cur, had := currents[sc]
		inputs := version
		if !selected[sc] {
			inputs = unselected
		}
		if had && inputs != "" && cur.inputs == inputs && (inputs == unselected || !cur.through.Before(today)) {
			continue
		}
		if !had && inputs == unselected {
			continue
		}
		spans, moves, err := j.recompute(ctx, sc, inputs, today, cur.generation)
		if err != nil {
			if ctx.Err() != nil {
				return r, ctx.Err()
			}
			r.Failed++
			j.Metrics.errors.Inc()
			errs = append(errs, fmt.Errorf("%s/%s: %w", sc.ws, sc.app, err))
			continue
		}
		r.Recomputed, r.Spans, r.Movements = r.Recomputed+1, r.Spans+spans, r.Movements+moves
		if had {
			superseded[sc] = cur.generation
		}
	}
	if err := j.deleteSuperseded(ctx, superseded); err != nil {
		errs = append(errs, err)
	}
	return r, errors.Join(errs...)
}

// sortedScopes are the selected scopes and those with a generation, in a stable order.
func sortedScopes(selected map[scope]bool, currents map[scope]current) []scope {
	var out []scope
	for sc := range selected {
		out = append(out, sc)
	}
	for sc := range currents {
		if !selected[sc] {
			out = append(out, sc)
		}
	}
	slices.SortFunc(out, func(a, b scope) int { return strings.Compare(a.ws+"\x00"+a.app, b.ws+"\x00"+b.app) })
	return out
}

// currents reads every scope's current generation.
func (j *Job) currents(ctx context.Context) (map[scope]current, error) {
	rows, err := j.Conn.Query(ctx, selectGenerations)
	if err != nil {
		return nil, fmt.Errorf("read generations: %w", err)
	}
	defer rows.Close()
	out := map[scope]current{}
	for rows.Next() {
		var (
			sc      scope
			c       current
			through uint32
		)
		if err := rows.Scan(&sc.ws, &sc.app, &c.generation, &c.inputs, &through); err != nil {
			return nil, fmt.Errorf("read generations: %w", err)
		}
		c.through = reporting.DateOf(time.Unix(int64(through)*86400, 0))
		out[sc] = c
	}
	return out, rows.Err()
}

// deleteSuperseded deletes, per recomputed scope, the generations older than the one the new
// generation replaced: a reader that chose that one just before the new one was recorded still
// finds its rows (until the next recomputation), and so does a workspace copy taken meanwhile.
func (j *Job) deleteSuperseded(ctx context.Context, older map[scope]uint64) error {
	if len(older) == 0 {
		return nil
	}
	var (
		cond strings.Builder
		args []any
	)
	for sc, gen := range older {
		if cond.Len() > 0 {
			cond.WriteString(deleteOr)
		}
		cond.WriteString(deleteCondition)
		args = append(args, sc.ws, sc.app, gen)
	}
	for _, head := range []string{deleteSpansHead, deleteMovementsHead} {
		if err := j.Conn.Exec(ctx, head+cond.String(), args...); err != nil {
			return fmt.Errorf("delete superseded generations: %w", err)
		}
	}
	return nil
}
