package ingest

import (
	"context"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/schemas"
)

// admitted is who sent a request the edge admitted (credentials, source and workspace checked) and
// what its Redis said: within the rate limit or not and, for a valid server event, the event ID's
// reservation. With a refusal it names the source when one was found.
type admitted struct {
	sourceID, workspaceID, appID string
	ref                          *edgeRef
	allowed                      bool
	state                        reservation
}

// fastPath reports whether requests may take the one-script path (edge_admit.go).
func (s *Service) fastPath() bool { return s.recs != nil && s.fast != nil }

// learn records where a resolved public key's records are and creates them where absent, so its
// next request takes the one-script path. A failure only means the next request resolves again.
func (s *Service) learn(ctx context.Context, pk string, src controlplane.Source, w controlplane.Workspace) *edgeRef {
	ref := newEdgeRef(s.recs, src.ID, src.WorkspaceID)
	if !s.fastPath() {
		return ref
	}
	if err := s.recs.FillEdge(ctx, src, w); err != nil {
		s.d.Log.Warn("edge records not filled; the next request resolves again", "err", err)
		return ref
	}
	s.refs.put(pk, ref)
	return ref
}

// admitServer authenticates a server event and admits it: a valid one is counted and its ID
// reserved, an invalid one (valid false) only counted. The error is the refusal.
func (s *Service) admitServer(ctx context.Context, private string, req *schemas.ServerEventRequest, valid bool, token string) (admitted, error) {
	limit := s.policy.LimitFor(kindServer)
	mode := modeCount
	if valid {
		mode = modeAdmit
	}
	// A workspace API key is checked against its own cache by the control plane, so only a source's
	// private key takes the one-script path.
	if s.fastPath() && strings.HasPrefix(private, controlplane.PrivateKeyPrefix) {
		if ref, ok := s.refs.get(req.PublicKey); ok {
			r, err := s.fast.AdmitEdge(ctx, edgeQuery{ref: ref, mode: mode, publicKey: req.PublicKey,
				keyHash: controlplane.HashKey(private), teamSlug: req.TeamSlug, limitKey: ref.serverLimit, limit: limit,
				eventID: req.EventID, token: token})
			if err != nil {
				return admitted{}, err
			}
			if r.status != statusMiss {
				return admitted{sourceID: ref.sourceID, workspaceID: ref.workspaceID, appID: r.appID, ref: ref,
					allowed: r.status == statusOK, state: r.state}, r.refusal(false)
			}
		}
	}
	src, w, err := s.d.ControlPlane.AuthenticateServerKey(ctx, private, req.PublicKey, req.TeamSlug)
	if err != nil {
		return admitted{}, err
	}
	if err := checkWorkspace(w, src); err != nil {
		return admitted{sourceID: src.ID, workspaceID: src.WorkspaceID}, err
	}
	var ref *edgeRef
	if strings.HasPrefix(private, controlplane.PrivateKeyPrefix) {
		ref = s.learn(ctx, req.PublicKey, src, w)
	} else {
		ref = newEdgeRef(s.recs, src.ID, src.WorkspaceID)
	}
	a := admitted{sourceID: src.ID, workspaceID: src.WorkspaceID, appID: src.AppID, ref: ref}
	if !valid {
		// As before the one-script path: a Redis failure here leaves the validation error to answer.
		ok, err := s.d.Limiter.Allow(ctx, ref.serverLimit, limit)
		a.allowed = err != nil || ok
		return a, nil
	}
	a.allowed, a.state, err = s.d.Admitter.Admit(ctx, ref.serverLimit, limit, ref.scope, req.EventID, token)
	return a, err
}

// admitBatch authenticates a browser batch by its public key and origin and counts it against the
// source's limit. Once the origin is allowed, the answer carries credentials (corsAllowedOrigin),
// refusals included.
func (s *Service) admitBatch(ctx context.Context, c *gin.Context, pk string) (admitted, error) {
	limit := s.policy.LimitFor(kindBrowser)
	origin := c.GetHeader("Origin")
	if s.fastPath() {
		if ref, ok := s.refs.get(pk); ok {
			// The script compares the origin as sent with the stored normalized ones, as AllowsOrigin does.
			if n, err := controlplane.NormalizeOrigin(origin); err != nil || n != origin {
				origin = ""
			}
			r, err := s.fast.AdmitEdge(ctx, edgeQuery{ref: ref, mode: modeBrowser, publicKey: pk, origin: origin,
				limitKey: ref.browserLimit, limit: limit})
			if err != nil {
				return admitted{}, err
			}
			if r.status != statusMiss {
				if r.status != "gone" && r.status != "origin" {
					corsAllowedOrigin(c)
				}
				return admitted{sourceID: ref.sourceID, workspaceID: ref.workspaceID, appID: r.appID, ref: ref,
					allowed: r.status == statusOK}, r.refusal(true)
			}
		}
	}
	src, w, err := s.d.ControlPlane.SourceWithWorkspace(ctx, pk)
	if err != nil {
		return admitted{}, err
	}
	if !src.AllowsOrigin(c.GetHeader("Origin")) {
		return admitted{sourceID: src.ID, workspaceID: src.WorkspaceID}, errOriginNotAllowed
	}
	corsAllowedOrigin(c)
	if err := checkWorkspace(w, src); err != nil {
		return admitted{sourceID: src.ID, workspaceID: src.WorkspaceID}, err
	}
	ref := s.learn(ctx, pk, src, w)
	a := admitted{sourceID: src.ID, workspaceID: src.WorkspaceID, appID: src.AppID, ref: ref}
	ok, err := s.d.Limiter.Allow(ctx, ref.browserLimit, limit)
	if err != nil {
		return a, err
	}
	if !ok {
		return a, errRateLimited
	}
	a.allowed = true
	return a, nil
}
