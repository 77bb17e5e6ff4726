package uploader

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// List limits.
const (
	DefaultListLimit = 50
	MaxListLimit     = 500
)

var (
	// ErrRowNotFound: no upload-queue row with that ID in the workspace.
	ErrRowNotFound = errors.New("upload row not found")
	// ErrNotRetryable: the row exists but a Retry cannot help (see RetryError for why).
	ErrNotRetryable = errors.New("upload row cannot be retried")
	// ErrInvalidFilter: a List filter or cursor is malformed.
	ErrInvalidFilter = errors.New("invalid upload row filter")
)

// Why a Retry was refused: a closed vocabulary for error bodies and logs.
const (
	RetryRefusedNotRejected     = "not_rejected"
	RetryRefusedNoClickEvidence = "no_click_evidence"
	RetryRefusedLocalReason     = "local_reason"
)

// RetryError is a refused Retry; it matches ErrNotRetryable with errors.Is.
type RetryError struct {
	RowID  string
	Status Status
	// Reason is one of the RetryRefused* values.
	Reason string
}

func (e *RetryError) Error() string {
	switch e.Reason {
	case RetryRefusedNotRejected:
		return fmt.Sprintf("upload row %s is %s; only rejected rows can be retried", e.RowID, e.Status)
	case RetryRefusedNoClickEvidence:
		return fmt.Sprintf("upload row %s no longer holds click evidence; it cannot be uploaded", e.RowID)
	default:
		return fmt.Sprintf("upload row %s was not uploaded for a local reason (event before the mapping or outside the platform's window); resending cannot change that", e.RowID)
	}
}

func (e *RetryError) Unwrap() error { return ErrNotRetryable }

// Rows is the upload queue as the admin surfaces see it: list rows and retry rejected ones. It
// needs only ClickHouse, so the query component can serve it without running the uploader.
type Rows struct {
	store   rowStore
	metrics *Metrics
	now     func() time.Time
}

// NewRows returns the queue's read and Retry API on a ClickHouse connection. Without WithDueHints,
// a retried row waits for the uploader's next rescan of the queue (at most a minute) instead of
// its next round.
func NewRows(conn RowsConn, opts ...RowsOption) *Rows {
	r := &Rows{store: rowStore{conn: conn}, now: time.Now}
	for _, o := range opts {
		o(r)
	}
	return r
}

// RowsOption configures NewRows.
type RowsOption func(*Rows)

// WithDueHints tells the uploader of retried rows through its due hints in Redis (the Redis
// client and key prefix of the uploader's Deps), so that they are sent in its next round.
func WithDueHints(client redis.UniversalClient, prefix string) RowsOption {
	return func(r *Rows) {
		r.store.hints = &dueHints{client: client, prefix: prefix, log: slog.Default().With("component", "due-hints")}
	}
}

// ListFilter selects rows of one workspace. Zero values do not filter; From and To bound the
// row's creation time (From inclusive, To exclusive).
type ListFilter struct {
	Status    Status
	MappingID string
	From, To  time.Time
	// Limit is 1..MaxListLimit; 0 means DefaultListLimit.
	Limit int
	// Cursor is NextCursor of the previous page.
	Cursor string
}

// ListPage is one page of rows, newest first. NextCursor is empty on the last page.
type ListPage struct {
	Rows       []Row  `json:"rows"`
	NextCursor string `json:"nextCursor,omitempty"`
}

var statuses = map[Status]bool{StatusQueued: true, StatusUnattributed: true, StatusValidated: true,
	StatusAccepted: true, StatusRetrying: true, StatusRejected: true}

