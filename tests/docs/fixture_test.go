package docs

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/revtrack/revtrack/cmd/revtrack/runapp"
	"github.com/revtrack/revtrack/devtools/googlefake"
	"github.com/revtrack/revtrack/devtools/partnerfake"
	"github.com/revtrack/revtrack/internal/testenv"
)

// instance is what `make run` gives a reader, made for one test: the server (`revtrack all`) on its
// own database, topics and Redis prefix, the two platform fakes, and the binaries on a PATH.
type instance struct {
	root string
	env  []string // the environment every block starts from, before its prelude
}

// startInstance builds bin/revtrack and bin/revtrack-dev into a temporary directory (the docs run
// the binaries, as a reader does), serves the partner API fake with the demo data set and the
// Google fake, and starts revtrack against them the way deploy/local/run does.
func startInstance(t *testing.T) instance {
	t.Helper()
	root := repoRoot(t)
	bin := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-o", bin+string(os.PathSeparator), "./cmd/revtrack", "./cmd/revtrack-dev")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	// The demo partner API as `revtrack-dev partner-api` serves it: the demo data set ending today,
	// no rate limit (make run's first sync would otherwise take minutes).
	pcfg := partnerfake.DefaultServerConfig()
	pcfg.RequestsPerSecond = 0
	partner := httptest.NewServer(partnerfake.NewServer(partnerfake.Generate(partnerfake.DemoConfig(time.Now())), pcfg))
	t.Cleanup(partner.Close)
	google := httptest.NewServer(googlefake.New(googlefake.DefaultConfig()))
	t.Cleanup(google.Close)

	kc, ch, rc := testenv.KafkaConfig(t), testenv.ClickHouseConfig(t), testenv.RedisConfig(t)
	const clientID, clientSecret = "revtrack-local", "revtrack-local-secret"
	app := runapp.Start(t, kc, ch, rc, "--partner-api-base-url", partner.URL, "--ads-google-base-url", google.URL,
		"--ads-oauth-client-id", clientID, "--ads-oauth-client-secret", clientSecret,
		// A shorter dispatch interval than make run's 5 s only makes the ads walkthrough's waits shorter.
		"--ads-dispatch-interval", "1s")

	// What the blocks inherit: the test stack's name (so `deploy/local/cli-env` prints its addresses),
	// this test's database, topics and Redis prefix, the fakes' URLs and the server's base URL, which
	// cli-env keeps because they are set, and the freshly built binaries instead of bin/.
	env := []string{
		"STACK_NAME=test",
		"BIN_DIR=" + bin,
		"REVTRACK_CLICKHOUSE_DATABASE=" + ch.Database,
		"REVTRACK_KAFKA_TOPIC_SUFFIX=" + kc.TopicSuffix,
		"REVTRACK_REDIS_KEY_PREFIX=" + rc.KeyPrefix,
		"REVTRACK_PARTNER_API_BASE_URL=" + partner.URL,
		"REVTRACK_ADS_GOOGLE_BASE_URL=" + google.URL,
		"REVTRACK_HTTP_ADDR=" + app.Addr,
		"REVTRACK_BASE_URL=" + app.URL(),
	}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		// A reader's shell has none of revtrack's settings until cli-env gives them; GOFLAGS and the
		// like stay, and so do the test stack's ClickHouse credentials, which cli-env prints anyway.
		if strings.HasPrefix(name, "REVTRACK_") || name == "STACK_NAME" || name == "STACK_DIR" || name == "BASE_URL" {
			continue
		}
		env = append(env, kv)
	}
	return instance{root: root, env: env}
}
