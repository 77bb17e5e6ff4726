package uploader

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"golang.org/x/oauth2"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/internal/redisx"
	"github.com/revtrack/revtrack/uploader/google"
)

// requestTimeout bounds one call to the platform, so a hung connection cannot hold a workspace
// lease (it is extended before every request) for longer.
const requestTimeout = time.Minute

// recordTimeout bounds the retries of writing a successful request's outcome.
const recordTimeout = 30 * time.Second

var (
	// errStopWorkspace ends a workspace's round early: the platform failed in a way the next
	// request would most likely repeat (network, 5xx, authentication).
	errStopWorkspace = errors.New("stop workspace round")
	// errStopRound ends the whole round: the quota is per project, not per workspace.
	errStopRound = errors.New("stop round: quota exhausted")
	errLeaseLost = errors.New("workspace lease lost")
	// errNoToken: the workspace has no refresh token stored; its rows wait for a reconnect.
	errNoToken = errors.New("no refresh token")
)

// dispatcher sends due rows (queued, or retrying whose time has come) to events:ingest, one
// workspace at a time under that workspace's lease, and records each outcome as a new row version
// (docs/ADS_UPLOAD.md "Upload-queue row states"). It finds the workspaces with due rows through
// the due hints (due_hints.go).
type dispatcher struct {
	rows     rowStore
	due      *dueIndex
	creds    Credentials
	mappings Mappings
	google   DataManager
	tokens   *tokenCache
	leases   *leases
	cfg      Config
	backoff  backoff
	now      func() time.Time
	metrics  *Metrics
	log      *slog.Logger
	// pausedUntil: the project's quota was exhausted, no request before this. Only the Run
	// goroutine reads and writes it.
	pausedUntil time.Time
}

// Run dispatches every DispatchInterval until ctx ends.
func (d *dispatcher) Run(ctx context.Context) error {
	return every(ctx, d.cfg.DispatchInterval, func(ctx context.Context) {
		if err := d.round(ctx); err != nil && ctx.Err() == nil {
			d.log.Warn("dispatch round failed", "err", err)
		}
	})
}

