package uploader

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/oauth2"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/internal/redisx"
	"github.com/revtrack/revtrack/uploader/google"
)

// OAuthFlow is the part of Google OAuth the setup uses: consent URL, code exchange, revocation,
// and access tokens for account discovery.
type OAuthFlow interface {
	AuthCodeURL(state, verifier string) string
	Exchange(ctx context.Context, code, verifier string) (google.Grant, error)
	Revoke(ctx context.Context, token string) error
	TokenSource(ctx context.Context, refreshToken string) oauth2.TokenSource
}

// ActionDiscovery lists a conversion customer's uploadable conversion actions (Google Ads API).
type ActionDiscovery interface {
	ConversionActions(ctx context.Context, ts oauth2.TokenSource, customerID, loginCustomerID string) ([]google.ConversionAction, error)
}

var (
	_ OAuthFlow       = (*google.OAuth)(nil)
	_ ActionDiscovery = (*google.Ads)(nil)
)

// SetupDeps are what the advertising setup needs.
type SetupDeps struct {
	Config ConnectConfig
	// BaseURL is the service's public URL, for the default OAuth redirect URI.
	BaseURL string
	Store   *controlplane.Store
	Keys    *controlplane.Keyring
	// Redis holds pending connections and the per-workspace setup lock, under KeyPrefix.
	Redis     redis.UniversalClient
	KeyPrefix string
	// HTTPClient calls Google; nil means the configuration's (egress policy, 30 s timeout).
	HTTPClient *http.Client
	Logger     *slog.Logger
	// OAuth and Discovery replace the clients built from Config (nil: built from Config).
	OAuth     OAuthFlow
	Discovery ActionDiscovery
}

// Setup owns the advertising connection's state machine and the mapping rules (docs/ADS_UPLOAD.md,
// "Connection" and "Mappings"). Every change is audited
// by the control plane it writes through. Changes of one workspace are serialised by a Redis lock,
// so that for example a mapping cannot be created for an account that is being replaced.
type Setup struct {
	cfg       ConnectConfig
	conns     *controlplane.AdConnections
	mappings  *controlplane.AdMappings
	actions   *controlplane.AdConversionActions
	store     *controlplane.Store
	keys      *controlplane.Keyring
	oauth     OAuthFlow
	discovery ActionDiscovery
	states    connectStates
	held      heldGrants
	// callbackURL is the OAuth redirect URI; the begin URL and the flow's cookie live on its host.
	callbackURL string
	locker      redisx.Locker
	log         *slog.Logger
}

// setupLockTTL bounds how long a crashed holder blocks a workspace's setup; it covers one Google
// call (30 s timeout) and a few ClickHouse writes.
const setupLockTTL = 2 * time.Minute

