package uploader

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/uploader/google"
)

// ReplacementPending says that a callback's grant was made by another Google account than the
// workspace's live connection (or the live connection's account is unknown): nothing was replaced.
// The grant waits, sealed, until ExpiresAt for someone to confirm or decline the replacement.
type ReplacementPending struct {
	ID             string         `json:"id"`
	CurrentAccount google.Account `json:"currentAccount"`
	NewAccount     google.Account `json:"newAccount"`
	ExpiresAt      time.Time      `json:"expiresAt"`
	// CSRFToken must come with a browser's confirmation; only the callback that held the grant
	// returns it (for the page's form), and only its digest is stored.
	CSRFToken string `json:"-"`
}

// CallbackResult is a finished callback: the stored connection, or a replacement waiting for
// confirmation (Pending set, Connection the untouched live one).
type CallbackResult struct {
	Connection controlplane.AdConnection
	Pending    *ReplacementPending
}

// heldGrant is a ReplacementPending as stored in Redis. The refresh token is sealed with the
// keyring and bound to the workspace and the hold's ID; the record lives as long as its TTL.
type heldGrant struct {
	WorkspaceID string         `json:"workspaceId"`
	Actor       string         `json:"actor"`
	Origin      string         `json:"origin"`
	KeyID       string         `json:"keyId,omitempty"`
	UserID      string         `json:"userId,omitempty"`
	Sealed      string         `json:"sealed"`
	Scopes      []string       `json:"scopes"`
	Account     google.Account `json:"account"`
	// CurrentConnectionID and CurrentAccount are the live connection the confirmation page named;
	// a confirmation is refused when the live connection is no longer that one.
	CurrentConnectionID string         `json:"currentConnectionId"`
	CurrentAccount      google.Account `json:"currentAccount"`
	// BindingHash is the flow's browser binding (empty for the operator's flow); CSRFHash the
	// digest of the confirmation form's token.
	BindingHash string    `json:"bindingHash,omitempty"`
	CSRFHash    string    `json:"csrfHash,omitempty"`
	ExpiresAt   time.Time `json:"expiresAt"`
}

// heldAAD binds a held grant's sealed token to its workspace and hold, so it opens nowhere else.
func heldAAD(workspaceID, id string) string { return "ads-held-grant:" + workspaceID + ":" + id }

// heldGrants keeps held grants in Redis under the configured key prefix.
type heldGrants struct {
	rdb    redis.Cmdable
	prefix string
	ttl    time.Duration
}

func (h heldGrants) key(id string) string { return h.prefix + "ads:oauth-held:" + id }

// put stores g under id for the TTL.
func (h heldGrants) put(ctx context.Context, id string, g heldGrant) error {
	v, err := json.Marshal(g)
	if err != nil {
		return err
	}
	if err := h.rdb.Set(ctx, h.key(id), v, h.ttl).Err(); err != nil {
		return fmt.Errorf("hold the grant: %w", err)
	}
	return nil
}

