package uploader

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/internal/redisx"
	"github.com/revtrack/revtrack/uploader/google"
)

const (
	// maxPollInterval caps the exponential poll schedule: a request still processing after a day
	// is looked at daily until the attempts run out.
	maxPollInterval = 24 * time.Hour
	// pollBatch bounds the rows one pass over a workspace reads.
	pollBatch = 2000
)

// poller fetches the asynchronous diagnostics of accepted rows: one requestStatus:retrieve per
// request ID (not per row), first DiagnosticsDelay after acceptance, then with exponential backoff
// until the request reaches a terminal status or DiagnosticsMaxAttempts polls were made.
//
// How a status lands on rows: SUCCESS keeps them accepted ("processed"); FAILED rejects them with
// the reason codes. PARTIAL_SUCCESS rejects the row when the request held one event (live requests
// hold one event by default). For a request of several events the platform only counts errors per
// reason, so every row of the request shows the reason codes and counts, and they are rejected only
// when the error count reaches the record count (every event failed); otherwise they stay accepted.
// Warnings are kept in the message; unknown reasons verbatim.
//
// A poll that fails transiently moves its rows to retrying (the row keeps its request ID, so the
// dispatcher never resends it: a resend would be reported as DUPLICATE_TRANSACTION_ID); the next
// successful poll moves them on.
type poller struct {
	rows    rowStore
	due     *dueIndex
	creds   Credentials
	google  DataManager
	tokens  *tokenCache
	leases  *leases
	cfg     Config
	now     func() time.Time
	metrics *Metrics
	log     *slog.Logger
}

// Run polls every DispatchInterval until ctx ends. It finds the workspaces with due diagnostics
// through the due hints (due_hints.go).
func (p *poller) Run(ctx context.Context) error {
	return every(ctx, p.cfg.DispatchInterval, func(ctx context.Context) {
		if err := p.round(ctx); err != nil && ctx.Err() == nil {
			p.log.Warn("diagnostics round failed", "err", err)
		}
	})
}

// round polls the due diagnostics of every workspace this instance can lease. A workspace whose
// pass read a full pollBatch may have more due and gets another pass after the others (turns).
// Every poll takes its rows out of "due": a terminal status, a stop or a connection gone clears
// their schedule, and PROCESSING, a failed poll or a missing credential schedules the next poll at
// least twice DiagnosticsDelay ahead. So the passes only go on while a backlog lasts, and the round's length
// bounds them in any case.
func (p *poller) round(ctx context.Context) error {
	wss, err := p.due.workspaces(ctx, p.now())
	if err != nil {
		return err
	}
	return turns(ctx, wss, p.cfg.DispatchInterval, p.workspace)
}

// workspace makes one pass over ws under its lease. more reports that the pass read a full
// pollBatch, so that more rows may be due; otherwise the workspace's due hint is settled.
func (p *poller) workspace(ctx context.Context, ws string) (more bool, err error) {
	ls, err := p.leases.tryAcquire(ctx, "ads-poll:"+ws)
	if err != nil || ls == nil {
		return false, err
	}
	defer func() { _ = ls.Release(context.WithoutCancel(ctx)) }()
	n, err := p.pass(ctx, ls, ws)
	if err != nil || n == pollBatch {
		return err == nil, err
	}
	if err := p.due.settle(ctx, ws); err != nil && ctx.Err() == nil {
		p.log.Warn("due hint not settled", "workspace", ws, "err", err)
	}
	return false, nil
}

// pass polls the due rows of ws, request by request, and returns how many rows it read. When the
// workspace's connection is gone, every row still waiting for diagnostics, due or not, is marked
// OUTCOME_UNKNOWN at once (unknown): none of them can be polled any more.
func (p *poller) pass(ctx context.Context, ls *redisx.Lease, ws string) (int, error) {
	due, err := p.rows.pollDue(ctx, ws, p.now(), pollBatch)
	if err != nil || len(due) == 0 {
		return 0, err
	}
	conn, found, err := p.creds.Connection(ctx, ws)
	if err != nil {
		return 0, fmt.Errorf("read connection: %w", err)
	}
	gone := !found || !conn.Connected()
	if gone {
		if due, err = p.rows.pollPending(ctx, ws, pollBatch); err != nil {
			return 0, err
		}
	}
	for _, group := range byRequest(due) {
		if ok, err := ls.Extend(ctx); err != nil || !ok {
			return 0, errors.Join(errLeaseLost, err)
		}
		if gone {
			p.metrics.poll("no_connection")
			if err := p.rows.apply(ctx, p.metrics, p.unknown(group, conn, found)); err != nil {
				return 0, err
			}
			continue
		}
		if err := p.request(ctx, ws, conn, group); err != nil {
			return 0, err
		}
	}
	return len(due), nil
}

