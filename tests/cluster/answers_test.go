package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// settleTables are the tables whose row counts stop changing once what was sent and synced has
// been processed: the landing tables and a derived table of each kind.
var settleTables = []string{"browser_events", "server_events", "funnel_events", "acquisition_links", "platform_transactions",
	"platform_lifecycle_events", "platform_customers", "reporting_customers", "reporting_customer_days", "upload_queue"}

// TestClusterSameAnswersAsSingleNode runs revtrack on the single-node test stack and on the local
// cluster, feeds both the same data (the partner fake's app synced, browser and server events
// through the edge, an install mapping in Validation only uploading to Google's fake) and compares
// every reporting, tracking and upload-queue answer. It also prints the cost of cluster mode on this
// machine (ingest throughput, summary latency), measured on both in the same run.
func TestClusterSameAnswersAsSingleNode(t *testing.T) {
	clusterEnv := clusterSettings(t)
	single := newInstance(t, "single", false, stackSettings(t, "test", false))
	clu := newInstance(t, "cluster", true, clusterEnv)
	f := newFakes(t)
	mappings := map[*instance]string{}
	var mu sync.Mutex
	both := func(name string, step func(t *testing.T, in *instance)) {
		t.Run(name, func(t *testing.T) {
			for _, in := range []*instance{single, clu} {
				t.Run(in.shape, func(t *testing.T) { t.Parallel(); step(t, in) })
			}
		})
	}
	both("setup", func(t *testing.T, in *instance) {
		start := time.Now()
		in.seed(t, f.data.Apps[0].ID)
		in.start(t, f.serverFlags()...)
		m := in.connect(t, f)
		mu.Lock()
		mappings[in] = m
		mu.Unlock()
		t.Logf("%s: migrated, seeded, started and connected in %v", in.shape, time.Since(start).Round(time.Millisecond))
	})
	if t.Failed() {
		return
	}
	clu.share()
	// The mappings exist on both: verified events from now on are uploaded (Validation only).
	tr := planTraffic(f.data, time.Now().UTC().Truncate(time.Second).Add(time.Second))
	both("feed", func(t *testing.T, in *instance) {
		start := time.Now()
		conn := in.conn(t)
		landed := func() uint64 { return countWhere(t, conn, "browser_events FINAL", in.sourceID) }
		newEdgeClient(in).sendAll(t, tr, landed)
		in.cli(t, append([]string{"admin", "sync", "run", testTeam, "--timeout", "3m", "--auto-migrate=false"}, f.serverFlags()...)...)
		in.settle(t, conn, tr)
		t.Logf("%s: fed and settled in %v", in.shape, time.Since(start).Round(time.Millisecond))
	})
	if t.Failed() {
		return
	}

	paths := answerPaths(f)
	compare := func(label string) {
		a1, a2 := fetchAnswers(t, single, mappings[single], paths), fetchAnswers(t, clu, mappings[clu], paths)
		diffs := 0
		for _, p := range paths {
			if a1[p] == a2[p] {
				continue
			}
			diffs++
			c1, b1, _ := strings.Cut(a1[p], " ")
			c2, b2, _ := strings.Cut(a2[p], " ")
			if c1 != c2 {
				t.Errorf("%s: %s: status %s on single node, %s on the cluster: %s", label, p, c1, c2, clip(b2))
				continue
			}
			t.Errorf("%s: %s differs:\n  %s", label, p, strings.Join(jsonDiff(b1, b2, 8), "\n  "))
		}
		t.Logf("%s: %d answers compared, %d differ", label, len(paths), diffs)
	}
	compare("no exclusions")
	// One paying shop excluded: every customer and reporting query then carries the exclusion rules.
	for _, in := range []*instance{single, clu} {
		in.exclude(t, f, true)
	}
	compare("one shop excluded")

	// The cost of cluster mode, same run, same machine (not asserted: a report), after the
	// comparison (its events would be in the compared answers), without the exclusion.
	for _, in := range []*instance{single, clu} {
		in.exclude(t, f, false)
		eps, landedIn := ingestThroughput(t, in, 2000)
		p50, p90, failed := summaryLatency(t, in, 15)
		t.Logf("COST %s: 2000 server events acknowledged and landed at %.0f events/s (%v); summary (computed, no-cache) p50 %v p90 %v (%d of 15 not 200)",
			in.shape, eps, landedIn.Round(time.Millisecond), p50.Round(time.Millisecond), p90.Round(time.Millisecond), failed)
	}
}

