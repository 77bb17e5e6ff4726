package controlplane

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Advertising connection: a workspace's OAuth grant at the advertising platform and the account its
// conversions go to. The refresh token is stored only sealed (AES-256-GCM, see Keyring), bound to
// the workspace ID, in sealed_secrets apart from the connection's versioned record (secrets.go); it
// is never logged, audited, returned by a view or put in an error. Only AdConnections.RefreshToken
// opens it, for the uploader and for revocation.
//
// Like partner connections these are read from ClickHouse, not the Redis cache: only the setup
// operations and the uploader's dispatcher read them, and the sealed token never leaves ClickHouse.

// Provider and states of an advertising connection (docs/ADS_UPLOAD.md, "Connection").
const (
	AdProviderGoogle     = "google"
	AdStateConnected     = "connected"
	AdStateDisconnected  = "disconnected"
	maxAdLastErrorLength = 1000
)

// AdConnection describes a workspace's advertising connection. It has no token field, so no view can
// leak it.
type AdConnection struct {
	WorkspaceID  string `json:"workspaceId"`
	ConnectionID string `json:"connectionId"`
	Provider     string `json:"provider"`
	// State is connected or disconnected.
	State         string   `json:"state"`
	GrantedScopes []string `json:"grantedScopes"`
	// ConversionCustomerID is the 10-digit account that owns the conversion actions; empty until
	// an account is selected.
	ConversionCustomerID string `json:"conversionCustomerId"`
	// LoginCustomerID is the 10-digit manager account the conversion account is reached through,
	// or empty.
	LoginCustomerID string `json:"loginCustomerId"`
	// LastError is the latest failure a user must see (an unconfirmed revocation, a refused
	// credential); empty when none.
	LastError   string `json:"lastError"`
	ConnectedBy string `json:"connectedBy"`
	// GoogleAccountID and GoogleAccountEmail name the Google account that granted the credential
	// (its stable ID and its e-mail address); empty for a connection made before revtrack recorded
	// them (migration 0019).
	GoogleAccountID    string `json:"googleAccountId"`
	GoogleAccountEmail string `json:"googleAccountEmail"`
	// SealedWithKey is the ID of the encryption key that sealed the refresh token; empty when no
	// token is stored (disconnected).
	SealedWithKey string    `json:"sealedWithKey"`
	CreatedAt     time.Time `json:"createdAt"`
	UpdatedAt     time.Time `json:"updatedAt"`
}

// Connected reports whether the connection holds a credential.
func (c AdConnection) Connected() bool { return c.State == AdStateConnected }

// Ready reports whether conversions can go out: connected and an account selected.
func (c AdConnection) Ready() bool { return c.Connected() && c.ConversionCustomerID != "" }

// AdConnections stores advertising connections, sealing and opening their tokens with a keyring.
type AdConnections struct {
	s    *Store
	keys *Keyring
}

// AdConnections returns the advertising-connection view of the store.
func (s *Store) AdConnections(keys *Keyring) *AdConnections { return &AdConnections{s: s, keys: keys} }

// AdCustomerIDRe is the form of a conversion or manager login customer ID (10 digits:
// docs/ADS_UPLOAD.md, "Connection").
var AdCustomerIDRe = regexp.MustCompile(`^[0-9]{10}$`)

// Get returns the workspace's connection; ok is false when it never connected.
func (c *AdConnections) Get(ctx context.Context, workspaceID string) (AdConnection, bool, error) {
	rows, err := c.s.ch.Query(ctx, selectAdConnection, workspaceID)
	if err != nil {
		return AdConnection{}, false, fmt.Errorf("query ad connection: %w", err)
	}
	defer rows.Close()
	if !rows.Next() {
		return AdConnection{}, false, rows.Err()
	}
	var a AdConnection
	var v uint64
	if err := rows.Scan(&a.ConnectionID, &a.WorkspaceID, &a.Provider, &a.State, &a.SealedWithKey, &a.GrantedScopes,
		&a.ConversionCustomerID, &a.LoginCustomerID, &a.LastError, &a.ConnectedBy, &a.CreatedAt, &a.UpdatedAt, &v,
		&a.GoogleAccountID, &a.GoogleAccountEmail); err != nil {
		return AdConnection{}, false, fmt.Errorf("scan ad connection: %w", err)
	}
	if !a.Connected() {
		// Versions written before a disconnection cleared them still list the revoked grant's scopes.
		a.SealedWithKey, a.GrantedScopes = "", []string{}
	}
	return a, true, rows.Err()
}

