package controlplane

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Partner connections: a workspace's access to its organization on the platform's partner API.
// The access token is stored only sealed (AES-256-GCM, see Keyring), bound to the workspace ID, in
// sealed_secrets apart from the connection's versioned record (secrets.go), and is never logged,
// audited or returned by a view; only PartnerConnection opens it, for the sync.
//
// Connections are read from ClickHouse directly, not through the Redis cache: only the sync reads
// them (not every request), and the sealed token then never leaves ClickHouse. The api_base_url
// column is no longer written or read (the partner API address is operator configuration).
const (
	insertPartnerConnection = `INSERT INTO partner_connections (workspace_id, organization_id, access_token_enc, api_base_url,
created_at, updated_at, version, deleted)`
	selectPartnerColumns = `SELECT workspace_id, argMax(organization_id, version),
argMax(created_at, version), argMax(updated_at, version), argMax(deleted, version) AS del
FROM partner_connections `
	selectPartnerConnection  = selectPartnerColumns + `WHERE workspace_id = ? GROUP BY workspace_id HAVING del = 0`
	selectPartnerConnections = selectPartnerColumns + `GROUP BY workspace_id HAVING del = 0 ORDER BY workspace_id`
)

// PartnerQueries lists the SQL of partner connections, for compatibility checks.
func PartnerQueries() []string {
	return []string{insertPartnerConnection, selectPartnerConnection, selectPartnerConnections}
}

// PartnerConnection describes a connection. It has no token field, so no view can leak it.
type PartnerConnection struct {
	WorkspaceID    string `json:"workspaceId"`
	OrganizationID string `json:"organizationId"`
	// SealedWithKey is the ID of the encryption key that sealed the token (for key rotation).
	SealedWithKey string    `json:"sealedWithKey"`
	CreatedAt     time.Time `json:"createdAt"`
	UpdatedAt     time.Time `json:"updatedAt"`

	tokenEnc string
}

// Partners manages partner connections with a keyring for their tokens.
type Partners struct {
	s    *Store
	keys *Keyring
}

// Partners returns the partner-connection view of the store, sealing and opening with keys.
func (s *Store) Partners(keys *Keyring) *Partners { return &Partners{s: s, keys: keys} }

var orgIDRe = regexp.MustCompile(`^[0-9]{1,20}$`)

// ConnectPartner creates or replaces the workspace's partner connection. orgID is the partner
// organization's numeric ID. Where the partner API is, is the operator's setting
// (platformsync.Config.BaseURL), never a workspace's: the stored api_base_url stays empty. A replaced token's
// sealing is deleted (waited for up to Store.EraseTimeout; the deletion is durable and never read
// meanwhile). The audit entry records the organization and sealing key ID, never the token.
func (p *Partners) ConnectPartner(ctx context.Context, actor, slug, orgID, accessToken string) (PartnerConnection, error) {
	if !orgIDRe.MatchString(orgID) {
		return PartnerConnection{}, fmt.Errorf("%w: organization ID %q: want digits only", ErrInvalid, orgID)
	}
	if accessToken == "" || strings.ContainsAny(accessToken, " \t\r\n") {
		return PartnerConnection{}, fmt.Errorf("%w: access token is empty or contains whitespace", ErrInvalid)
	}
	w, err := p.s.WorkspaceBySlug(ctx, slug)
	if err != nil {
		return PartnerConnection{}, err
	}
	now := p.s.now().UTC().Truncate(time.Second)
	c := PartnerConnection{WorkspaceID: w.ID, OrganizationID: orgID, CreatedAt: now}
	if old, err := p.query(ctx, selectPartnerConnection, w.ID); err != nil {
		return PartnerConnection{}, err
	} else if len(old) > 0 {
		c.CreatedAt = old[0].CreatedAt
	}
	if c, err = p.storeToken(ctx, c, accessToken); err != nil {
		return PartnerConnection{}, err
	}
	if err := p.s.Audit(ctx, AuditEntry{WorkspaceID: w.ID, Actor: actor, Action: "partner.connect", TargetType: "partner_connection",
		TargetID: w.ID, Details: map[string]string{"organizationId": orgID, "sealedWithKey": c.SealedWithKey}}); err != nil {
		return PartnerConnection{}, err
	}
	return c, p.supersede(ctx, w.ID)
}

