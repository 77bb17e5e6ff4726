package ingest

import (
	"os"
	"regexp"
	"strings"
	"testing"

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
