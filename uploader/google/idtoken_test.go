package google

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"testing"
)

func jwt(claims map[string]any) string {
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	return enc(map[string]string{"alg": "RS256"}) + "." + enc(claims) + ".c2ln"
}

// The ID token names the consenting account only when it was issued by Google to this client.
func TestAccountFromIDToken(t *testing.T) {
	good := map[string]any{"iss": "https://accounts.google.com", "aud": "cid", "sub": "1045", "email": "a@example.com"}
	if a, err := accountFromIDToken(jwt(good), "cid"); err != nil || a != (Account{ID: "1045", Email: "a@example.com"}) {
		t.Fatalf("good token: %+v %v", a, err)
	}
	listed := map[string]any{"iss": "accounts.google.com", "aud": []string{"other", "cid"}, "sub": "1045"}
	if a, err := accountFromIDToken(jwt(listed), "cid"); err != nil || a.ID != "1045" {
		t.Fatalf("audience list: %+v %v", a, err)
	}
	for name, raw := range map[string]string{
		"another client":  jwt(map[string]any{"iss": "https://accounts.google.com", "aud": "other", "sub": "1045"}),
		"another issuer":  jwt(map[string]any{"iss": "https://evil.example", "aud": "cid", "sub": "1045"}),
		"no subject":      jwt(map[string]any{"iss": "https://accounts.google.com", "aud": "cid"}),
		"not a JWT":       "abc",
		"payload garbage": "a.%%%.c",
	} {
		if _, err := accountFromIDToken(raw, "cid"); !errors.Is(err, ErrBadIDToken) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
