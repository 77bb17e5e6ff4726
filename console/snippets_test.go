package console_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The server-side snippets of the Sources screen (src/snippets/) follow docs/TRACKING.md's handoff
// rules. browsertest/snippets.test.mjs runs each against the real stack where the machine has its
// runtime (Node always; Ruby and PHP when installed); this test checks, without any runtime, that
// the three send the same request: endpoint, headers, body fields and environment variables, and
// that no key is written into them.
func TestServerSnippetsSendTheSameRequest(t *testing.T) {
	// The body's field names, as each language writes its object literal, and where the literal ends.
	snippets := map[string]struct {
		field *regexp.Regexp
		end   string
	}{
		"src/snippets/node-remix.server.mjs": {regexp.MustCompile(`(?m)^\s+(\w+)(?::|,)`), "\n  };"},
		"src/snippets/rails.rb":              {regexp.MustCompile(`(?m)^\s+"(\w+)" =>`), "}.compact"},
		"src/snippets/laravel.php":           {regexp.MustCompile(`(?m)^\s+'(\w+)' =>`), "], fn"},
	}
	want := []string{"acquisitionId", "amountCents", "currency", "customerRef", "eventId", "name", "occurredAt", "publicKey", "teamSlug"}
	for file, lit := range snippets {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		src := string(b)
		for _, s := range []string{"/api/tracking/server-events", "Authorization", "Bearer ", "Content-Type", "application/json", "POST",
			"REVTRACK_URL", "REVTRACK_TEAM", "REVTRACK_TRACKER_PK", "REVTRACK_TRACKER_SK", "revtrack_acquisition_id"} {
			if !strings.Contains(src, s) {
				t.Errorf("%s lacks %q", file, s)
			}
		}
		if regexp.MustCompile(`tracker_(sk|pk)_\w`).MatchString(src) {
			t.Errorf("%s holds a key: keys come from the environment", file)
		}
		start := strings.LastIndex(src[:strings.Index(src, "teamSlug")], "\n")
		body := src[start:]
		body = body[:strings.Index(body, lit.end)]
		var got []string
		for _, m := range lit.field.FindAllStringSubmatch(body, -1) {
			if !slices.Contains(got, m[1]) {
				got = append(got, m[1])
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s sends the fields %v, want %v", file, got, want)
		}
	}
}
