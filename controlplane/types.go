// Package controlplane stores workspaces, members, apps, API keys and the audit log. Records are
// versioned rows in ClickHouse (the system of record); key lookups go through a Redis cache that every
// write updates, so a revocation is seen at once by every instance (none keeps a private cache).
package controlplane

import (
	"errors"
	"time"
)

// Sentinel errors; HTTP edges map them to statuses in one table.
var (
	ErrNotFound     = errors.New("not found")
	ErrConflict     = errors.New("conflict")
	ErrInvalid      = errors.New("invalid")
	ErrInvalidKey   = errors.New("missing, invalid or revoked key")
	ErrInactiveSubs = errors.New("workspace lacks an active subscription")
	// ErrSourceUnavailable: the public key is unknown or was rotated, or the source is disabled.
	ErrSourceUnavailable = errors.New("tracking source unavailable (key rotated or source disabled)")
)

// Subscription statuses. Only active and trialing grant access (docs/SECURITY.md, "Tenant isolation
// and roles").
const (
	StatusActive   = "active"
	StatusTrialing = "trialing"
	StatusPastDue  = "past_due"
	StatusCanceled = "canceled"
	StatusInactive = "inactive"
)

// Member roles.
const (
	RoleOwner  = "owner"
	RoleAdmin  = "admin"
	RoleMember = "member"
)

// Workspace is a tenant. SelectedAppIDs bounds every read.
type Workspace struct {
	ID                 string    `json:"id"`
	Slug               string    `json:"slug"`
	Name               string    `json:"name"`
	SubscriptionStatus string    `json:"subscriptionStatus"`
	SelectedAppIDs     []string  `json:"selectedAppIds"`
	CreatedAt          time.Time `json:"createdAt"`
	UpdatedAt          time.Time `json:"updatedAt"`
	version            uint64
}

// HasAccess reports whether the subscription allows reads and ingestion.
func (w Workspace) HasAccess() bool {
	return w.SubscriptionStatus == StatusActive || w.SubscriptionStatus == StatusTrialing
}

// Member is a user's role in a workspace.
type Member struct {
	WorkspaceID string `json:"workspaceId"`
	UserID      string `json:"userId"`
	Email       string `json:"email"`
	Role        string `json:"role"`
}

// App is an app on the platform.
type App struct {
	ID            string `json:"id"`
	PlatformAppID string `json:"platformAppId"`
	Name          string `json:"name"`
}

// Key scopes (docs/API.md, "Keys"). ScopeRead is the workspace key: reporting, MCP and ingestion.
// ScopeAdmin also manages tracking sources, keys and ad mappings (owner/admin operations) over the
// admin HTTP API.
const (
	ScopeRead  = "read"
	ScopeAdmin = "admin"
)

// APIKey describes a workspace key; the key itself is never stored or returned after creation.
type APIKey struct {
	ID          string     `json:"id"`
	WorkspaceID string     `json:"workspaceId"`
	Name        string     `json:"name"`
	Scope       string     `json:"scope"`
	CreatedBy   string     `json:"createdBy"`
	CreatedAt   time.Time  `json:"createdAt"`
	RevokedAt   *time.Time `json:"revokedAt,omitempty"`
	// LastUsedAt is the key's last successful check, to the minute (keys_used.go); nil when never used.
	LastUsedAt *time.Time `json:"lastUsedAt"`
}

// Principal is who a valid key authenticates. SourceID is set when the key is a tracking source's
// private key rather than a workspace key.
type Principal struct {
	WorkspaceID string
	KeyID       string
	Scope       string
	SourceID    string
}

// AuditEntry is one control-plane change. Details never carry secrets.
type AuditEntry struct {
	At          time.Time         `json:"at"`
	WorkspaceID string            `json:"workspaceId"`
	Actor       string            `json:"actor"`
	Action      string            `json:"action"`
	TargetType  string            `json:"targetType"`
	TargetID    string            `json:"targetId"`
	Details     map[string]string `json:"details,omitempty"`
}