// clusterSettings skips unless the cluster tests are on, and returns the cluster's settings.
func clusterSettings(t *testing.T) map[string]string {
	t.Helper()
	env(t) // skips without REVTRACK_CLUSTER_TESTS=1
	return stackSettings(t, "test", true)
}

// countWhere counts the rows of the instance's source in from (a table, maybe with FINAL).
func countWhere(t testing.TB, conn chConn, from, sourceID string) uint64 {
	t.Helper()
	var n uint64
	if err := conn.QueryRow(context.Background(), "SELECT count() FROM "+from+" WHERE source_id = ?", sourceID).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", from, err)
	}
	return n
}

// settle waits until the traffic has landed and been derived, the platform sync's records are
// processed (row counts unchanged over two polls) and every upload row has left the pending states.
func (in *instance) settle(t *testing.T, conn chConn, tr traffic) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	prev, stable := "", 0
	for stable < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not settled within 2 minutes: %s", in.shape, prev)
		}
		time.Sleep(time.Second)
		var parts []string
		for _, table := range settleTables {
			var n uint64
			if err := conn.QueryRow(context.Background(), "SELECT count() FROM "+table).Scan(&n); err != nil {
				t.Fatalf("%s: count %s: %v", in.shape, table, err)
			}
			parts = append(parts, fmt.Sprintf("%s=%d", table, n))
		}
		var q struct {
			Rows []struct {
				Status string `json:"status"`
			} `json:"rows"`
		}
		in.call(t, nil, http.MethodGet, "/api/admin/ads/queue?limit=200", nil, &q)
		done := 0
		for _, r := range q.Rows {
			if r.Status == "validated" || r.Status == "rejected" {
				done++
			}
		}
		parts = append(parts, fmt.Sprintf("upload rows settled=%d/%d", done, tr.gclids))
		cur := strings.Join(parts, " ")
		if cur == prev && done == tr.gclids {
			stable++
		} else {
			stable = 0
		}
		prev = cur
	}
	t.Logf("%s settled: %s", in.shape, prev)
}

// answerPaths are the REST answers compared: reporting (summary, each metric and a series,
// customers, a customer, attribution, cohorts, movements), tracking (events, an acquisition, the
// funnel), the upload queue and the mapping's verification.
func answerPaths(f *fakes) []string {
	to := time.Now().UTC().Format("2006-01-02")
	from := time.Now().UTC().AddDate(0, -3, 0).Format("2006-01-02")
	rng := "from=" + from + "&to=" + to
	var shop string
	for _, sh := range f.data.Shops {
		if !sh.Test && !sh.Excluded {
			shop = sh.Domain
			break
		}
	}
	ps := []string{"/api/v1/summary", "/api/v1/summary?" + rng + "&customerScope=all", "/api/v1/summary?currency=USD&appId=" + testApp}
	for _, m := range []string{"mrr", "arr", "usage", "net-revenue-retention", "customer-concentration"} {
		ps = append(ps, "/api/v1/metrics/"+m+"?"+rng)
	}
	ps = append(ps, "/api/v1/metrics/mrr?interval=week&"+rng,
		"/api/v1/customers?limit=200&customerScope=all", "/api/v1/customers?paying=true&limit=50",
		"/api/v1/customers/"+url.PathEscape(shop),
		"/api/v1/attribution?groupBy=utm_source&"+rng, "/api/v1/attribution?groupBy=click_id_type&"+rng,
		"/api/v1/cohorts?"+rng, "/api/v1/mrr-movements?"+rng,
		"/api/v1/tracking/events?limit=200", "/api/v1/tracking/events?acquisitionId=acq-000",
		"/api/v1/tracking/acquisitions/acq-000", "/api/v1/tracking/acquisitions/acq-004",
		"/api/v1/tracking/funnel", "/api/v1/tracking/funnel?groupBy=click_id_type", "/api/v1/tracking/funnel?groupBy=utm_source",
		"/api/admin/ads/queue?limit=200", "/api/admin/ads/verification?mappingId={mapping}")
	return ps
}

