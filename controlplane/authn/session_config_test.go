package authn_test

import (
	"strings"
	"testing"
	"time"

	"github.com/revtrack/revtrack/controlplane/authn"
)

// TestSessionConfigValidate: the defaults are valid; each broken setting is refused by its flag's
// name.
func TestSessionConfigValidate(t *testing.T) {
	if err := authn.DefaultSessionConfig().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for flag, breakIt := range map[string]func(*authn.SessionConfig){
		"session-idle-timeout":            func(c *authn.SessionConfig) { c.IdleTimeout = time.Second },
		"session-absolute-timeout":        func(c *authn.SessionConfig) { c.AbsoluteTimeout = c.IdleTimeout - time.Minute },
		"signin-max-failures-per-account": func(c *authn.SessionConfig) { c.MaxFailuresPerAccount = 0 },
		"signin-max-failures-per-address": func(c *authn.SessionConfig) { c.MaxFailuresPerAddress = -1 },
		"signin-failure-window":           func(c *authn.SessionConfig) { c.FailureWindow = 0 },
		"invitation-ttl":                  func(c *authn.SessionConfig) { c.InvitationTTL = 0 },
		"password-reset-ttl":              func(c *authn.SessionConfig) { c.PasswordResetTTL = time.Second },
	} {
		c := authn.DefaultSessionConfig()
		breakIt(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), flag) {
			t.Errorf("%s: %v", flag, err)
		}
	}
}
