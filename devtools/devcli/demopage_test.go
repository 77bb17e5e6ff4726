package devcli_test

import (
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/revtrack/revtrack/cmd/revtrack/runapp"
	"github.com/revtrack/revtrack/devtools/devcli"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/internal/testenv/pipeline"
)

var (
	curlPre = regexp.MustCompile(`(?s)<pre id="curl"[^>]*>(.*?)</pre>`)
	eventID = regexp.MustCompile(`"eventId":"([^"]+)"`)
)

// TestDemoPageExampleWorksWhenPasted loads the demo page twice in headless Chromium (tracker.js from
// a real `revtrack all`), takes the server-event command each load shows, and runs it in bash as a
// developer who pasted it would, with TRACKER_SK set to the key seed-demo printed. Each example
// must be accepted as a new install: the key reaches the server (the shell expands it) and each
// example has an event ID of its own (the edge answers a repeated ID as a duplicate).
func TestDemoPageExampleWorksWhenPasted(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium is required: run `make test` (its browser-deps target installs it)")
	}
	db := pipeline.Migrated(t)
	app := runapp.Start(t, testenv.KafkaConfig(t), db.CH, db.RedisC, "--log-level", "warn")
	_, pk, sk := seedDemo(t, db.CH, db.RedisC)

	pageAddr := runapp.FreeAddr(t)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- devcli.Execute(ctx, []string{"demo-page", "--addr", pageAddr, "--public-key", pk, "--base-url", app.URL(), "--log-level", "warn"},
			io.Discard, io.Discard)
	}()
	t.Cleanup(func() {
		stop()
		if code := <-done; code != 0 {
			t.Errorf("demo-page exited %d", code)
		}
	})
	waitUp(t, "http://"+pageAddr+"/")

	shown := func() string {
		t.Helper()
		// The flags of the tracker's browser tests (ingest/tracker/browsertest/harness.mjs); virtual
		// time lets the page's script wait for tracker.js before the DOM is printed.
		out, err := exec.Command(chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync",
			"--virtual-time-budget=10000", "--dump-dom", "http://"+pageAddr+"/").Output()
		if err != nil {
			t.Fatalf("chromium: %v", err)
		}
		m := curlPre.FindSubmatch(out)
		if m == nil || !strings.HasPrefix(string(m[1]), "curl ") {
			t.Fatalf("the page shows no command:\n%s", out)
		}
		return html.UnescapeString(string(m[1]))
	}
	first, second := shown(), shown()
	t.Logf("shown:\n%s", first)
	for _, c := range []string{first, second} {
		for _, ph := range []string{"{eventId}", "{acquisitionId}", "{occurredAt}"} {
			if strings.Contains(c, ph) {
				t.Fatalf("%s is left in %s", ph, c)
			}
		}
	}
	if id1, id2 := eventID.FindStringSubmatch(first), eventID.FindStringSubmatch(second); id1 == nil || id2 == nil || id1[1] == id2[1] {
		t.Fatalf("two examples must have two event IDs: %q, %q", id1, id2)
	}

	paste := func(command string) map[string]any {
		t.Helper()
		cmd := exec.Command("bash", "-c", command)
		cmd.Env = append(os.Environ(), "TRACKER_SK="+sk)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v", command, err)
		}
		var answer map[string]any
		if err := json.Unmarshal(out, &answer); err != nil {
			t.Fatalf("answer %q: %v", out, err)
		}
		return answer
	}
	for _, c := range []string{first, second} {
		if a := paste(c); a["accepted"] != true || a["duplicate"] != false {
			t.Errorf("pasted example answered %v, want a new accepted event", a)
		}
	}
	if a := paste(first); a["duplicate"] != true {
		t.Errorf("the same example twice answered %v, want a duplicate", a)
	}
}

func waitUp(t *testing.T, url string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			return
		}
	}
	t.Fatalf("%s did not answer", url)
}