// Connection is Get under the name the uploader's dispatcher asks for (its Credentials interface).
func (c *AdConnections) Connection(ctx context.Context, workspaceID string) (AdConnection, bool, error) {
	return c.Get(ctx, workspaceID)
}

// connected returns the workspace's connection, or ErrConflict when it is not connected.
func (c *AdConnections) connected(ctx context.Context, workspaceID string) (AdConnection, error) {
	a, ok, err := c.Get(ctx, workspaceID)
	if err != nil {
		return AdConnection{}, err
	}
	if !ok || !a.Connected() {
		return AdConnection{}, fmt.Errorf("%w: the workspace has no advertising connection: connect first", ErrConflict)
	}
	return a, nil
}

// RefreshToken opens the workspace's refresh token. It fails with ErrNotFound when no token is
// stored (never connected, or disconnected) and with ErrCannotOpen when no configured key opens it.
func (c *AdConnections) RefreshToken(ctx context.Context, workspaceID string) (string, error) {
	tok, _, err := c.open(ctx, workspaceID)
	return tok, err
}

// open returns the opened refresh token of a connected workspace with its connection. Only a
// connected record leads to the secret, so a disconnected connection's secret whose deletion is
// still running is never read.
func (c *AdConnections) open(ctx context.Context, workspaceID string) (string, AdConnection, error) {
	a, ok, err := c.Get(ctx, workspaceID)
	if err != nil {
		return "", AdConnection{}, err
	}
	sealed, found := "", false
	if ok && a.Connected() {
		if sealed, _, found, err = c.s.secret(ctx, secretAdRefreshToken, a.ConnectionID); err != nil {
			return "", AdConnection{}, err
		}
	}
	if !found {
		return "", AdConnection{}, fmt.Errorf("%w: advertising credential of workspace %s", ErrNotFound, workspaceID)
	}
	tok, err := c.keys.Open(sealed, a.WorkspaceID)
	if err != nil {
		return "", AdConnection{}, fmt.Errorf("advertising credential of workspace %s: %w", workspaceID, err)
	}
	return tok, a, nil
}

// AdGrant is a credential to store: the refresh token, the scopes granted and the Google account
// that granted them (ID and e-mail; empty when unknown).
type AdGrant struct {
	RefreshToken       string
	Scopes             []string
	GoogleAccountID    string
	GoogleAccountEmail string
}

