package ingest

import (
	"context"
	"errors"
	"time"

	"github.com/revtrack/revtrack/controlplane"
)

// refusalRecorder is the part of the control plane (controlplane.Store) that counts refusals per
// source for the source's status panel. A control plane without it (the tests' fakes) records none.
type refusalRecorder interface {
	RecordRefusedOrigin(ctx context.Context, sourceID, origin string) error
	RecordRefusedKey(ctx context.Context, sourceID, reason string) error
	RetiredPublicKeySource(ctx context.Context, pk string) (string, error)
	SourceWithWorkspace(ctx context.Context, pk string) (controlplane.Source, controlplane.Workspace, error)
}

// refusalSlots bounds the recordings in flight: under a flood of refusals (a busy page on an origin
// that is not allowed) the counts are sampled rather than queued, and the edge's answers never wait.
var refusalSlots = make(chan struct{}, 16)

const refusalTimeout = time.Second

// noteRefused records, off the request's path, a refusal that concerns one source: an origin not
// allowed, a disabled source, a rotated-away public key, or a private key that does not match the
// public key's source. sourceID is the resolved source's when there is one; pk the public key sent.
func (s *Service) noteRefused(err error, sourceID, pk, origin string) {
	rec, ok := s.d.ControlPlane.(refusalRecorder)
	if !ok {
		return
	}
	// The source: the one the edge resolved, or the public key's (the control plane's path returns
	// no source with its refusal).
	sourceOf := func(ctx context.Context) (string, error) {
		if sourceID != "" {
			return sourceID, nil
		}
		found, _, err := rec.SourceWithWorkspace(ctx, pk)
		if err != nil {
			return "", nil // not a live public key: nothing names a source
		}
		return found.ID, nil
	}
	var record func(ctx context.Context, id string) error
	switch {
	case err == errOriginNotAllowed:
		record = func(ctx context.Context, id string) error { return rec.RecordRefusedOrigin(ctx, id, origin) }
	case err == errSourceUnavailable:
		record = func(ctx context.Context, id string) error {
			return rec.RecordRefusedKey(ctx, id, controlplane.RefusedSourceDisabled)
		}
	case errors.Is(err, controlplane.ErrInvalidKey) && pk != "":
		record = func(ctx context.Context, id string) error {
			return rec.RecordRefusedKey(ctx, id, controlplane.RefusedPrivateKey)
		}
	case errors.Is(err, controlplane.ErrSourceUnavailable):
		sourceOf = func(ctx context.Context) (string, error) { return rec.RetiredPublicKeySource(ctx, pk) }
		record = func(ctx context.Context, id string) error {
			return rec.RecordRefusedKey(ctx, id, controlplane.RefusedPublicKeyRotated)
		}
	default:
		return
	}
	select {
	case refusalSlots <- struct{}{}:
	default:
		return
	}
	go func() {
		defer func() { <-refusalSlots }()
		ctx, cancel := context.WithTimeout(context.Background(), refusalTimeout)
		defer cancel()
		id, err := sourceOf(ctx)
		if err == nil && id != "" {
			err = record(ctx, id)
		}
		if err != nil {
			s.d.Log.Debug("refusal not recorded", "err", err)
		}
	}()
}
