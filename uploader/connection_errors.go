package uploader

import (
	"errors"
	"fmt"
	"strings"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/uploader/google"
)

// Errors of the advertising setup (connection and mappings). HTTP edges map them to statuses in
// one table; the control plane's sentinels are the same values, so one table serves both.
var (
	// ErrNotConfigured: no OAuth client is configured, or account discovery is off.
	ErrNotConfigured = errors.New("advertising connection is not configured")
	// ErrInvalid: a parameter breaks a rule; the message says which and how to fix it.
	ErrInvalid = controlplane.ErrInvalid
	// ErrNotFound: no such mapping in the workspace.
	ErrNotFound = controlplane.ErrNotFound
	// ErrConflict: the operation does not fit the connection's state (not connected, no account
	// selected, a duplicate enabled mapping).
	ErrConflict = controlplane.ErrConflict
	// ErrRevocationUnconfirmed: Google did not confirm a disconnection's revocation; the connection
	// and its credential are kept and the disconnection may be retried.
	ErrRevocationUnconfirmed = google.ErrRevocationUnconfirmed
	// ErrUnavailable: Google could not be reached or answered a temporary failure; retry later.
	ErrUnavailable = errors.New("advertising platform temporarily unavailable")
)

// MissingScopesError: the user granted only some of the requested permissions (granular consent),
// so nothing was stored. It matches ErrInvalid.
type MissingScopesError struct {
	// Missing are the scopes not granted, as Google names them.
	Missing []string
}

func (e *MissingScopesError) Error() string {
	return fmt.Sprintf("%s: Google did not grant %s; nothing was stored: connect again and allow every requested permission",
		ErrInvalid, strings.Join(e.Missing, " and "))
}

// Is makes the error match ErrInvalid.
func (e *MissingScopesError) Is(target error) bool { return target == ErrInvalid }

// googleFailure turns an error of a Google call into one of the setup's errors: temporary failures
// become ErrUnavailable, refusals ErrInvalid (or ErrConflict when the credential itself was
// refused), with Google's message. token, when known, is removed from the text.
func googleFailure(what string, err error, token string) error {
	msg := err.Error()
	if token != "" {
		msg = strings.ReplaceAll(msg, token, "[credential]")
	}
	switch google.Classify(err) {
	case google.Transient, google.Quota:
		return fmt.Errorf("%w: %s: %s", ErrUnavailable, what, msg)
	case google.Unauthenticated:
		return fmt.Errorf("%w: %s: Google refused the stored credential (%s): connect again", ErrConflict, what, msg)
	default:
		return fmt.Errorf("%w: %s: %s", ErrInvalid, what, msg)
	}
}