// Connect stores a new credential. A disconnected (or never connected) workspace gets a new
// connection with no account selected; a connected one keeps its connection, account and mappings
// and only has its credential replaced: the replaced sealing is deleted (waited for up to
// Store.EraseTimeout; the deletion is durable and finishes in the background should it take
// longer, and it is never read meanwhile). Whether another Google account may replace the live
// one is the caller's decision. The audit entry names the scopes, the Google account and the
// sealing key, never the token.
func (c *AdConnections) Connect(ctx context.Context, actor, workspaceID string, g AdGrant) (AdConnection, error) {
	refreshToken, scopes := g.RefreshToken, g.Scopes
	if refreshToken == "" || strings.ContainsAny(refreshToken, " \t\r\n") {
		return AdConnection{}, fmt.Errorf("%w: refresh token is empty or contains whitespace", ErrInvalid)
	}
	if _, err := c.s.Workspace(ctx, workspaceID); err != nil {
		return AdConnection{}, err
	}
	old, ok, err := c.Get(ctx, workspaceID)
	if err != nil {
		return AdConnection{}, err
	}
	action := "ads_connection.connect"
	a := old
	if ok && old.Connected() {
		action = "ads_connection.reconnect"
	} else {
		a = AdConnection{WorkspaceID: workspaceID, ConnectionID: uuid.Must(uuid.NewV7()).String(), Provider: AdProviderGoogle,
			CreatedAt: c.s.now().UTC().Truncate(time.Second)}
	}
	a.State = AdStateConnected
	a.GrantedScopes = slices.Compact(slices.Sorted(slices.Values(scopes)))
	a.LastError = ""
	a.ConnectedBy = actor
	details := map[string]string{"scopes": strings.Join(a.GrantedScopes, " "), "provider": a.Provider,
		"googleAccountId": g.GoogleAccountID, "googleAccountEmail": g.GoogleAccountEmail}
	if action == "ads_connection.reconnect" {
		details["previousGoogleAccountId"], details["previousGoogleAccountEmail"] = a.GoogleAccountID, a.GoogleAccountEmail
	}
	a.GoogleAccountID, a.GoogleAccountEmail = g.GoogleAccountID, g.GoogleAccountEmail
	if a, err = c.storeToken(ctx, a, refreshToken); err != nil {
		return AdConnection{}, err
	}
	details["sealedWithKey"] = a.SealedWithKey
	if err := c.audit(ctx, actor, action, a, details); err != nil {
		return AdConnection{}, err
	}
	return a, c.supersede(ctx, a.ConnectionID)
}

// storeToken seals token into a new secret row of the connection, then writes the record naming
// its key. The secret comes first: a record that says connected always has a secret to open.
func (c *AdConnections) storeToken(ctx context.Context, a AdConnection, token string) (AdConnection, error) {
	sealed, err := c.keys.Seal(token, a.WorkspaceID)
	if err != nil {
		return AdConnection{}, fmt.Errorf("seal advertising credential: %w", err)
	}
	if _, err := c.s.putSecret(ctx, secretAdRefreshToken, a.ConnectionID, a.WorkspaceID, sealed); err != nil {
		return AdConnection{}, err
	}
	a.SealedWithKey = c.keys.PrimaryKeyID()
	return c.write(ctx, a)
}

// supersede deletes the connection's sealings older than its newest. Not finishing within the wait
// is no failure of the caller's change: the mutation continues, and the older rows are never read.
func (c *AdConnections) supersede(ctx context.Context, connectionID string) error {
	if err := c.s.supersede(ctx, secretAdRefreshToken, connectionID); err != nil && !errors.Is(err, ErrEraseUnconfirmed) {
		return err
	}
	return nil
}

// SelectAccount sets the conversion customer and the optional manager login customer of a
// connected workspace. changed is false when both were already these (nothing written or audited).
// Disabling the mappings of the previous account is the caller's part of the transition.
func (c *AdConnections) SelectAccount(ctx context.Context, actor, workspaceID, conversionCustomerID, loginCustomerID string) (a AdConnection, changed bool, err error) {
	if !AdCustomerIDRe.MatchString(conversionCustomerID) {
		return AdConnection{}, false, fmt.Errorf("%w: conversion customer ID %q: want 10 digits", ErrInvalid, conversionCustomerID)
	}
	if loginCustomerID != "" && !AdCustomerIDRe.MatchString(loginCustomerID) {
		return AdConnection{}, false, fmt.Errorf("%w: manager login customer ID %q: want 10 digits or none", ErrInvalid, loginCustomerID)
	}
	if a, err = c.connected(ctx, workspaceID); err != nil {
		return AdConnection{}, false, err
	}
	if a.ConversionCustomerID == conversionCustomerID && a.LoginCustomerID == loginCustomerID {
		return a, false, nil
	}
	details := map[string]string{"conversionCustomerId": conversionCustomerID, "loginCustomerId": loginCustomerID,
		"previousConversionCustomerId": a.ConversionCustomerID, "previousLoginCustomerId": a.LoginCustomerID}
	a.ConversionCustomerID, a.LoginCustomerID = conversionCustomerID, loginCustomerID
	if a, err = c.write(ctx, a); err != nil {
		return AdConnection{}, false, err
	}
	return a, true, c.audit(ctx, actor, "ads_connection.select_account", a, details)
}

