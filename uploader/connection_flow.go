package uploader

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/uploader/google"
)

// The browser's leg of a connection the admin API started, on the callback's host (the admin HTTP
// API serves them without a key):
//
//	OAuthBeginPath    opened once by the user's browser: binds it to the flow (a cookie) and
//	                  redirects to Google's consent page
//	OAuthCallbackPath Google's redirect back; needs the cookie
//	OAuthConfirmPath  the confirmation of a replacement by another Google account; needs the
//	                  cookie and the page's CSRF token
const (
	OAuthBeginPath   = "/api/admin/ads/oauth/begin"
	OAuthConfirmPath = "/api/admin/ads/oauth/confirm"
)

// ForbiddenError: the browser or the key that started the flow may not finish it; nothing was
// stored. Reason says why, for the page.
type ForbiddenError struct{ Reason string }

func (e *ForbiddenError) Error() string { return e.Reason }

var errWrongBrowser = &ForbiddenError{Reason: "this browser did not start the connection (the connection link was opened in another " +
	"browser, or its cookie is missing): nothing was stored; start the connection again and finish it in the browser that opens the link"}

// BrowserStart is a connection the admin API started: the user opens BeginURL in their browser
// before ExpiresAt.
type BrowserStart struct {
	BeginURL  string
	ExpiresAt time.Time
}

// ConnectWithKey starts a connection (or a reconnection) for the admin API's caller, the admin key
// keyID (its ID only is kept). It returns the single-use begin URL on this service: the browser
// that opens it first is the one that may finish the connection.
func (s *Setup) ConnectWithKey(ctx context.Context, actor, keyID, workspaceID string) (BrowserStart, error) {
	if keyID == "" {
		return BrowserStart{}, errors.New("ads connect: the starting key's ID is required")
	}
	return s.connectBrowser(ctx, pendingConnect{WorkspaceID: workspaceID, Actor: actor, Origin: originAPI, KeyID: keyID})
}

// connectBrowser starts a browser's flow for the starter p names (a key or a signed-in person).
func (s *Setup) connectBrowser(ctx context.Context, p pendingConnect) (BrowserStart, error) {
	if !s.Configured() {
		return BrowserStart{}, fmt.Errorf("%w: set --ads-oauth-client-id and --ads-oauth-client-secret", ErrNotConfigured)
	}
	if _, err := s.store.Workspace(ctx, p.WorkspaceID); err != nil {
		return BrowserStart{}, err
	}
	p.Verifier = google.NewVerifier()
	state, err := s.states.put(ctx, p)
	if err != nil {
		return BrowserStart{}, err
	}
	b, err := s.states.putBegin(ctx, state)
	if err != nil {
		return BrowserStart{}, err
	}
	base, _ := s.FlowLocation()
	return BrowserStart{BeginURL: base + OAuthBeginPath + "?" + url.Values{"flow": {b}}.Encode(),
		ExpiresAt: time.Now().Add(s.cfg.StateTTL).UTC().Truncate(time.Second)}, nil
}

// FlowLocation is where the browser's leg runs: base is the callback URL's scheme, host and any
// path prefix before OAuthCallbackPath (the begin and confirm URLs go under it, so the flow's cookie
// is set on the host the callback is reached at), and cookiePath the path the cookie is limited to.
func (s *Setup) FlowLocation() (base, cookiePath string) {
	u, err := url.Parse(s.callbackURL)
	if err != nil {
		return "", "/"
	}
	prefix := strings.TrimSuffix(u.Path, OAuthCallbackPath)
	if prefix == u.Path {
		prefix = ""
	}
	return u.Scheme + "://" + u.Host + prefix, prefix + "/api/admin/ads/oauth/"
}

// Begun is the begin URL's answer: the browser gets Binding as its cookie (until ExpiresAt) and is
// sent to AuthURL, Google's consent page.
type Begun struct {
	AuthURL   string
	Binding   string
	ExpiresAt time.Time
}