// fetchAnswers gets every path and normalizes it (normalize).
func fetchAnswers(t *testing.T, in *instance, mapping string, paths []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, p := range paths {
		code, raw := in.call(t, nil, http.MethodGet, strings.ReplaceAll(p, "{mapping}", mapping), nil, nil)
		out[p] = fmt.Sprintf("%d %s", code, normalize(raw, map[string]string{in.sourceID: "<source>", mapping: "<mapping>"}))
	}
	return out
}

// volatile are fields that differ between two deployments fed the same data by construction: when
// an answer, a sync or a row was made, and how the uploader happened to batch its requests.
var volatile = map[string]bool{"generatedAt": true, "createdAt": true, "updatedAt": true, "requestId": true,
	"nextAttemptAt": true, "lastAttemptAt": true, "sentAt": true, "validatedAt": true, "acceptedAt": true, "rejectedAt": true,
	"receivedAt": true, "nextCursor": true, "workspaceId": true, "lastSuccessfulSyncAt": true, "requestEvents": true}

// isInstant tells an asOf that is an instant (a customer's analytics as of today are as of the
// answer's generation, a volatile time) from an asOf that is a date, which must match.
func isInstant(v any) bool {
	s, ok := v.(string)
	return ok && strings.Contains(s, "T")
}

// derived are IDs each deployment derives from its own source or workspace ID (a session ID is a
// UUID of the source and the browser): they are renumbered in order of appearance, so that which
// events share a session still counts, not the value.
var derived = map[string]bool{"sessionId": true, "eventIdHash": true, "transactionId": true, "rowId": true}

// rowTimes are the verification steps whose time is when this deployment made or sent a row.
var rowTimes = map[string]bool{"queue_row": true, "validated": true, "live_event": true, "platform_confirmed": true}

var (
	rowIDPattern = regexp.MustCompile(`uq_[0-9a-f]{32}`)
	// batchIndex is an event's place in the request the uploader sent it in (Google's message).
	batchIndex = regexp.MustCompile(`events\.events\[[0-9]+\]`)
)

// normalize drops volatile fields, replaces the deployment's own IDs, renumbers derived ones and
// orders upload rows by what they are about (their creation order is the processors' timing), then
// prints the JSON with sorted keys.
func normalize(raw []byte, ids map[string]string) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	numbered := map[string]string{}
	var walk func(key string, x any) any
	walk = func(key string, x any) any {
		switch x := x.(type) {
		case map[string]any:
			if step, _ := x["step"].(string); rowTimes[step] {
				delete(x, "at")
			}
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if volatile[k] || (k == "asOf" && isInstant(x[k])) {
					delete(x, k)
					continue
				}
				x[k] = walk(k, x[k])
			}
			return x
		case []any:
			if key == "rows" {
				sort.SliceStable(x, func(i, j int) bool { return rowKey(x[i]) < rowKey(x[j]) })
			}
			for i := range x {
				x[i] = walk(key, x[i])
			}
			return x
		case string:
			if derived[key] && x != "" {
				if _, ok := numbered[x]; !ok {
					numbered[x] = fmt.Sprintf("<%s %d>", key, len(numbered)+1)
				}
				return numbered[x]
			}
			for id, ph := range ids {
				if id != "" {
					x = strings.ReplaceAll(x, id, ph)
				}
			}
			return batchIndex.ReplaceAllString(rowIDPattern.ReplaceAllString(x, "uq_<row>"), "events.events[<i>]")
		}
		return x
	}
	out, _ := json.Marshal(walk("", v)) // maps marshal with sorted keys
	return string(out)
}

// rowKey orders upload rows by acquisition, milestone and event time.
func rowKey(x any) string {
	m, _ := x.(map[string]any)
	return fmt.Sprint(m["acquisitionId"], " ", m["milestone"], " ", m["eventTime"])
}

func clip(s string) string {
	if len(s) > 3000 {
		return s[:3000] + "…"
	}
	return s
}

func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, int(p*float64(len(s))))]
}
