package controlplane

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"
)

// Argon2id parameters: OWASP's Password Storage Cheat Sheet's first configuration (19 MiB, 2
// passes, 1 lane) with a 16-byte salt and a 32-byte tag. RFC 9106's second option (64 MiB, 3
// passes, 4 lanes) was measured first on the shared 2-core machine: 0.5-0.8 s a hash and up to
// 3.7 s for an accepted invitation, which made every sign-in a multi-second wait and a handful of
// concurrent ones a way to stall the query component; this is about a fifth of its work
// (docs/SECURITY.md, "Console sessions"). The parameters are written into every PHC string, so
// raising them later leaves stored hashes verifiable. At most passwordHashSlots hashes run at once
// per process (hashSlots), so a burst of sign-ins costs at most that many times 19 MiB.
const (
	argonTime    = 2
	argonMemory  = 19 * 1024 // KiB
	argonThreads = 1
	argonSaltLen = 16
	argonKeyLen  = 32

	// MinPasswordLength is the shortest password accepted (NIST SP 800-63B asks for at least 8
	// without other composition rules; the console asks for 12).
	MinPasswordLength = 12
	// maxPasswordLength bounds the work an attacker can ask of one hash.
	maxPasswordLength = 1024

	passwordHashSlots = 4
)

var hashSlots = make(chan struct{}, passwordHashSlots)

// ErrWrongPassword: the password does not match the stored hash.
var ErrWrongPassword = errors.New("wrong password")

// ValidatePassword checks a new password's length (in characters, not bytes).
func ValidatePassword(p string) error {
	n := utf8.RuneCountInString(p)
	if n < MinPasswordLength {
		return fmt.Errorf("%w: password must be at least %d characters", ErrInvalid, MinPasswordLength)
	}
	if len(p) > maxPasswordLength {
		return fmt.Errorf("%w: password must be at most %d bytes", ErrInvalid, maxPasswordLength)
	}
	return nil
}

// HashPassword returns the argon2id PHC string of p:
// $argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash> (unpadded standard base64).
func HashPassword(p string) (string, error) {
	if err := ValidatePassword(p); err != nil {
		return "", err
	}
	salt := make([]byte, argonSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	key := idKey([]byte(p), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	enc := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads,
		enc.EncodeToString(salt), enc.EncodeToString(key)), nil
}

func idKey(p, salt []byte, t, m uint32, threads uint8, keyLen uint32) []byte {
	hashSlots <- struct{}{}
	defer func() { <-hashSlots }()
	return argon2.IDKey(p, salt, t, m, threads, keyLen)
}

// VerifyPassword compares p with a PHC string in constant time; ErrWrongPassword when it does not
// match (an empty or malformed hash never matches).
func VerifyPassword(phc, p string) error {
	t, m, threads, salt, want, err := parsePHC(phc)
	if err != nil || len(p) > maxPasswordLength {
		// Spend the same time as a real comparison, so a missing hash is not told apart by timing.
		idKey([]byte(p), dummySalt, argonTime, argonMemory, argonThreads, argonKeyLen)
		return ErrWrongPassword
	}
	got := idKey([]byte(p), salt, t, m, threads, uint32(len(want)))
	if subtle.ConstantTimeCompare(got, want) != 1 {
		return ErrWrongPassword
	}
	return nil
}

// BurnPasswordCheck spends the time of one VerifyPassword, for a sign-in whose e-mail address is
// unknown: the answer must not come back faster than a wrong password's.
func BurnPasswordCheck(p string) { _ = VerifyPassword("", p) }

var dummySalt = make([]byte, argonSaltLen)

func parsePHC(s string) (t, m uint32, threads uint8, salt, key []byte, err error) {
	parts := strings.Split(s, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return 0, 0, 0, nil, nil, errors.New("not an argon2id PHC string")
	}
	var v int
	if _, err = fmt.Sscanf(parts[2], "v=%d", &v); err != nil || v != argon2.Version {
		return 0, 0, 0, nil, nil, errors.New("unsupported argon2 version")
	}
	var p uint32
	if _, err = fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil || t == 0 || m == 0 || p == 0 || p > 255 || m > 1<<22 {
		return 0, 0, 0, nil, nil, errors.New("bad argon2 parameters")
	}
	enc := base64.RawStdEncoding
	if salt, err = enc.DecodeString(parts[4]); err != nil {
		return 0, 0, 0, nil, nil, err
	}
	if key, err = enc.DecodeString(parts[5]); err != nil || len(key) < 16 {
		return 0, 0, 0, nil, nil, errors.New("bad argon2 hash")
	}
	return t, m, uint8(p), salt, key, nil
}
