package tracker

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"

	"github.com/revtrack/revtrack/ingest/tracker/minify"
	"github.com/revtrack/revtrack/schemas"
)

// The script's budget (issue 17): at most 3 KB on the wire, gzip and brotli at the levels the edge
// serves them with (ingest/script.go compresses tracker.Script the same way).
func TestScriptWireSize(t *testing.T) {
	var gz bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = zw.Write(Script)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	var br bytes.Buffer
	bw := brotli.NewWriterLevel(&br, brotli.BestCompression)
	_, _ = bw.Write(Script)
	if err := bw.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("tracker.js: source %d B, minified %d B, gzip %d B, br %d B", len(Source), len(Script), gz.Len(), br.Len())
	if gz.Len() > 3072 || br.Len() > 3072 {
		t.Fatalf("tracker.js is %d bytes gzipped and %d with brotli: over 3072", gz.Len(), br.Len())
	}
}

// tracker.min.js is what `go generate` makes of tracker.js today: an edit of the source without
// regenerating fails here, not in a browser.
func TestMinifiedIsCurrent(t *testing.T) {
	want, err := minify.Script(Source)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, Script) {
		t.Fatal("tracker.min.js is not the minified tracker.js: run `go generate ./ingest/tracker` and commit tracker.min.js")
	}
}

// The script writes to the console only when data-debug is set: no console.log at all, and every
// console call sits on a line guarded by the debug flag.
func TestScriptConsoleOnlyWhenDebugging(t *testing.T) {
	src := string(Source)
	if strings.Contains(src, "console.log") {
		t.Error("tracker.js contains console.log")
	}
	for i, line := range strings.Split(src, "\n") {
		if strings.Contains(line, "console.") && !strings.Contains(line, "debug &&") {
			t.Errorf("line %d uses the console outside the debug path: %s", i+1, strings.TrimSpace(line))
		}
	}
}

// The expression of stripped parameter names is documented in the README as it is in the script.
// (ingest's tests keep it equal to the edge's own.)
func TestStripListDocumented(t *testing.T) {
	m := regexp.MustCompile(`const STRIP = /(.*)/;`).FindStringSubmatch(string(Source))
	if m == nil {
		t.Fatal("STRIP expression not found in tracker.js")
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile("(?m)^Stripped parameter names: `(.*)`$").FindSubmatch(readme)
	if line == nil {
		t.Fatal(`README.md has no "Stripped parameter names: …" line`)
	}
	if string(line[1]) != m[1] {
		t.Errorf("README documents %s, tracker.js strips %s", line[1], m[1])
	}
}

// The golden body decodes, with no unknown field, into the request types the edge itself decodes
// (schemas.CollectRequest, each event a schemas.BrowserEventRequest, whose first-touch and platform
// objects are the topic message types).
func TestGoldenBodyMatchesContract(t *testing.T) {
	raw, err := os.ReadFile("testdata/collect-body.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var body schemas.CollectRequest
	if err := decodeStrict(raw, &body); err != nil {
		t.Fatalf("golden body does not fit the contract: %v", err)
	}
	batch := make([]schemas.BrowserEventRequest, len(body.Batch))
	for i, ev := range body.Batch {
		if err := decodeStrict(ev, &batch[i]); err != nil {
			t.Fatalf("golden event %d does not fit the contract: %v", i, err)
		}
		var props map[string]any
		if p := batch[i].Properties; len(p) > 0 && json.Unmarshal(p, &props) != nil {
			t.Errorf("golden event %d: properties is not an object: %s", i, p)
		}
	}
	names := map[string]bool{}
	for _, e := range batch {
		names[e.Name] = true
		if e.EventID == "" || e.AcquisitionID == "" || e.SessionID == "" || e.OccurredAt == "" || e.URL == "" {
			t.Errorf("%s: a required field is empty", e.Name)
		}
		if e.FirstTouch.LandingURL == "" || e.FirstTouch.Gclid == "" {
			t.Errorf("%s: first touch incomplete: %+v", e.Name, e.FirstTouch)
		}
		if strings.Contains(e.URL, "id_token") {
			t.Errorf("%s: url keeps id_token", e.Name)
		}
	}
	for _, n := range []string{"page_view", "platform_context", "signup_clicked"} {
		if !names[n] {
			t.Errorf("golden body lacks a %s event", n)
		}
	}
}

// decodeStrict decodes one JSON value into v and refuses fields v does not declare.
func decodeStrict(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
