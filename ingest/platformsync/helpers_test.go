package platformsync_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/revtrack/revtrack/devtools/partnerfake"
)

// peek returns a request's body and leaves it readable.
func peek(r *http.Request) string {
	b, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b))
	return string(b)
}

// hideTransactions serves the fake without the transactions created at or after from, as the
// platform would before it recorded them (late records).
func hideTransactions(e *env, from time.Time) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		e.fake.ServeHTTP(rec, r)
		out := rec.Body.Bytes()
		var body map[string]any
		if rec.Code == http.StatusOK && json.Unmarshal(out, &body) == nil {
			if data, ok := body["data"].(map[string]any); ok {
				if conn, ok := data["transactions"].(map[string]any); ok {
					kept := []any{}
					for _, edge := range conn["edges"].([]any) {
						at, _ := time.Parse(time.RFC3339, edge.(map[string]any)["node"].(map[string]any)["createdAt"].(string))
						if at.Before(from) {
							kept = append(kept, edge)
						}
					}
					conn["edges"] = kept
					out, _ = json.Marshal(body)
				}
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rec.Code)
		_, _ = w.Write(out)
	}
}

// transactionIDsBefore returns the app's transactions created before t, in API order.
func (e *env) transactionIDsBefore(t time.Time) []partnerfake.Transaction {
	var out []partnerfake.Transaction
	for tx := range e.ds.Transactions() {
		if tx.AppID == e.app && tx.CreatedAt.Before(t) {
			out = append(out, tx)
		}
	}
	return out
}

func ids(txs []partnerfake.Transaction) []string {
	out := make([]string, len(txs))
	for i, tx := range txs {
		out[i] = tx.ID
	}
	return out
}

func sortStrings(s []string) { sort.Strings(s) }

// metricValue sums a metric's samples whose labels include want.
func metricValue(t *testing.T, reg prometheus.Gatherer, name string, want map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var v float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metrics:
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			for k, w := range want {
				if labels[k] != w {
					continue metrics
				}
			}
			switch {
			case m.Counter != nil:
				v += m.Counter.GetValue()
			case m.Gauge != nil:
				v += m.Gauge.GetValue()
			case m.Histogram != nil:
				v += float64(m.Histogram.GetSampleCount())
			}
		}
	}
	return v
}

// walkLog records the transactions requests of the walks.
type walkLog struct {
	mu       sync.Mutex
	fwd, bwd []walkRequest
}

type walkRequest struct {
	min, max time.Time
	cursor   string
}

func (l *walkLog) requests() (fwd, bwd []walkRequest) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]walkRequest(nil), l.fwd...), append([]walkRequest(nil), l.bwd...)
}

// recordWalk logs every windowed transactions request before the fake serves it.
func recordWalk(e *env) *walkLog {
	l := &walkLog{}
	wrap := func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Query     string `json:"query"`
			Variables struct {
				Min    *time.Time `json:"createdAtMin"`
				Max    *time.Time `json:"createdAtMax"`
				After  string     `json:"after"`
				Before string     `json:"before"`
			} `json:"variables"`
		}
		if json.Unmarshal([]byte(peek(r)), &req) == nil && req.Variables.Min != nil && req.Variables.Max != nil {
			l.mu.Lock()
			wr := walkRequest{min: req.Variables.Min.UTC(), max: req.Variables.Max.UTC()}
			if strings.Contains(req.Query, "before: $before") {
				wr.cursor = req.Variables.Before
				l.bwd = append(l.bwd, wr)
			} else {
				wr.cursor = req.Variables.After
				l.fwd = append(l.fwd, wr)
			}
			l.mu.Unlock()
		}
		e.fake.ServeHTTP(w, r)
	}
	e.wrap.Store(&wrap)
	return l
}
