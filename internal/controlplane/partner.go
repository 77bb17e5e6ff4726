package controlplane

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// Partner connections: a workspace's access to its organization on the platform's partner API.
// The access token is stored only sealed (AES-256-GCM, see Keyring), bound to the workspace ID, and
// is never logged, audited or returned by a view; only PartnerConnection opens it, for the sync.
//
// Connections are read from ClickHouse directly, not through the Redis cache: only the sync reads
// them (not every request), and the sealed token then never leaves ClickHouse.
const (
	insertPartnerConnection = `INSERT INTO partner_connections (workspace_id, organization_id, access_token_enc, api_base_url,
created_at, updated_at, version, deleted)`
	selectPartnerColumns = `SELECT workspace_id, argMax(organization_id, version), argMax(access_token_enc, version),
argMax(api_base_url, version), argMax(created_at, version), argMax(updated_at, version), argMax(deleted, version) AS del
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
	// APIBaseURL is empty for the platform's real partner API.
	APIBaseURL string `json:"apiBaseUrl,omitempty"`
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

func normalizeAPIBaseURL(raw string) (string, error) {
	if raw == "" {
		return "", nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("%w: api base URL %q: want http(s)://host[/path] without credentials, query or fragment", ErrInvalid, raw)
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// ConnectPartner creates or replaces the workspace's partner connection. orgID is the partner
// organization's numeric ID; apiBaseURL is empty for the real partner API. The audit entry records
// the organization, URL and sealing key ID, never the token.
func (p *Partners) ConnectPartner(ctx context.Context, actor, slug, orgID, accessToken, apiBaseURL string) (PartnerConnection, error) {
	if !orgIDRe.MatchString(orgID) {
		return PartnerConnection{}, fmt.Errorf("%w: organization ID %q: want digits only", ErrInvalid, orgID)
	}
	if accessToken == "" || strings.ContainsAny(accessToken, " \t\r\n") {
		return PartnerConnection{}, fmt.Errorf("%w: access token is empty or contains whitespace", ErrInvalid)
	}
	base, err := normalizeAPIBaseURL(apiBaseURL)
	if err != nil {
		return PartnerConnection{}, err
	}
	w, err := p.s.WorkspaceBySlug(ctx, slug)
	if err != nil {
		return PartnerConnection{}, err
	}
	now := p.s.now().UTC().Truncate(time.Second)
	c := PartnerConnection{WorkspaceID: w.ID, OrganizationID: orgID, APIBaseURL: base, CreatedAt: now}
	if old, err := p.query(ctx, selectPartnerConnection, w.ID); err != nil {
		return PartnerConnection{}, err
	} else if len(old) > 0 {
		c.CreatedAt = old[0].CreatedAt
	}
	if c.tokenEnc, err = p.keys.Seal(accessToken, w.ID); err != nil {
		return PartnerConnection{}, fmt.Errorf("seal partner token: %w", err)
	}
	c.SealedWithKey = p.keys.PrimaryKeyID()
	if err := p.write(ctx, c, false); err != nil {
		return PartnerConnection{}, err
	}
	return c, p.s.Audit(ctx, AuditEntry{WorkspaceID: w.ID, Actor: actor, Action: "partner.connect", TargetType: "partner_connection",
		TargetID: w.ID, Details: map[string]string{"organizationId": orgID, "apiBaseUrl": base, "sealedWithKey": c.SealedWithKey}})
}

func (p *Partners) write(ctx context.Context, c PartnerConnection, deleted bool) error {
	c.UpdatedAt = p.s.now().UTC().Truncate(time.Second)
	if err := p.s.insert(ctx, insertPartnerConnection, []any{c.WorkspaceID, c.OrganizationID, c.tokenEnc, c.APIBaseURL,
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
		if err := rows.Scan(&c.WorkspaceID, &c.OrganizationID, &c.tokenEnc, &c.APIBaseURL, &c.CreatedAt, &c.UpdatedAt, &del); err != nil {
			return nil, err
		}
		c.SealedWithKey, _ = SealedKeyID(c.tokenEnc)
		out = append(out, c)
	}
	return out, rows.Err()
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
	tok, err := p.keys.Open(c.tokenEnc, c.WorkspaceID)
	if err != nil {
		return PartnerConnection{}, "", fmt.Errorf("partner token of workspace %s: %w", workspaceID, err)
	}
	return c, tok, nil
}

// DisconnectPartner removes the workspace's connection (a tombstone that also drops the sealed token).
func (p *Partners) DisconnectPartner(ctx context.Context, actor, slug string) error {
	w, err := p.s.WorkspaceBySlug(ctx, slug)
	if err != nil {
		return err
	}
	c, err := p.DescribePartner(ctx, w.ID)
	if err != nil {
		return err
	}
	c.tokenEnc = ""
	if err := p.write(ctx, c, true); err != nil {
		return err
	}
	return p.s.Audit(ctx, AuditEntry{WorkspaceID: w.ID, Actor: actor, Action: "partner.disconnect", TargetType: "partner_connection",
		TargetID: w.ID, Details: map[string]string{"organizationId": c.OrganizationID}})
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
		if c.SealedWithKey == p.keys.PrimaryKeyID() {
			continue
		}
		old := c.SealedWithKey
		tok, err := p.keys.Open(c.tokenEnc, c.WorkspaceID)
		if err != nil {
			failed = append(failed, fmt.Sprintf("workspace %s: %v", c.WorkspaceID, err))
			continue
		}
		if c.tokenEnc, err = p.keys.Seal(tok, c.WorkspaceID); err != nil {
			return n, err
		}
		c.SealedWithKey = p.keys.PrimaryKeyID()
		if err := p.write(ctx, c, false); err != nil {
			return n, err
		}
		n++
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
