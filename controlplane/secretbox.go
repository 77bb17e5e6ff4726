package controlplane

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// DevelopmentEncryptionKeys is the default of --encryption-keys: a fixed, published key for local
// use only (`make run`, tests). Anything sealed with it is readable by anyone who has this source
// code, so a production deployment must set its own keys.
const DevelopmentEncryptionKeys = DevelopmentKeyID + ":cmV2dHJhY2stZGV2ZWxvcG1lbnQtb25seS1rZXktMzI="

// DevelopmentKeyID is the ID of the development key; Keyring.Development reports sealing with it.
const DevelopmentKeyID = "dev-only-insecure"

// ErrCannotOpen: a sealed secret could not be opened (unknown key ID, wrong key, damaged data).
var ErrCannotOpen = errors.New("cannot open sealed secret")

const sealVersion = "v1"

var keyIDRe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Keyring seals secrets at rest with AES-256-GCM. It is configured by --encryption-keys
// (REVTRACK_ENCRYPTION_KEYS): a comma-separated list of id:base64key, each key 32 bytes. The first
// key seals; every key is tried (by the ID recorded in the ciphertext) to open. The sealed form is
//
//	v1:<keyid>:<base64(nonce|ciphertext)>
//
// Key rotation, without a moment where any stored secret is unreadable:
//
//  1. Generate a new key (`head -c 32 /dev/urandom | base64`) with a new ID and put it FIRST in the
//     list, keeping the old key second: --encryption-keys=k2:<new>,k1:<old>. Roll this out to every
//     instance. New secrets are now sealed with k2; old ones still open with k1.
//  2. Re-seal the stored secrets with the first key: `revtrack admin partner reseal`. It is
//     idempotent and prints how many rows it re-sealed; `revtrack admin partner show SLUG` names the
//     key that sealed a connection (sealedWithKey).
//  3. Once a re-seal reports 0 rows still sealed with another key, drop the old key from the list
//     and roll out again. A secret still sealed with a dropped key fails to open with
//     ErrCannotOpen naming the missing key ID; put the key back to recover it.
type Keyring struct {
	ids  []string
	aead map[string]cipher.AEAD
}

// ParseKeyring parses the --encryption-keys setting: ids must be unique and each key must decode
// (standard base64) to exactly 32 bytes.
func ParseKeyring(setting string) (*Keyring, error) {
	k := &Keyring{aead: map[string]cipher.AEAD{}}
	for i, part := range strings.Split(setting, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		id, b64, ok := strings.Cut(part, ":")
		if !ok || !keyIDRe.MatchString(id) {
			return nil, fmt.Errorf("key %d: want id:base64key with an id of letters, digits, '-' or '_'", i+1)
		}
		if _, dup := k.aead[id]; dup {
			return nil, fmt.Errorf("key id %q appears twice", id)
		}
		raw, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			return nil, fmt.Errorf("key %q: not standard base64", id)
		}
		if len(raw) != 32 {
			return nil, fmt.Errorf("key %q: decodes to %d bytes, want 32 (AES-256)", id, len(raw))
		}
		block, err := aes.NewCipher(raw)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", id, err)
		}
		gcm, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", id, err)
		}
		k.ids = append(k.ids, id)
		k.aead[id] = gcm
	}
	if len(k.ids) == 0 {
		return nil, errors.New("at least one key is required")
	}
	return k, nil
}

// PrimaryKeyID is the ID of the key that seals.
func (k *Keyring) PrimaryKeyID() string { return k.ids[0] }

// KeyIDs lists the configured key IDs, sealing key first.
func (k *Keyring) KeyIDs() []string { return append([]string(nil), k.ids...) }

// Development reports whether new secrets are sealed with the published development key.
func (k *Keyring) Development() bool { return k.ids[0] == DevelopmentKeyID }

// Seal encrypts plaintext with the first key. additional binds the ciphertext to its context (for
// example the workspace ID), so a sealed value copied to another row does not open.
func (k *Keyring) Seal(plaintext, additional string) (string, error) {
	id := k.ids[0]
	gcm := k.aead[id]
	nonce := make([]byte, gcm.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	out := gcm.Seal(nonce, nonce, []byte(plaintext), []byte(additional))
	return sealVersion + ":" + id + ":" + base64.StdEncoding.EncodeToString(out), nil
}

// SealedKeyID returns the ID of the key a sealed value names, without opening it.
func SealedKeyID(sealed string) (string, error) {
	parts := strings.SplitN(sealed, ":", 3)
	if len(parts) != 3 || parts[0] != sealVersion || parts[1] == "" {
		return "", fmt.Errorf("%w: not in the %s:<keyid>:<data> format", ErrCannotOpen, sealVersion)
	}
	return parts[1], nil
}

// Open decrypts a value sealed by Seal with any configured key and the same additional data.
func (k *Keyring) Open(sealed, additional string) (string, error) {
	id, err := SealedKeyID(sealed)
	if err != nil {
		return "", err
	}
	gcm, ok := k.aead[id]
	if !ok {
		return "", fmt.Errorf("%w: sealed with key %q, which is not in --encryption-keys (configured: %s)",
			ErrCannotOpen, id, strings.Join(k.ids, ", "))
	}
	raw, err := base64.StdEncoding.DecodeString(sealed[len(sealVersion)+1+len(id)+1:])
	if err != nil || len(raw) < gcm.NonceSize()+gcm.Overhead() {
		return "", fmt.Errorf("%w: damaged data", ErrCannotOpen)
	}
	pt, err := gcm.Open(nil, raw[:gcm.NonceSize()], raw[gcm.NonceSize():], []byte(additional))
	if err != nil {
		return "", fmt.Errorf("%w: key %q does not open it (the key's bytes changed, or the data was altered)", ErrCannotOpen, id)
	}
	return string(pt), nil
}
