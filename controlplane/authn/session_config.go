package authn

import (
	"errors"
	"time"

	"github.com/spf13/pflag"
)

// SessionConfig is how long console sessions live, how sign-in is throttled and how long one-time
// links stay valid (docs/SECURITY.md, "Console sessions").
type SessionConfig struct {
	// IdleTimeout ends a session not used for this long; AbsoluteTimeout ends it this long after
	// sign-in however busy it is.
	IdleTimeout     time.Duration
	AbsoluteTimeout time.Duration
	// MaxFailuresPerAccount and MaxFailuresPerAddress failed sign-ins within FailureWindow refuse
	// further attempts for that e-mail address or client address (429) until the window ends.
	MaxFailuresPerAccount int
	MaxFailuresPerAddress int
	FailureWindow         time.Duration
	// InvitationTTL and PasswordResetTTL bound how long a one-time link may be used.
	InvitationTTL    time.Duration
	PasswordResetTTL time.Duration
}

// DefaultSessionConfig: a working day of idleness, a week at most (OWASP's session guidance for
// low-risk applications), five wrong passwords per account and fifty per address in 15 minutes
// (an office behind one NAT still signs in), invitations valid a week, resets an hour.
func DefaultSessionConfig() SessionConfig {
	return SessionConfig{
		IdleTimeout:           12 * time.Hour,
		AbsoluteTimeout:       7 * 24 * time.Hour,
		MaxFailuresPerAccount: 5,
		MaxFailuresPerAddress: 50,
		FailureWindow:         15 * time.Minute,
		InvitationTTL:         7 * 24 * time.Hour,
		PasswordResetTTL:      time.Hour,
	}
}

// RegisterFlags binds the flags.
func (c *SessionConfig) RegisterFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&c.IdleTimeout, "session-idle-timeout", c.IdleTimeout, "a console session not used for this long ends")
	fs.DurationVar(&c.AbsoluteTimeout, "session-absolute-timeout", c.AbsoluteTimeout, "a console session ends this long after sign-in, however busy")
	fs.IntVar(&c.MaxFailuresPerAccount, "signin-max-failures-per-account", c.MaxFailuresPerAccount, "failed sign-ins of one e-mail address within --signin-failure-window before further attempts are refused (429)")
	fs.IntVar(&c.MaxFailuresPerAddress, "signin-max-failures-per-address", c.MaxFailuresPerAddress, "failed sign-ins from one client address within --signin-failure-window before further attempts are refused (429)")
	fs.DurationVar(&c.FailureWindow, "signin-failure-window", c.FailureWindow, "window in which failed sign-ins are counted; a refused account or address may try again when it ends")
	fs.DurationVar(&c.InvitationTTL, "invitation-ttl", c.InvitationTTL, "how long an invitation link may be accepted")
	fs.DurationVar(&c.PasswordResetTTL, "password-reset-ttl", c.PasswordResetTTL, "how long a password-reset link may be used")
}

// Validate checks the settings.
func (c SessionConfig) Validate() error {
	var errs []error
	if c.IdleTimeout < time.Minute {
		errs = append(errs, errors.New("session-idle-timeout: must be at least 1m"))
	}
	if c.AbsoluteTimeout < c.IdleTimeout {
		errs = append(errs, errors.New("session-absolute-timeout: must be at least --session-idle-timeout"))
	}
	if c.MaxFailuresPerAccount < 1 || c.MaxFailuresPerAddress < 1 {
		errs = append(errs, errors.New("signin-max-failures-per-account, signin-max-failures-per-address: must be at least 1"))
	}
	if c.FailureWindow < time.Second {
		errs = append(errs, errors.New("signin-failure-window: must be at least 1s"))
	}
	if c.InvitationTTL < time.Minute || c.PasswordResetTTL < time.Minute {
		errs = append(errs, errors.New("invitation-ttl, password-reset-ttl: must be at least 1m"))
	}
	return errors.Join(errs...)
}