// every runs f at once and then every interval until ctx ends.
func every(ctx context.Context, interval time.Duration, f func(context.Context)) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		f(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// round dispatches the due rows of every workspace this instance can lease. A pass over a
// workspace sends at most BatchSize due rows per mapping; a workspace that sent a full batch may
// have more and gets another pass after the others (turns). The quota hold ends the round.
func (d *dispatcher) round(ctx context.Context) error {
	now := d.now()
	if now.Before(d.pausedUntil) {
		return nil
	}
	wss, err := d.due.workspaces(ctx, now)
	if err != nil {
		return err
	}
	return turns(ctx, wss, d.cfg.DispatchInterval, d.workspace)
}

// turns gives every workspace of a round a pass. A pass that reports more (it took a full batch,
// so more may be due) earns the workspace another one once every other workspace of the round had
// its turn, so that a backlog goes out as fast as the platform takes it without holding the
// others back. The passes stop once the round has lasted interval: the next round starts at once
// (its tick is due) and picks up the workspaces that became due meanwhile. errStopRound ends the
// round; errStopWorkspace ends only that workspace's turns.
func turns(ctx context.Context, wss []string, interval time.Duration, pass func(context.Context, string) (more bool, err error)) error {
	started := time.Now()
	var errs []error
	for len(wss) > 0 {
		var again []string
		for _, ws := range wss {
			if ctx.Err() != nil {
				return nil
			}
			more, err := pass(ctx, ws)
			switch {
			case errors.Is(err, errStopRound):
				return errors.Join(errs...)
			case err != nil && !errors.Is(err, errStopWorkspace):
				errs = append(errs, fmt.Errorf("workspace %s: %w", ws, err))
			case err == nil && more:
				again = append(again, ws)
			}
		}
		if time.Since(started) >= interval {
			break
		}
		wss = again
	}
	return errors.Join(errs...)
}

// workspace makes one pass over a workspace under its lease. more reports that a mapping sent a
// full batch, so that more rows may be due; otherwise the workspace's due hint is settled.
func (d *dispatcher) workspace(ctx context.Context, ws string) (more bool, err error) {
	ls, err := d.leases.tryAcquire(ctx, "ads-dispatch:"+ws)
	if err != nil || ls == nil {
		return false, err // nil, nil: another instance is dispatching this workspace
	}
	defer func() { _ = ls.Release(context.WithoutCancel(ctx)) }()
	more, err = d.pass(ctx, ls, ws)
	if more || err != nil && !errors.Is(err, errStopWorkspace) {
		return more, err
	}
	// Rows this pass left retrying are scheduled; a failure here only costs another pass.
	if serr := d.due.settle(ctx, ws); serr != nil && ctx.Err() == nil {
		d.log.Warn("due hint not settled", "workspace", ws, "err", serr)
	}
	return false, err
}

// pass sends the due rows of one workspace, mapping by mapping, at most BatchSize per mapping.
func (d *dispatcher) pass(ctx context.Context, ls *redisx.Lease, ws string) (more bool, err error) {
	due, err := d.rows.due(ctx, ws, d.now(), d.cfg.BatchSize)
	if err != nil || len(due) == 0 {
		return false, err
	}
	conn, found, err := d.creds.Connection(ctx, ws)
	if err != nil {
		return false, fmt.Errorf("read connection: %w", err)
	}
	for _, group := range byMapping(due) {
		m, err := d.mappings.Get(ctx, ws, group[0].MappingID)
		var reason string
		switch {
		case errors.Is(err, controlplane.ErrNotFound):
			reason = "waiting: the mapping no longer exists"
		case err != nil:
			return false, fmt.Errorf("read mapping %s: %w", group[0].MappingID, err)
		default:
			reason = blocked(conn, found, m)
		}
		if reason != "" {
			if err := d.hold(ctx, group, reason); err != nil {
				return false, err
			}
			continue
		}
		sent, err := d.sendMapping(ctx, ls, conn, m, group)
		if err != nil {
			return false, err
		}
		// Held rows stay due: only rows that went out make another pass worth it.
		more = more || sent && len(group) == d.cfg.BatchSize
	}
	return more, nil
}

// byMapping splits rows (ordered by mapping) into one group per mapping.
func byMapping(rows []Row) [][]Row {
	var out [][]Row
	for i := 0; i < len(rows); {
		j := i + 1
		for j < len(rows) && rows[j].MappingID == rows[i].MappingID {
			j++
		}
		out = append(out, rows[i:j])
		i = j
	}
	return out
}

// sendMapping sends rows of one mapping in requests of the mode's batch size. A request carries one
// validateOnly flag, so the rows are split by mode (validateOnly): those filed while Validation only
// was on, and every row while it is on, go in validate-only requests of up to BatchSize events; the
// others go live in requests of LiveBatchSize (1 by default), so that the asynchronous diagnostics,
// which the platform reports per request, name the row. Each outcome is written before the next
// request: an accepted row whose acceptance was lost would be resent and diagnosed
// DUPLICATE_TRANSACTION_ID. The ingest quota (300 requests a minute) bounds these small inserts to
// a few per second. It reports whether every row was sent: without a stored credential the rest
// are held for a reconnect.
func (d *dispatcher) sendMapping(ctx context.Context, ls *redisx.Lease, conn controlplane.AdConnection, m controlplane.AdMapping, rows []Row) (bool, error) {
	type request struct {
		rows     []Row
		validate bool
	}
	var check, live []Row
	for _, r := range rows {
		if validateOnly(m, r) {
			check = append(check, r)
		} else {
			live = append(live, r)
		}
	}
	var reqs []request
	for start := 0; start < len(check); start += d.cfg.BatchSize {
		reqs = append(reqs, request{check[start:min(start+d.cfg.BatchSize, len(check))], true})
	}
	for start := 0; start < len(live); start += d.cfg.LiveBatchSize {
		reqs = append(reqs, request{live[start:min(start+d.cfg.LiveBatchSize, len(live))], false})
	}
	for i, req := range reqs {
		if ok, err := ls.Extend(ctx); err != nil || !ok {
			return false, errors.Join(errLeaseLost, err)
		}
		err := d.send(ctx, conn, m, req.validate, req.rows)
		if errors.Is(err, errNoToken) {
			var rest []Row
			for _, r := range reqs[i:] {
				rest = append(rest, r.rows...)
			}
			return false, d.hold(ctx, rest, msgReconnect)
		}
		if err != nil {
			return false, err
		}
	}
	return true, nil
}

// validateOnly says whether row r of mapping m goes out validate-only: when it was filed while
// Validation only was on (turning it off replays nothing: docs/ADS_UPLOAD.md, "Mappings" and
// "Validation only follows the row"), and whenever Validation only is on now.
func validateOnly(m controlplane.AdMapping, r Row) bool { return m.ValidationOnly || r.ValidationOnly }

// send makes one events:ingest request for batch (validate-only or live) and records its outcome;
// errNoToken when there is no credential to send with.
func (d *dispatcher) send(ctx context.Context, conn controlplane.AdConnection, m controlplane.AdMapping, validate bool, batch []Row) error {
	ws := conn.WorkspaceID
	if ws == "" {
		ws = batch[0].WorkspaceID
	}
	req := buildRequest(conn, m, batch, d.cfg.EventSource, validate)
	sent := sentWith{conn: conn, mapping: m, validateOnly: validate, events: len(batch)}
	ts, err := d.tokens.get(ctx, ws, false)
	if err != nil {
		if errors.Is(err, controlplane.ErrNotFound) {
			return errNoToken
		}
		return fmt.Errorf("open refresh token: %w", err)
	}
	start := time.Now()
	resp, err := d.ingest(ctx, ts, req)
	if err != nil && google.Classify(err) == google.Unauthenticated {
		// The access token may have been revoked or expired early: refresh once.
		if ts, terr := d.tokens.get(ctx, ws, true); terr == nil {
			resp, err = d.ingest(ctx, ts, req)
		}
	}
	took := time.Since(start)
	now := d.now()
	if err == nil {
		outcome := outcomeAccepted
		if validate {
			outcome = outcomeValidated
		}
		d.metrics.request(outcome, took)
		return d.record(ctx, d.succeeded(batch, sent, resp, now))
	}
	if ctx.Err() != nil {
		return ctx.Err() // shutting down mid-request: the rows stay due and are sent by the next owner
	}
	log := d.log.With("workspace", ws, "mapping", m.MappingID, "events", len(batch), "err", err)
	switch google.Classify(err) {
	case google.Quota:
		d.metrics.request(outcomeQuota, took)
		wait := d.backoff.quotaWait(err)
		d.pausedUntil = now.Add(wait)
		log.Warn("ingest quota exhausted; pausing dispatch", "wait", wait)
		if err := d.rows.apply(ctx, d.metrics, d.retrying(batch, sent, now, wait, "quota exhausted at the platform: "+errMessage(err))); err != nil {
			return err
		}
		return errStopRound
	case google.Unauthenticated:
		d.metrics.request(outcomeUnauthenticated, took)
		log.Warn("ingest unauthenticated after a token refresh; rows wait for a reconnect")
		d.tokens.refused(ctx, ws, err, d.log)
		if err := d.rows.apply(ctx, d.metrics, d.unauthenticated(batch, now)); err != nil {
			return err
		}
		return errStopWorkspace
	case google.Permanent:
		d.metrics.request(outcomePermanent, took)
		log.Info("ingest request rejected")
		return d.rows.apply(ctx, d.metrics, d.rejected(batch, sent, err, now))
	default:
		d.metrics.request(outcomeTransient, took)
		log.Warn("ingest failed; rows will be retried")
		changes := make([]change, len(batch))
		for i, r := range batch {
			changes[i] = d.retrying(batch[i:i+1], sent, now, d.backoff.transient(r.Attempts+1), "temporary failure: "+errMessage(err))[0]
		}
		if err := d.rows.apply(ctx, d.metrics, changes); err != nil {
			return err
		}
		return errStopWorkspace
	}
}

// record writes a successful request's outcome, retrying for a little while and through a
// shutdown: a lost acceptance would make the row be sent again (and diagnosed a duplicate).
func (d *dispatcher) record(ctx context.Context, changes []change) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	wait := 100 * time.Millisecond
	for {
		err := d.rows.apply(ctx, d.metrics, changes)
		if err == nil {
			return nil
		}
		d.log.Warn("recording an accepted request failed; retrying", "err", err, "in", wait)
		select {
		case <-ctx.Done():
			return fmt.Errorf("record outcome: %w", err)
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

func (d *dispatcher) ingest(ctx context.Context, ts oauth2.TokenSource, req google.IngestRequest) (google.IngestResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	return d.google.Ingest(ctx, ts, req)
}

// hold records why rows wait without being sent. A row gets a new version only when its message
// changes, so a long disconnect does not write a version per round.
func (d *dispatcher) hold(ctx context.Context, rows []Row, reason string) error {
	now := d.now()
	var changes []change
	for _, r := range rows {
		if r.Message == reason {
			continue
		}
		n := advance(r, now)
		n.Message = reason
		changes = append(changes, change{from: r.Status, row: n})
	}
	return d.rows.apply(ctx, d.metrics, changes)
}