// NewSetup builds the setup service.
func NewSetup(d SetupDeps) (*Setup, error) {
	if d.Store == nil || d.Keys == nil || d.Redis == nil {
		return nil, errors.New("ads setup: store, keyring and Redis are required")
	}
	if err := d.Config.Validate(); err != nil {
		return nil, err
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	ep := d.Config.Endpoints()
	s := &Setup{
		cfg: d.Config, store: d.Store, keys: d.Keys, conns: d.Store.AdConnections(d.Keys), mappings: d.Store.AdMappings(),
		actions: d.Store.AdConversionActions(), oauth: d.OAuth, discovery: d.Discovery,
		states:      connectStates{rdb: d.Redis, prefix: d.KeyPrefix, ttl: d.Config.StateTTL},
		held:        heldGrants{rdb: d.Redis, prefix: d.KeyPrefix, ttl: d.Config.StateTTL},
		callbackURL: d.Config.RedirectURL(d.BaseURL),
		locker:      redisx.Locker{Client: d.Redis, Prefix: d.KeyPrefix + "ads:"},
		log:         d.Logger.With("component", "ads-setup"),
	}
	if d.HTTPClient == nil {
		d.HTTPClient = d.Config.HTTPClient()
	}
	if s.oauth == nil {
		// Built even without a client ID: revocation needs no client authentication, so a
		// workspace can still disconnect after the client was removed from the configuration.
		s.oauth = google.NewOAuth(d.Config.OAuthClientID, d.Config.OAuthClientSecret, d.Config.RedirectURL(d.BaseURL), ep, d.HTTPClient)
	}
	switch {
	case !d.Config.AccountDiscovery:
		s.discovery = nil
	case s.discovery == nil:
		s.discovery = google.NewAds(ep.AdsURL, ep.AdsAPIVersion, d.HTTPClient)
	}
	return s, nil
}

// Configured reports whether workspaces may connect (an OAuth client is configured).
func (s *Setup) Configured() bool { return s.cfg.Configured() }

// DiscoveryConfigured reports whether conversion actions can be listed from the platform.
func (s *Setup) DiscoveryConfigured() bool { return s.Configured() && s.discovery != nil }

// lock serialises the setup changes of one workspace across instances.
func (s *Setup) lock(ctx context.Context, workspaceID string) (func(), error) {
	release, err := s.locker.Lock(ctx, "setup:"+workspaceID, setupLockTTL)
	if err != nil {
		return nil, err
	}
	return func() {
		if err := release(context.WithoutCancel(ctx)); err != nil {
			s.log.Warn("release ads setup lock", "workspace", workspaceID, "err", err)
		}
	}, nil
}

// Connection returns the workspace's connection; ok is false when it never connected.
func (s *Setup) Connection(ctx context.Context, workspaceID string) (controlplane.AdConnection, bool, error) {
	return s.conns.Get(ctx, workspaceID)
}

// Connect starts a connection for the operator's command line (or a reconnection, which replaces
// the credential) and returns the Google consent URL to open. The state and PKCE verifier wait in
// Redis for ConnectConfig.StateTTL and can be used once, by Callback: the served callback does not
// finish such a flow (it has no browser binding); the operator pastes the URL Google redirected to.
// The admin API starts connections with ConnectWithKey.
func (s *Setup) Connect(ctx context.Context, actor, workspaceID string) (string, error) {
	if !s.Configured() {
		return "", fmt.Errorf("%w: set --ads-oauth-client-id and --ads-oauth-client-secret", ErrNotConfigured)
	}
	if _, err := s.store.Workspace(ctx, workspaceID); err != nil {
		return "", err
	}
	verifier := google.NewVerifier()
	state, err := s.states.put(ctx, pendingConnect{WorkspaceID: workspaceID, Actor: actor, Origin: originOperator, Verifier: verifier})
	if err != nil {
		return "", err
	}
	return s.oauth.AuthCodeURL(state, verifier), nil
}

// finish completes a connection whose state was taken: it checks again that whoever started it may
// still connect the workspace, exchanges the code, checks that both scopes were granted, and stores
// the sealed refresh token. The connection is then connected with no conversion account selected
// (a reconnection keeps its account and mappings). A grant by another Google account than the live
// connection's is held for confirmation instead (CallbackResult.Pending). When a scope is missing
// it fails with *MissingScopesError and stores nothing.
func (s *Setup) finish(ctx context.Context, p pendingConnect, code string) (CallbackResult, error) {
	if code == "" {
		return CallbackResult{}, fmt.Errorf("%w: Google returned no authorization code (consent denied?): start the connection again", ErrInvalid)
	}
	// Before the exchange: a flow whose key was revoked meanwhile must not obtain a grant at all.
	if err := s.revalidate(ctx, p.Origin, p.KeyID, p.UserID, p.WorkspaceID); err != nil {
		return CallbackResult{}, err
	}
	grant, err := s.oauth.Exchange(ctx, code, p.Verifier)
	// Granular consent: a partial grant stores nothing. It is not revoked either: revoking ends
	// every grant of this user to the OAuth client, which may include the workspace's live one.
	if err == nil || errors.Is(err, google.ErrNoRefreshToken) {
		if missing := google.MissingScopes(grant.Scopes); len(missing) > 0 {
			s.log.Info("ads connection refused: scopes not granted", "workspace", p.WorkspaceID, "missing", missing)
			return CallbackResult{}, &MissingScopesError{Missing: missing}
		}
	}
	switch {
	case errors.Is(err, google.ErrNoRefreshToken):
		return CallbackResult{}, fmt.Errorf("%w: Google granted no offline access (no refresh token): connect again", ErrInvalid)
	case errors.Is(err, google.ErrInvalidGrant):
		return CallbackResult{}, fmt.Errorf("%w: Google refused the authorization code (expired or already used): connect again", ErrInvalid)
	case oauthClientRefused(err):
		return CallbackResult{}, fmt.Errorf("Google refused the OAuth client (check --ads-oauth-client-id and --ads-oauth-client-secret): %w", err)
	case err != nil:
		return CallbackResult{}, googleFailure("exchange the authorization code", err, "")
	}
	unlock, err := s.lock(ctx, p.WorkspaceID)
	if err != nil {
		return CallbackResult{}, err
	}
	defer unlock()
	cur, ok, err := s.conns.Get(ctx, p.WorkspaceID)
	if err != nil {
		return CallbackResult{}, err
	}
	if ok && cur.Connected() && (cur.GoogleAccountID == "" || cur.GoogleAccountID != grant.Account.ID) {
		held, err := s.hold(ctx, p, grant, cur)
		return CallbackResult{Connection: cur, Pending: held}, err
	}
	// A reconnection does not revoke the credential it replaces: when the same Google user
	// consents again, revoking the old token would end the new grant too.
	c, err := s.conns.Connect(ctx, p.Actor, p.WorkspaceID, controlplane.AdGrant{RefreshToken: grant.RefreshToken, Scopes: grant.Scopes,
		GoogleAccountID: grant.Account.ID, GoogleAccountEmail: grant.Account.Email})
	if err != nil {
		return CallbackResult{}, err
	}
	s.log.Info("ads connection stored", "workspace", c.WorkspaceID, "connection", c.ConnectionID, "sealedWithKey", c.SealedWithKey)
	return CallbackResult{Connection: c}, nil
}

func oauthClientRefused(err error) bool {
	var re *oauth2.RetrieveError
	return errors.As(err, &re) && (re.ErrorCode == "invalid_client" || re.ErrorCode == "unauthorized_client")
}
