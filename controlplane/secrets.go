package controlplane

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Sealed secrets (the advertising refresh token, the partner access token) are kept apart from the
// records they belong to. The records are ReplacingMergeTree tables: every change writes a new
// version, and older versions stay on disk until a merge that may never come, so a token written
// into a record would outlive its erasure in the versions before it. A secret row is written once
// per sealing and deleted explicitly: an erase or a replacement deletes the owner's rows with a
// mutation (ALTER TABLE … DELETE; ClickHouse 18.16 runs mutations in the background and has no
// mutations_sync) and then waits until a read of every stored row (no FINAL) finds none left.
// Reads take an owner's newest row, and only when its record says it holds a credential, so a row
// whose deletion is still running is never used.

// Kinds of sealed secret, the sealed_secrets.kind enum (migration 0017).
const (
	secretAdRefreshToken     = "ad_refresh_token"
	secretPartnerAccessToken = "partner_access_token"
)

// ErrEraseUnconfirmed: the deletion of a stored secret was requested but had not finished when the
// wait ended. The mutation is durable and keeps running; repeating the operation confirms it.
var ErrEraseUnconfirmed = errors.New("the stored credential's deletion has not finished yet")

// DefaultEraseTimeout bounds the wait for a deletion mutation (Store.EraseTimeout). On an idle
// server a mutation of this small table ends within a second; it waits for a free background
// thread when the server is busy merging.
const DefaultEraseTimeout = 30 * time.Second

const (
	insertSecret = `INSERT INTO sealed_secrets (kind, owner_id, workspace_id, sealed, key_id, stored_at, version)`
	// The newest sealing of an owner; max(version) picks it without relying on a merge.
	selectSecret = `SELECT argMax(sealed, version), max(version), count() FROM sealed_secrets WHERE kind = ? AND owner_id = ?`
	// Rows of an owner older than a version (every row with version 18446744073709551615).
	countSecretsBelow  = `SELECT count() FROM sealed_secrets WHERE kind = ? AND owner_id = ? AND version < ?`
	deleteSecretsBelow = `ALTER TABLE sealed_secrets DELETE WHERE kind = ? AND owner_id = ? AND version < ?`
)

// legacyColumn is where a record table held its owner's sealed token before migration 0017. The
// migration cleared it; an erase clears it again for its owner should a binary older than the
// migration have written one since (a rolling upgrade).
type legacyColumn struct {
	table, column, ownerColumn string
}

var (
	legacyAdToken      = legacyColumn{table: "ad_connections", column: "refresh_token_enc", ownerColumn: "connection_id"}
	legacyPartnerToken = legacyColumn{table: "partner_connections", column: "access_token_enc", ownerColumn: "workspace_id"}
)

func (l legacyColumn) count() string {
	return `SELECT count() FROM ` + l.table + ` WHERE ` + l.ownerColumn + ` = ? AND ` + l.column + ` != ''`
}

func (l legacyColumn) clear() string {
	return `ALTER TABLE ` + l.table + ` UPDATE ` + l.column + ` = '' WHERE ` + l.ownerColumn + ` = ? AND ` + l.column + ` != ''`
}

// SecretQueries lists the SQL of sealed secrets, for compatibility checks.
func SecretQueries() []string {
	return []string{insertSecret, selectSecret, countSecretsBelow, deleteSecretsBelow,
		legacyAdToken.count(), legacyAdToken.clear(), legacyPartnerToken.count(), legacyPartnerToken.clear()}
}

const allVersions = ^uint64(0)

// putSecret stores a new sealing of owner's secret and returns its version; the caller deletes the
// older ones (supersede) once the record that uses it is written.
func (s *Store) putSecret(ctx context.Context, kind, ownerID, workspaceID, sealed string) (uint64, error) {
	keyID, err := SealedKeyID(sealed)
	if err != nil {
		return 0, err
	}
	v := s.version()
	if err := s.insert(ctx, insertSecret, []any{kind, ownerID, workspaceID, sealed, keyID, s.now().UTC().Truncate(time.Second), v}); err != nil {
		return 0, fmt.Errorf("write sealed secret: %w", err)
	}
	return v, nil
}