// storeToken seals token into a new secret row of the workspace, then writes the record. The
// secret comes first: a live record always has a secret to open.
func (p *Partners) storeToken(ctx context.Context, c PartnerConnection, token string) (PartnerConnection, error) {
	sealed, err := p.keys.Seal(token, c.WorkspaceID)
	if err != nil {
		return PartnerConnection{}, fmt.Errorf("seal partner token: %w", err)
	}
	if _, err := p.s.putSecret(ctx, secretPartnerAccessToken, c.WorkspaceID, c.WorkspaceID, sealed); err != nil {
		return PartnerConnection{}, err
	}
	c.SealedWithKey, c.tokenEnc = p.keys.PrimaryKeyID(), sealed
	return c, p.write(ctx, c, false)
}

// supersede deletes the workspace's sealings older than its newest. Not finishing within the wait
// is no failure of the caller's change: the mutation continues, and the older rows are never read.
func (p *Partners) supersede(ctx context.Context, workspaceID string) error {
	if err := p.s.supersede(ctx, secretPartnerAccessToken, workspaceID); err != nil && !errors.Is(err, ErrEraseUnconfirmed) {
		return err
	}
	return nil
}

func (p *Partners) write(ctx context.Context, c PartnerConnection, deleted bool) error {
	c.UpdatedAt = p.s.now().UTC().Truncate(time.Second)
	// access_token_enc is written empty: the token lives in sealed_secrets (migration 0017).
	if err := p.s.insert(ctx, insertPartnerConnection, []any{c.WorkspaceID, c.OrganizationID, "", "",
		c.CreatedAt, c.UpdatedAt, p.s.version(), boolByte(deleted)}); err != nil {
		return fmt.Errorf("write partner connection: %w", err)
	}
	return nil
}

func (p *Partners) query(ctx context.Context, q string, args ...any) ([]PartnerConnection, error) {
	rows, err := p.s.ch.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("query partner connections: %w", err)
	}
	defer rows.Close()
	var out []PartnerConnection
	for rows.Next() {
		var c PartnerConnection
		var del uint8
		if err := rows.Scan(&c.WorkspaceID, &c.OrganizationID, &c.CreatedAt, &c.UpdatedAt, &del); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	// Only a live record leads to its secret, so a removed connection's secret whose deletion is
	// still running is never read.
	for i := range out {
		sealed, _, ok, err := p.s.secret(ctx, secretPartnerAccessToken, out[i].WorkspaceID)
		if err != nil {
			return nil, err
		}
		if ok {
			out[i].tokenEnc = sealed
			out[i].SealedWithKey, _ = SealedKeyID(sealed)
		}
	}
	return out, nil
}

// DescribePartner returns the workspace's connection without opening the token.
func (p *Partners) DescribePartner(ctx context.Context, workspaceID string) (PartnerConnection, error) {
	cs, err := p.query(ctx, selectPartnerConnection, workspaceID)
	if err != nil {
		return PartnerConnection{}, err
	}
	if len(cs) == 0 {
		return PartnerConnection{}, fmt.Errorf("%w: partner connection of workspace %s", ErrNotFound, workspaceID)
	}
	return cs[0], nil
}