// Begin binds the browser that opened a begin URL to its flow: the begin token is used up, the flow
// gets the digest of a new random nonce (the browser's cookie), and the consent URL is returned. The
// key that started the flow and the workspace's subscription are checked first.
func (s *Setup) Begin(ctx context.Context, beginToken string) (Begun, error) {
	gone := fmt.Errorf("%w: this connection link is unknown, already opened or older than %s: start the connection again", ErrInvalid, s.cfg.StateTTL)
	if !s.Configured() {
		return Begun{}, ErrNotConfigured
	}
	state, ok, err := s.states.takeBegin(ctx, beginToken)
	if err != nil {
		return Begun{}, err
	}
	if !ok {
		return Begun{}, gone
	}
	p, _, ok, err := s.states.get(ctx, state)
	if err != nil {
		return Begun{}, err
	}
	if !ok || p.Origin != originAPI || p.BindingHash != "" {
		return Begun{}, gone
	}
	if err := s.revalidate(ctx, p.Origin, p.KeyID, p.UserID, p.WorkspaceID); err != nil {
		return Begun{}, err
	}
	nonce, err := randomToken()
	if err != nil {
		return Begun{}, err
	}
	p.BindingHash = digest(nonce)
	if err := s.states.bind(ctx, state, p); err != nil {
		return Begun{}, err
	}
	return Begun{AuthURL: s.oauth.AuthCodeURL(state, p.Verifier), Binding: nonce, ExpiresAt: p.ExpiresAt}, nil
}

// BrowserCallback finishes a connection the admin API started, for the browser presenting binding
// (the cookie Begin set). A browser without it, or with another flow's, cannot finish the flow nor
// use its state up. An empty code (Google's refusal) only uses the state up.
func (s *Setup) BrowserCallback(ctx context.Context, state, code, binding string) (CallbackResult, error) {
	p, err := s.takeState(ctx, state, func(p pendingConnect) error {
		switch {
		case p.Origin != originAPI:
			return fmt.Errorf("%w: this connection was started on the command line: finish it there with "+
				"`revtrack admin ads callback '<the address of this page>'`", ErrInvalid)
		case !matches(p.BindingHash, binding):
			return errWrongBrowser
		}
		return nil
	})
	if err != nil {
		return CallbackResult{}, err
	}
	return s.finish(ctx, p, code)
}

// Callback finishes a connection the operator's command line started (Connect) with the state and
// code of the URL Google redirected the browser to. A flow the admin API started is refused and
// left to its browser.
func (s *Setup) Callback(ctx context.Context, state, code string) (CallbackResult, error) {
	p, err := s.takeState(ctx, state, func(p pendingConnect) error {
		if p.Origin != originOperator {
			return fmt.Errorf("%w: this connection was started through the admin API: it can only be finished in the browser that opened its link", ErrInvalid)
		}
		return nil
	})
	if err != nil {
		return CallbackResult{}, err
	}
	return s.finish(ctx, p, code)
}

// takeState uses up state once check accepts its pending connection; a refused check leaves it.
func (s *Setup) takeState(ctx context.Context, state string, check func(pendingConnect) error) (pendingConnect, error) {
	if !s.Configured() {
		return pendingConnect{}, ErrNotConfigured
	}
	gone := fmt.Errorf("%w: the connection request is unknown, used or older than %s: start the connection again", ErrInvalid, s.cfg.StateTTL)
	p, raw, ok, err := s.states.get(ctx, state)
	if err != nil {
		return pendingConnect{}, err
	}
	if !ok {
		return pendingConnect{}, gone
	}
	if err := check(p); err != nil {
		return pendingConnect{}, err
	}
	if ok, err := s.states.take(ctx, state, raw); err != nil {
		return pendingConnect{}, err
	} else if !ok {
		return pendingConnect{}, gone
	}
	return p, nil
}

// revalidate checks, when a flow goes on without the credential that started it, that the starter
// may still connect the workspace: for the admin API, the key still authenticates (not revoked),
// still belongs to the workspace with the admin scope, and the workspace's subscription is still
// active; for the operator, the workspace still exists.
func (s *Setup) revalidate(ctx context.Context, origin, keyID, userID, workspaceID string) error {
	if origin != originAPI {
		_, err := s.store.Workspace(ctx, workspaceID)
		return err
	}
	if userID != "" {
		return s.revalidateUser(ctx, userID, workspaceID)
	}
	p, err := s.store.AuthenticateKeyID(ctx, keyID)
	switch {
	case errors.Is(err, controlplane.ErrInvalidKey):
		return &ForbiddenError{Reason: "the admin key that started this connection has been revoked: nothing was stored; start the connection again with a valid admin key"}
	case err != nil:
		return err
	case p.WorkspaceID != workspaceID:
		return &ForbiddenError{Reason: "the key that started this connection does not belong to the workspace: nothing was stored"}
	case p.Scope != controlplane.ScopeAdmin:
		return &ForbiddenError{Reason: "the key that started this connection is no longer admin-scoped: nothing was stored; start the connection again with an admin key"}
	}
	w, err := s.store.Workspace(ctx, workspaceID)
	if err != nil {
		return err
	}
	if !w.HasAccess() {
		return fmt.Errorf("%w: nothing was stored", controlplane.ErrInactiveSubs)
	}
	return nil
}