// secret returns owner's newest sealed secret and its version; ok is false when none is stored.
func (s *Store) secret(ctx context.Context, kind, ownerID string) (sealed string, version uint64, ok bool, err error) {
	var n uint64
	if err := s.ch.QueryRow(ctx, selectSecret, kind, ownerID).Scan(&sealed, &version, &n); err != nil {
		return "", 0, false, fmt.Errorf("read sealed secret: %w", err)
	}
	return sealed, version, n > 0, nil
}

// supersede deletes owner's sealings older than the newest one and waits for it.
func (s *Store) supersede(ctx context.Context, kind, ownerID string) error {
	_, latest, ok, err := s.secret(ctx, kind, ownerID)
	if err != nil || !ok {
		return err
	}
	return s.deleteSecrets(ctx, kind, ownerID, latest)
}

// eraseSecret deletes every stored copy of owner's secret: its rows in sealed_secrets and a token
// left in its record's legacy column. It returns once a read of every stored row finds none, or
// an error wrapping ErrEraseUnconfirmed when Store.EraseTimeout passed first.
func (s *Store) eraseSecret(ctx context.Context, kind, ownerID string, legacy legacyColumn) error {
	if err := s.deleteSecrets(ctx, kind, ownerID, allVersions); err != nil {
		return err
	}
	return s.mutateUntilNone(ctx, legacy.count(), legacy.clear(), []any{ownerID}, []any{ownerID})
}

// secretLeft reports whether any stored copy of owner's secret remains (an erase not yet confirmed).
func (s *Store) secretLeft(ctx context.Context, kind, ownerID string, legacy legacyColumn) (bool, error) {
	for _, q := range []struct {
		sql  string
		args []any
	}{{countSecretsBelow, []any{kind, ownerID, allVersions}}, {legacy.count(), []any{ownerID}}} {
		var n uint64
		if err := s.ch.QueryRow(ctx, q.sql, q.args...).Scan(&n); err != nil {
			return false, fmt.Errorf("count stored secrets: %w", err)
		}
		if n > 0 {
			return true, nil
		}
	}
	return false, nil
}

func (s *Store) deleteSecrets(ctx context.Context, kind, ownerID string, below uint64) error {
	args := []any{kind, ownerID, below}
	return s.mutateUntilNone(ctx, countSecretsBelow, deleteSecretsBelow, args, args)
}

// mutateUntilNone runs mutation when count finds rows, then polls count until it finds none. A
// mutation rewrites the parts that existed when it was issued, and a read without FINAL sees a
// part's old rows until its rewrite is done, so a zero count proves that no readable row is left.
func (s *Store) mutateUntilNone(ctx context.Context, count, mutation string, countArgs, mutationArgs []any) error {
	n, err := s.count(ctx, count, countArgs)
	if err != nil || n == 0 {
		return err
	}
	if err := s.ch.Exec(ctx, mutation, mutationArgs...); err != nil {
		return fmt.Errorf("delete stored secret: %w", err)
	}
	timeout := s.EraseTimeout
	if timeout <= 0 {
		timeout = DefaultEraseTimeout
	}
	deadline := time.Now().Add(timeout)
	for wait := 20 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		if n, err = s.count(ctx, count, countArgs); err != nil || n == 0 {
			return err
		}
		if time.Now().Add(wait).After(deadline) {
			return fmt.Errorf("%w: %d stored copies still present after %s; the deletion continues in ClickHouse: repeat the operation to confirm it",
				ErrEraseUnconfirmed, n, timeout)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %w", ErrEraseUnconfirmed, ctx.Err())
		case <-time.After(wait):
		}
	}
}

func (s *Store) count(ctx context.Context, q string, args []any) (uint64, error) {
	var n uint64
	if err := s.ch.QueryRow(ctx, q, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count stored secrets: %w", err)
	}
	return n, nil
}