// PartnerConnection returns the workspace's connection and its opened access token, for the sync.
// It fails with ErrCannotOpen when no configured key opens the token.
func (p *Partners) PartnerConnection(ctx context.Context, workspaceID string) (PartnerConnection, string, error) {
	c, err := p.DescribePartner(ctx, workspaceID)
	if err != nil {
		return PartnerConnection{}, "", err
	}
	if c.tokenEnc == "" {
		return PartnerConnection{}, "", fmt.Errorf("%w: partner token of workspace %s", ErrNotFound, workspaceID)
	}
	tok, err := p.keys.Open(c.tokenEnc, c.WorkspaceID)
	if err != nil {
		return PartnerConnection{}, "", fmt.Errorf("partner token of workspace %s: %w", workspaceID, err)
	}
	return c, tok, nil
}

// DisconnectPartner removes the workspace's connection: a tombstone for the record, then every
// stored copy of the token is deleted and the deletion waited for. When it has not finished within
// Store.EraseTimeout the error wraps ErrEraseUnconfirmed; calling DisconnectPartner again (the
// connection is gone, a copy is left) waits for it again.
func (p *Partners) DisconnectPartner(ctx context.Context, actor, slug string) error {
	w, err := p.s.WorkspaceBySlug(ctx, slug)
	if err != nil {
		return err
	}
	c, err := p.DescribePartner(ctx, w.ID)
	if errors.Is(err, ErrNotFound) {
		left, lerr := p.s.secretLeft(ctx, secretPartnerAccessToken, w.ID, legacyPartnerToken)
		if lerr != nil {
			return lerr
		}
		if left {
			return p.s.eraseSecret(ctx, secretPartnerAccessToken, w.ID, legacyPartnerToken)
		}
	}
	if err != nil {
		return err
	}
	if err := p.write(ctx, c, true); err != nil {
		return err
	}
	if err := p.s.Audit(ctx, AuditEntry{WorkspaceID: w.ID, Actor: actor, Action: "partner.disconnect", TargetType: "partner_connection",
		TargetID: w.ID, Details: map[string]string{"organizationId": c.OrganizationID}}); err != nil {
		return err
	}
	return p.s.eraseSecret(ctx, secretPartnerAccessToken, w.ID, legacyPartnerToken)
}

// ResealPartnerTokens re-seals with the first key every token sealed with another key (step 2 of
// key rotation, see Keyring). It returns how many it re-sealed; a token no configured key opens is
// an error (the others are still re-sealed).
func (p *Partners) ResealPartnerTokens(ctx context.Context, actor string) (int, error) {
	cs, err := p.query(ctx, selectPartnerConnections)
	if err != nil {
		return 0, err
	}
	n := 0
	var failed []string
	for _, c := range cs {
		if c.tokenEnc == "" {
			continue
		}
		if c.SealedWithKey == p.keys.PrimaryKeyID() {
			// A replaced sealing whose deletion an earlier run did not see finish.
			if err := p.s.supersede(ctx, secretPartnerAccessToken, c.WorkspaceID); err != nil {
				failed = append(failed, fmt.Sprintf("workspace %s: %v", c.WorkspaceID, err))
			}
			continue
		}
		old := c.SealedWithKey
		tok, err := p.keys.Open(c.tokenEnc, c.WorkspaceID)
		if err != nil {
			failed = append(failed, fmt.Sprintf("workspace %s: %v", c.WorkspaceID, err))
			continue
		}
		if c, err = p.storeToken(ctx, c, tok); err != nil {
			return n, err
		}
		n++
		if err := p.s.supersede(ctx, secretPartnerAccessToken, c.WorkspaceID); err != nil {
			failed = append(failed, fmt.Sprintf("workspace %s: %v", c.WorkspaceID, err))
		}
		if err := p.s.Audit(ctx, AuditEntry{WorkspaceID: c.WorkspaceID, Actor: actor, Action: "partner.reseal", TargetType: "partner_connection",
			TargetID: c.WorkspaceID, Details: map[string]string{"fromKey": old, "toKey": c.SealedWithKey}}); err != nil {
			return n, err
		}
	}
	if len(failed) > 0 {
		return n, fmt.Errorf("%d partner tokens not re-sealed:\n%s", len(failed), strings.Join(failed, "\n"))
	}
	return n, nil
}
