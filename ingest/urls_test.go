package ingest

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/revtrack/revtrack/ingest/tracker"
)

// tracker.js strips with the edge's expression: one list, in both places.
func TestTrackerStripsTheSameParams(t *testing.T) {
	m := regexp.MustCompile(`const STRIP = /(.*)/;`).FindSubmatch(tracker.Source)
	if m == nil {
		t.Fatal("STRIP expression not found in tracker.js")
	}
	if string(m[1]) != SecretParamPattern {
		t.Fatalf("tracker.js strips %s\nthe edge strips %s", m[1], SecretParamPattern)
	}
}

// The attribution parameters, and ordinary ones that merely resemble a secret word, are kept.
func TestAttributionParamsAreNeverStripped(t *testing.T) {
	for _, name := range []string{"tracker_ref", "utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content",
		"utm_id", "gclid", "gbraid", "wbraid", "embedded", "locale", "keyword", "author", "hostname", "shopify", "q", "page"} {
		if secretParam.MatchString(name) {
			t.Errorf("%s would be stripped", name)
		}
	}
}

// docs/TRACKING.md names every exact parameter name of the expression.
func TestStrippedParamsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/TRACKING.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"hmac", "timestamp", "session", "sessionid", "session_id", "session_state", "host", "shop",
		"code", "state", "nonce", "oauth_verifier", "code_verifier", "samlrequest", "samlresponse", "key", "auth", "authorization",
		"pass", "pwd", "otp", "jwt", "ticket", "sig", "sid", "phpsessid", "jsessionid",
		"token", "secret", "password", "passwd", "signature", "credential", "apikey", "api_key", "api-key"} {
		if !secretParam.MatchString(name) {
			t.Errorf("%s is listed here but not stripped", name)
		}
		if !strings.Contains(string(doc), "`"+name+"`") {
			t.Errorf("docs/TRACKING.md does not name `%s`", name)
		}
	}
}

// isSecretParam is SecretParamPattern without the regular expression: the same answer for every
// exact name, every word, and near misses around each.
func TestSecretParamMatcherIsThePattern(t *testing.T) {
	names := []string{"", "tracker_ref", "utm_source", "gclid", "gbraid", "wbraid", "keyword", "author", "hostname", "shopify",
		"api.key", "apixkey", "passord", "session-id", "sessionxid", "access_token", "x-amz-signature", "x-goog-credential",
		"client_secret", "key\n", "\nkey", "tok\xffen", "sessio", "ession_id"}
	for n := range secretExactNames {
		names = append(names, n)
	}
	names = append(names, secretNameParts...)
	for _, n := range slices.Clone(names) {
		if n == "" {
			continue
		}
		names = append(names, "x"+n, n+"x", "_"+n+"_", n[:len(n)-1], n[1:], strings.ToUpper(n))
	}
	for _, n := range names {
		l := strings.ToLower(n)
		if got, want := isSecretParam(l), secretParam.MatchString(l); got != want {
			t.Errorf("%q: matcher %v, pattern %v", l, got, want)
		}
	}
}

func FuzzSecretParamMatcher(f *testing.F) {
	for _, s := range []string{"code", "id_token", "api-key", "utm_source", "session_id", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l := strings.ToLower(s)
		if got, want := isSecretParam(l), secretParam.MatchString(l); got != want {
			t.Fatalf("%q: matcher %v, pattern %v", l, got, want)
		}
	})
}

// BenchmarkDecodeBrowserBatch: a batch of 20 page views as bench/ingest sends them, each distinct URL
// stripped once per batch (urlCache) or every time.
func BenchmarkDecodeBrowserBatch(b *testing.B) {
	raw := json.RawMessage(`{"eventId":"e-1","name":"page_view","occurredAt":"2026-11-26T12:00:00Z","acquisitionId":"acq-1",` +
		`"sessionId":"s-1","url":"https://bench.example/pricing?utm_source=ads","path":"/pricing","title":"Pricing",` +
		`"referrer":"https://www.google.com/","firstTouch":{"utmSource":"ads","gclid":"g-1",` +
		`"landingUrl":"https://bench.example/?utm_source=ads"}}`)
	now := time.Date(2026, 11, 26, 12, 0, 1, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		cache func() urlCache
	}{{"strip each", func() urlCache { return nil }}, {"strip once per batch", func() urlCache { return urlCache{} }}} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				urls := tc.cache()
				for range 20 {
					if _, err := decodeBrowserEvent(raw, now, time.Hour, urls); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

func BenchmarkSecretParam(b *testing.B) {
	names := []string{"utm_source", "utm_medium", "gclid", "page", "id_token"}
	b.Run("pattern", func(b *testing.B) {
		for b.Loop() {
			for _, n := range names {
				_ = secretParam.MatchString(n)
			}
		}
	})
	b.Run("matcher", func(b *testing.B) {
		for b.Loop() {
			for _, n := range names {
				_ = isSecretParam(n)
			}
		}
	})
}