// get returns the held grant of id without using it up; raw is its stored form, for take.
func (h heldGrants) get(ctx context.Context, id string) (g heldGrant, raw []byte, ok bool, err error) {
	if id == "" || len(id) > 128 {
		return g, nil, false, nil
	}
	raw, err = h.rdb.Get(ctx, h.key(id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return g, nil, false, nil
	}
	if err != nil {
		return g, nil, false, fmt.Errorf("read the held grant: %w", err)
	}
	if err := json.Unmarshal(raw, &g); err != nil {
		return g, nil, false, nil
	}
	return g, raw, true, nil
}

// take deletes the held grant of id (GETDEL: settled once); false when it is gone or no longer raw.
func (h heldGrants) take(ctx context.Context, id string, raw []byte) (bool, error) {
	v, err := h.rdb.GetDel(ctx, h.key(id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read the held grant: %w", err)
	}
	return bytes.Equal(v, raw), nil
}

// hold keeps a grant of another Google account than cur's until someone settles it.
func (s *Setup) hold(ctx context.Context, p pendingConnect, grant google.Grant, cur controlplane.AdConnection) (*ReplacementPending, error) {
	tok, err := randomToken()
	if err != nil {
		return nil, err
	}
	// A prefix, so the ID never starts with "-" (base64url): the CLI takes it as an argument.
	id := "rpl_" + tok
	csrf, err := randomToken()
	if err != nil {
		return nil, err
	}
	sealed, err := s.keys.Seal(grant.RefreshToken, heldAAD(p.WorkspaceID, id))
	if err != nil {
		return nil, fmt.Errorf("seal the held grant: %w", err)
	}
	current := google.Account{ID: cur.GoogleAccountID, Email: cur.GoogleAccountEmail}
	g := heldGrant{WorkspaceID: p.WorkspaceID, Actor: p.Actor, Origin: p.Origin, KeyID: p.KeyID, UserID: p.UserID, Sealed: sealed, Scopes: grant.Scopes,
		Account: grant.Account, CurrentConnectionID: cur.ConnectionID, CurrentAccount: current, BindingHash: p.BindingHash,
		CSRFHash: digest(csrf), ExpiresAt: time.Now().Add(s.held.ttl).UTC().Truncate(time.Second)}
	if err := s.held.put(ctx, id, g); err != nil {
		return nil, err
	}
	if err := s.store.Audit(ctx, controlplane.AuditEntry{WorkspaceID: p.WorkspaceID, Actor: p.Actor, Action: "ads_connection.replacement_held",
		TargetType: "ad_connection", TargetID: cur.ConnectionID, Details: map[string]string{
			"googleAccountId": grant.Account.ID, "googleAccountEmail": grant.Account.Email,
			"currentGoogleAccountId": current.ID, "currentGoogleAccountEmail": current.Email, "expiresAt": g.ExpiresAt.Format(time.RFC3339)}}); err != nil {
		return nil, err
	}
	s.log.Info("ads reconnection by another Google account held for confirmation", "workspace", p.WorkspaceID, "connection", cur.ConnectionID)
	return &ReplacementPending{ID: id, CurrentAccount: current, NewAccount: grant.Account, ExpiresAt: g.ExpiresAt, CSRFToken: csrf}, nil
}

// ConfirmReplacement settles a held replacement for the browser that started the flow (binding, the
// flow's cookie) with the confirmation form's csrf token: replace stores the held grant in place of
// the live connection's credential; otherwise it is dropped and the live connection stays. The key
// that started the flow and the workspace's subscription are checked again before replacing.
func (s *Setup) ConfirmReplacement(ctx context.Context, id, binding, csrf string, replace bool) (controlplane.AdConnection, error) {
	return s.settle(ctx, id, replace, func(g heldGrant) error {
		switch {
		case g.Origin != originAPI:
			return fmt.Errorf("%w: this replacement was held on the command line: settle it with `revtrack admin ads confirm-replacement`", ErrInvalid)
		case !matches(g.BindingHash, binding):
			return errWrongBrowser
		case !matches(g.CSRFHash, csrf):
			return &ForbiddenError{Reason: "the confirmation did not come from this connection's page (CSRF token missing or wrong): nothing was changed"}
		}
		return nil
	})
}

// ConfirmReplacementOperator is ConfirmReplacement for a replacement the operator's command-line
// flow held.
func (s *Setup) ConfirmReplacementOperator(ctx context.Context, id string, replace bool) (controlplane.AdConnection, error) {
	return s.settle(ctx, id, replace, func(g heldGrant) error {
		if g.Origin != originOperator {
			return fmt.Errorf("%w: this replacement was held for a browser: confirm it on the page the browser shows", ErrInvalid)
		}
		return nil
	})
}

func (s *Setup) settle(ctx context.Context, id string, replace bool, check func(heldGrant) error) (controlplane.AdConnection, error) {
	gone := fmt.Errorf("%w: the held connection is unknown, already settled or older than %s: connect again", ErrInvalid, s.held.ttl)
	g, raw, ok, err := s.held.get(ctx, id)
	if err != nil {
		return controlplane.AdConnection{}, err
	}
	if !ok {
		return controlplane.AdConnection{}, gone
	}
	if err := check(g); err != nil {
		return controlplane.AdConnection{}, err
	}
	if ok, err := s.held.take(ctx, id, raw); err != nil {
		return controlplane.AdConnection{}, err
	} else if !ok {
		return controlplane.AdConnection{}, gone
	}
	if !replace {
		cur, _, err := s.conns.Get(ctx, g.WorkspaceID)
		if err != nil {
			return controlplane.AdConnection{}, err
		}
		return cur, s.store.Audit(ctx, controlplane.AuditEntry{WorkspaceID: g.WorkspaceID, Actor: g.Actor, Action: "ads_connection.replacement_declined",
			TargetType: "ad_connection", TargetID: g.CurrentConnectionID, Details: map[string]string{"googleAccountId": g.Account.ID,
				"googleAccountEmail": g.Account.Email}})
	}
	if err := s.revalidate(ctx, g.Origin, g.KeyID, g.UserID, g.WorkspaceID); err != nil {
		return controlplane.AdConnection{}, err
	}
	unlock, err := s.lock(ctx, g.WorkspaceID)
	if err != nil {
		return controlplane.AdConnection{}, err
	}
	defer unlock()
	cur, ok, err := s.conns.Get(ctx, g.WorkspaceID)
	if err != nil {
		return controlplane.AdConnection{}, err
	}
	if !ok || !cur.Connected() || cur.ConnectionID != g.CurrentConnectionID || cur.GoogleAccountID != g.CurrentAccount.ID {
		return controlplane.AdConnection{}, fmt.Errorf("%w: the advertising connection changed since this replacement was held: nothing was replaced; connect again", ErrConflict)
	}
	token, err := s.keys.Open(g.Sealed, heldAAD(g.WorkspaceID, id))
	if err != nil {
		return controlplane.AdConnection{}, fmt.Errorf("open the held grant: %w", err)
	}
	c, err := s.conns.Connect(ctx, g.Actor, g.WorkspaceID, controlplane.AdGrant{RefreshToken: token, Scopes: g.Scopes,
		GoogleAccountID: g.Account.ID, GoogleAccountEmail: g.Account.Email})
	if err != nil {
		return controlplane.AdConnection{}, err
	}
	s.log.Info("ads connection replaced by another Google account after confirmation", "workspace", c.WorkspaceID, "connection", c.ConnectionID)
	return c, nil
}