// SetLastError records a failure the user must see on the connection (for example a credential the
// platform refused), without changing its state. An empty message clears it.
func (c *AdConnections) SetLastError(ctx context.Context, actor, workspaceID, message string) (AdConnection, error) {
	return c.setLastError(ctx, actor, workspaceID, "ads_connection.error", message, false)
}

// CredentialRefused records message as the connection's last error when the platform refused
// refreshToken (invalid_grant: revoked, expired, or the user's password changed) and refreshToken is
// still the stored credential; the state stays connected (the connection has no other transition:
// docs/ADS_UPLOAD.md, "A refused credential shows on the connection") until the user reconnects,
// which clears the error. It reports whether it recorded:
// when the credential was replaced meanwhile (a reconnect) or the connection ended, the refusal is
// old news and the connection is left alone.
func (c *AdConnections) CredentialRefused(ctx context.Context, actor, workspaceID, refreshToken, message string) (bool, error) {
	tok, _, err := c.open(ctx, workspaceID)
	if errors.Is(err, ErrNotFound) || errors.Is(err, ErrCannotOpen) {
		return false, nil
	}
	if err != nil || tok != refreshToken {
		return false, err
	}
	if _, err := c.setLastError(ctx, actor, workspaceID, "ads_connection.credential_refused", message, true); err != nil {
		return false, err
	}
	return true, nil
}

// DisconnectUnconfirmed records a disconnection the platform did not confirm: the connection stays
// connected with its credential (docs/ADS_UPLOAD.md, "Connection", Disconnect: unconfirmed), and
// the message is shown until a retry succeeds.
func (c *AdConnections) DisconnectUnconfirmed(ctx context.Context, actor, workspaceID, message string) (AdConnection, error) {
	return c.setLastError(ctx, actor, workspaceID, "ads_connection.disconnect_unconfirmed", message, false)
}

// setLastError records message as the connection's last error; revoked also clears its scopes
// (Google refused the grant, so none of them is granted any more; a reconnect records them again).
func (c *AdConnections) setLastError(ctx context.Context, actor, workspaceID, action, message string, revoked bool) (AdConnection, error) {
	a, ok, err := c.Get(ctx, workspaceID)
	if err != nil {
		return AdConnection{}, err
	}
	if !ok {
		return AdConnection{}, fmt.Errorf("%w: advertising connection of workspace %s", ErrNotFound, workspaceID)
	}
	if len(message) > maxAdLastErrorLength {
		message = message[:maxAdLastErrorLength]
	}
	if a.LastError == message && (!revoked || len(a.GrantedScopes) == 0) {
		return a, nil
	}
	a.LastError = message
	if revoked {
		a.GrantedScopes = []string{}
	}
	if a, err = c.write(ctx, a); err != nil {
		return AdConnection{}, err
	}
	return a, c.audit(ctx, actor, action, a, map[string]string{"lastError": message})
}

// Disconnect finishes a disconnection whose revocation the platform confirmed: the state becomes
// disconnected, then every stored copy of the token is deleted and the deletion waited for. The
// caller disables the mappings; they and the queue rows stay for audit. When the deletion has not
// finished within Store.EraseTimeout the connection is disconnected and the error wraps
// ErrEraseUnconfirmed; FinishErase confirms it later.
func (c *AdConnections) Disconnect(ctx context.Context, actor, workspaceID string) (AdConnection, error) {
	a, err := c.connected(ctx, workspaceID)
	if err != nil {
		return AdConnection{}, err
	}
	a.State = AdStateDisconnected
	a.SealedWithKey, a.LastError, a.GrantedScopes = "", "", []string{}
	if a, err = c.write(ctx, a); err != nil {
		return AdConnection{}, err
	}
	if err := c.audit(ctx, actor, "ads_connection.disconnect", a, map[string]string{
		"conversionCustomerId": a.ConversionCustomerID, "loginCustomerId": a.LoginCustomerID}); err != nil {
		return AdConnection{}, err
	}
	return a, c.s.eraseSecret(ctx, secretAdRefreshToken, a.ConnectionID, legacyAdToken)
}