// byRequest groups rows by request ID, in first-seen order.
func byRequest(rows []Row) [][]Row {
	idx := map[string]int{}
	var out [][]Row
	for _, r := range rows {
		i, ok := idx[r.RequestID]
		if !ok {
			i = len(out)
			idx[r.RequestID] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], r)
	}
	return out
}

// request polls one request ID and records the result on its rows. Without a usable credential
// (none stored, or the platform refused it) the rows wait for a reconnect without spending a poll
// attempt: the attempts bound polls the platform answered or failed, not the time a user takes to
// reconnect.
func (p *poller) request(ctx context.Context, ws string, conn controlplane.AdConnection, rows []Row) error {
	reqID := rows[0].RequestID
	ts, err := p.tokens.get(ctx, ws, false)
	if errors.Is(err, controlplane.ErrNotFound) {
		p.metrics.poll("no_connection")
		return p.rows.apply(ctx, p.metrics, p.wait(rows, "diagnostics wait: "+msgReconnect))
	}
	if err != nil {
		return fmt.Errorf("open refresh token: %w", err)
	}
	st, err := p.retrieve(ctx, ts, reqID)
	if err != nil && google.Classify(err) == google.Unauthenticated {
		if ts, terr := p.tokens.get(ctx, ws, true); terr == nil {
			st, err = p.retrieve(ctx, ts, reqID)
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		log := p.log.With("workspace", ws, "request_id", reqID, "err", err)
		switch google.Classify(err) {
		case google.Permanent:
			p.metrics.poll("permanent")
			log.Info("diagnostics refused; polling stopped")
			return p.rows.apply(ctx, p.metrics, p.stop(rows, DiagnosticsUnavailable, "diagnostics unavailable: "+errMessage(err)))
		case google.Unauthenticated:
			p.metrics.poll("unauthenticated")
			p.tokens.refused(ctx, ws, err, p.log)
			return p.rows.apply(ctx, p.metrics, p.wait(rows, "diagnostics wait: "+msgReconnect))
		default:
			p.metrics.poll("transient")
			log.Warn("diagnostics poll failed; retrying")
			return p.rows.apply(ctx, p.metrics, p.later(rows, "diagnostics poll failed, retrying: "+errMessage(err), true))
		}
	}
	var dest google.DestinationStatus
	if len(st.Destinations) > 0 {
		dest = st.Destinations[0] // one destination per request
	}
	p.metrics.poll(strings.ToLower(dest.RequestStatus))
	return p.rows.apply(ctx, p.metrics, p.landed(rows, dest))
}

func (p *poller) retrieve(ctx context.Context, ts oauth2.TokenSource, reqID string) (google.RequestStatus, error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	return p.google.RetrieveStatus(ctx, ts, reqID)
}

// landed applies a request status to the request's rows.
func (p *poller) landed(rows []Row, dest google.DestinationStatus) []change {
	now := p.now()
	errs, warns := reasonSummary(dest.Errors), reasonSummary(dest.Warnings)
	var errCount int64
	codes := []string{}
	for _, e := range dest.Errors {
		errCount += e.Count
		codes = appendUnique(codes, e.Reason)
	}
	warnMsg := ""
	if warns != "" {
		warnMsg = "warnings: " + warns
	}
	switch dest.RequestStatus {
	case DiagnosticsSuccess:
		return p.finish(rows, now, StatusAccepted, DiagnosticsSuccess, []string{}, joinMessage("processed", warnMsg))
	case DiagnosticsFailed:
		return p.finish(rows, now, StatusRejected, DiagnosticsFailed, failedCodes(codes), joinMessage("processing failed: "+orNone(errs), warnMsg))
	case DiagnosticsPartialSuccess:
		events := int64(rows[0].RequestEvents)
		if events == 0 {
			events = dest.RecordCount
		}
		if events == 1 || dest.RecordCount > 0 && errCount >= dest.RecordCount {
			return p.finish(rows, now, StatusRejected, DiagnosticsPartialSuccess, failedCodes(codes),
				joinMessage("processing failed: "+orNone(errs), warnMsg))
		}
		msg := fmt.Sprintf("partially processed: %d of %d events of the request failed (%s); the platform does not say which",
			errCount, dest.RecordCount, orNone(errs))
		return p.finish(rows, now, StatusAccepted, DiagnosticsPartialSuccess, codes, joinMessage(msg, warnMsg))
	default: // PROCESSING, REQUEST_STATUS_UNKNOWN, or no status yet
		out := p.later(rows, joinMessage("diagnostics processing", warnMsg), false)
		for i := range out {
			if out[i].row.NextAttemptAt != nil {
				out[i].row.DiagnosticsStatus = DiagnosticsProcessing
			}
		}
		return out
	}
}

// failedCodes are the codes of a rejected row: the platform's, or ReasonProcessingFailedWithoutDetails
// when it reported the failure without error counts, so the row still says why it is rejected.
func failedCodes(codes []string) []string {
	if len(codes) == 0 {
		return []string{ReasonProcessingFailedWithoutDetails}
	}
	return codes
}

// finish records a terminal diagnostics result; polling stops.
func (p *poller) finish(rows []Row, now time.Time, status Status, diag string, codes []string, msg string) []change {
	out := make([]change, len(rows))
	for i, r := range rows {
		n := advance(r, now)
		n.PollAttempts++
		n.Status, n.DiagnosticsStatus, n.ReasonCodes, n.Message, n.NextAttemptAt = status, diag, codes, msg, nil
		out[i] = change{from: r.Status, row: n}
	}
	return out
}

// later schedules the next poll (DiagnosticsDelay·2^polls, capped), or stops polling once the
// attempts are used up. retrying moves the rows to retrying for a poll that failed transiently.
func (p *poller) later(rows []Row, msg string, retrying bool) []change {
	now := p.now()
	polls := rows[0].PollAttempts + 1
	if int(polls) >= p.cfg.DiagnosticsMaxAttempts {
		return p.stop(rows, DiagnosticsUnavailable,
			fmt.Sprintf("diagnostics unavailable after %d polls (%s); polling stopped: check the conversion in the advertising platform", polls, msg))
	}
	wait := maxPollInterval
	if polls < 20 {
		wait = min(p.cfg.DiagnosticsDelay<<polls, maxPollInterval)
	}
	next := now.Add(wait)
	out := make([]change, len(rows))
	for i, r := range rows {
		n := advance(r, now)
		n.PollAttempts = polls
		n.NextAttemptAt, n.Message, n.Status = &next, msg, StatusAccepted
		if retrying {
			n.Status = StatusRetrying
		}
		out[i] = change{from: r.Status, row: n}
	}
	return out
}

// wait schedules the next poll like later, without counting an attempt: no poll reached the
// platform with a credential it accepts.
func (p *poller) wait(rows []Row, msg string) []change {
	now := p.now()
	polls := rows[0].PollAttempts
	wait := maxPollInterval
	if polls < 20 {
		wait = min(p.cfg.DiagnosticsDelay<<max(polls, 1), maxPollInterval)
	}
	next := now.Add(wait)
	out := make([]change, len(rows))
	for i, r := range rows {
		n := advance(r, now)
		n.NextAttemptAt, n.Message, n.Status = &next, msg, StatusAccepted
		out[i] = change{from: r.Status, row: n}
	}
	return out
}

// unknown ends polling of rows whose connection is gone: the credential that sent them was
// revoked and erased, and a later connection may belong to another Google account, so their
// outcome can no longer be learned. They stay accepted (the platform did accept the ingestion) with
// DiagnosticsOutcomeUnknown and ReasonConnectionDisconnected; no attempt is counted, since no poll
// was made.
func (p *poller) unknown(rows []Row, conn controlplane.AdConnection, found bool) []change {
	now := p.now()
	why := "the workspace has no advertising connection any more"
	if found {
		why = "the advertising connection was disconnected on " + conn.UpdatedAt.UTC().Format(time.RFC3339)
	}
	msg := fmt.Sprintf("outcome unknown: %s before the platform's diagnostics of request %s could be read; "+
		"check the conversion in Google Ads", why, rows[0].RequestID)
	out := make([]change, len(rows))
	for i, r := range rows {
		n := advance(r, now)
		n.Status, n.DiagnosticsStatus, n.NextAttemptAt, n.Message = StatusAccepted, DiagnosticsOutcomeUnknown, nil, msg
		n.ReasonCodes = appendUnique(append([]string{}, r.ReasonCodes...), ReasonConnectionDisconnected)
		out[i] = change{from: r.Status, row: n}
	}
	return out
}

// stop ends polling without a terminal status: the ingestion was accepted, so the rows are.
func (p *poller) stop(rows []Row, diag, msg string) []change {
	now := p.now()
	out := make([]change, len(rows))
	for i, r := range rows {
		n := advance(r, now)
		n.PollAttempts++
		n.Status, n.DiagnosticsStatus, n.Message, n.NextAttemptAt = StatusAccepted, diag, msg, nil
		out[i] = change{from: r.Status, row: n}
	}
	return out
}

// reasonSummary writes reason counts as "REASON ×n, …", reasons as the platform sent them.
func reasonSummary(rc []google.ReasonCount) string {
	parts := make([]string, 0, len(rc))
	for _, c := range rc {
		parts = append(parts, fmt.Sprintf("%s ×%d", c.Reason, c.Count))
	}
	return strings.Join(parts, ", ")
}

func orNone(s string) string {
	if s == "" {
		return "no reason given"
	}
	return s
}