// listQuery builds the List query and its arguments from fixed fragments (rows_sql.go).
func listQuery(workspaceID string, f ListFilter) (string, []any, error) {
	if f.Status != "" && !statuses[f.Status] {
		return "", nil, fmt.Errorf("%w: status %q", ErrInvalidFilter, f.Status)
	}
	if f.Limit < 0 || f.Limit > MaxListLimit {
		return "", nil, fmt.Errorf("%w: limit must be between 1 and %d", ErrInvalidFilter, MaxListLimit)
	}
	if !f.From.IsZero() && !f.To.IsZero() && !f.From.Before(f.To) {
		return "", nil, fmt.Errorf("%w: from must be before to", ErrInvalidFilter)
	}
	var b strings.Builder
	b.WriteString(selectLatestRows + listWhere)
	args := []any{workspaceID}
	if f.MappingID != "" {
		b.WriteString(listWhereMapping)
		args = append(args, f.MappingID)
	}
	if !f.From.IsZero() {
		b.WriteString(listWhereFrom)
		args = append(args, f.From.UTC())
	}
	if !f.To.IsZero() {
		b.WriteString(listWhereTo)
		args = append(args, f.To.UTC())
	}
	b.WriteString(groupRows + listHaving)
	if f.Status != "" {
		b.WriteString(listHavingStatus)
		args = append(args, string(f.Status))
	}
	if f.Cursor != "" {
		at, rowID, err := decodeCursor(f.Cursor)
		if err != nil {
			return "", nil, err
		}
		b.WriteString(listHavingCursor)
		args = append(args, at, at, rowID)
	}
	limit := f.Limit
	if limit == 0 {
		limit = DefaultListLimit
	}
	b.WriteString(listOrderAndLimit)
	args = append(args, limit+1) // one more says whether there is a next page
	return b.String(), args, nil
}

// List returns one page of the workspace's rows with their click evidence, reason codes,
// message, attempts and request ID, newest first.
func (r *Rows) List(ctx context.Context, workspaceID string, f ListFilter) (ListPage, error) {
	q, args, err := listQuery(workspaceID, f)
	if err != nil {
		return ListPage{}, err
	}
	rows, err := r.store.query(ctx, q, args...)
	if err != nil {
		return ListPage{}, err
	}
	limit := args[len(args)-1].(int) - 1
	page := ListPage{Rows: rows}
	if len(rows) > limit {
		page.Rows = rows[:limit]
		last := page.Rows[limit-1]
		page.NextCursor = encodeCursor(last.CreatedAt, last.RowID)
	}
	if page.Rows == nil {
		page.Rows = []Row{}
	}
	page.Rows = withDiagnoses(page.Rows)
	return page, nil
}

// Get returns the latest version of one row.
func (r *Rows) Get(ctx context.Context, workspaceID, rowID string) (Row, error) {
	row, ok, err := r.store.get(ctx, workspaceID, rowID)
	if err != nil {
		return Row{}, err
	}
	if !ok {
		return Row{}, fmt.Errorf("%w: %s", ErrRowNotFound, rowID)
	}
	row.Diagnosis = Diagnose(row)
	return row, nil
}

// Retry queues a rejected row again (attempts reset), when it still holds click evidence and was
// not rejected for a local reason. It returns the new version; a refusal is a *RetryError
// (errors.Is ErrNotRetryable), an unknown row ErrRowNotFound.
func (r *Rows) Retry(ctx context.Context, workspaceID, rowID string) (Row, error) {
	row, err := r.Get(ctx, workspaceID, rowID)
	if err != nil {
		return Row{}, err
	}
	refuse := func(reason string) (Row, error) {
		return Row{}, &RetryError{RowID: rowID, Status: row.Status, Reason: reason}
	}
	switch {
	case row.Status != StatusRejected:
		return refuse(RetryRefusedNotRejected)
	case !row.HasClickEvidence():
		return refuse(RetryRefusedNoClickEvidence)
	case localReason(row.ReasonCodes):
		return refuse(RetryRefusedLocalReason)
	}
	n := advance(row, r.now())
	n.Status, n.Attempts, n.NextAttemptAt = StatusQueued, 0, nil
	n.RequestID, n.ReasonCodes, n.Message = "", []string{}, "queued again by a user retry"
	n.PollAttempts, n.DiagnosticsStatus, n.RequestEvents = 0, "", 0
	n.Diagnosis = nil
	if err := r.store.apply(ctx, r.metrics, []change{{from: row.Status, row: n}}); err != nil {
		return Row{}, err
	}
	return n, nil
}

// A cursor is the creation time (unix seconds) and row ID of the last row of a page.
func encodeCursor(at time.Time, rowID string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(at.Unix(), 10) + ":" + rowID))
}

func decodeCursor(c string) (time.Time, string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err == nil {
		if sec, rowID, ok := strings.Cut(string(b), ":"); ok && rowID != "" {
			if n, perr := strconv.ParseInt(sec, 10, 64); perr == nil {
				return time.Unix(n, 0).UTC(), rowID, nil
			}
		}
	}
	return time.Time{}, "", fmt.Errorf("%w: cursor", ErrInvalidFilter)
}