// FinishErase completes the erase of a disconnected connection's token whose deletion had not
// finished (Disconnect's ErrEraseUnconfirmed). erased reports whether a stored copy was left; the
// error wraps ErrEraseUnconfirmed while the deletion still runs.
func (c *AdConnections) FinishErase(ctx context.Context, workspaceID string) (a AdConnection, erased bool, err error) {
	a, ok, err := c.Get(ctx, workspaceID)
	if err != nil || !ok || a.Connected() {
		return a, false, err
	}
	left, err := c.s.secretLeft(ctx, secretAdRefreshToken, a.ConnectionID, legacyAdToken)
	if err != nil || !left {
		return a, false, err
	}
	return a, true, c.s.eraseSecret(ctx, secretAdRefreshToken, a.ConnectionID, legacyAdToken)
}

// Reseal re-seals with the first key a workspace's token sealed with another key (step 2 of key
// rotation, see Keyring), and deletes the sealing it replaces, so that the old key then opens no
// stored copy. It reports whether it re-sealed. A deletion a previous run did not see finish is
// waited for again.
func (c *AdConnections) Reseal(ctx context.Context, actor, workspaceID string) (bool, error) {
	a, ok, err := c.Get(ctx, workspaceID)
	if err != nil || !ok || !a.Connected() {
		return false, err
	}
	if a.SealedWithKey == c.keys.PrimaryKeyID() {
		return false, c.s.supersede(ctx, secretAdRefreshToken, a.ConnectionID)
	}
	old := a.SealedWithKey
	tok, a, err := c.open(ctx, workspaceID)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if a, err = c.storeToken(ctx, a, tok); err != nil {
		return false, err
	}
	if err := c.audit(ctx, actor, "ads_connection.reseal", a, map[string]string{"fromKey": old, "toKey": a.SealedWithKey}); err != nil {
		return false, err
	}
	return true, c.s.supersede(ctx, secretAdRefreshToken, a.ConnectionID)
}

// ResealAll re-seals every workspace's token sealed with another key than the first (run with the
// partner re-seal during key rotation). It returns how many it re-sealed; a token no configured key
// opens is an error naming its workspace (the others are still re-sealed).
func (c *AdConnections) ResealAll(ctx context.Context, actor string) (int, error) {
	ws, err := c.s.Workspaces(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	var failed []error
	for _, w := range ws {
		ok, err := c.Reseal(ctx, actor, w.ID)
		if err != nil {
			failed = append(failed, err)
			continue
		}
		if ok {
			n++
		}
	}
	if len(failed) > 0 {
		return n, fmt.Errorf("%d advertising credentials not re-sealed:\n%w", len(failed), errors.Join(failed...))
	}
	return n, nil
}

func (c *AdConnections) write(ctx context.Context, a AdConnection) (AdConnection, error) {
	a.UpdatedAt = c.s.now().UTC().Truncate(time.Second)
	if a.GrantedScopes == nil {
		a.GrantedScopes = []string{}
	}
	// refresh_token_enc is written empty: the token lives in sealed_secrets (migration 0017).
	if err := c.s.insert(ctx, insertAdConnection, []any{a.ConnectionID, a.WorkspaceID, a.Provider, a.State, "",
		a.SealedWithKey, a.GrantedScopes, a.ConversionCustomerID, a.LoginCustomerID, a.LastError, a.ConnectedBy,
		a.CreatedAt, a.UpdatedAt, c.s.version(), a.GoogleAccountID, a.GoogleAccountEmail}); err != nil {
		return AdConnection{}, fmt.Errorf("write ad connection: %w", err)
	}
	return a, nil
}

func (c *AdConnections) audit(ctx context.Context, actor, action string, a AdConnection, details map[string]string) error {
	return c.s.Audit(ctx, AuditEntry{WorkspaceID: a.WorkspaceID, Actor: actor, Action: action, TargetType: "ad_connection",
		TargetID: a.ConnectionID, Details: details})
}
