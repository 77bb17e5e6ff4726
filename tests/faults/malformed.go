package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// mcase is one malformed request. Whatever it is, the answer must not be a 5xx, and a refusal must
// be a JSON {error, message} (MCP, which speaks JSON-RPC, only the first).
type mcase struct {
	Name   string
	Edge   string // "ingest" or "query"
	Method string
	Path   string
	Header http.Header
	Body   []byte
	// Refuse: a 2xx is a failure (the request cannot be valid).
	Refuse bool
	// RefuseEvents: a 202 must list every event of the batch as rejected.
	RefuseEvents bool
	// Events ride in the body with odd but parseable values (times): the edge may refuse them, and
	// what it acknowledges joins the ledger, so it must then be stored like any other event.
	Events  []*sentEvent
	JSONRPC bool
}

// mresult is one case's answer and what was wrong with it ("" when nothing).
type mresult struct {
	Case     string
	Status   int
	Duration time.Duration
	Problem  string
	Acked    int // odd events the edge acknowledged
}

// malformed builds and sends every case, one at a time, and records the acknowledged odd events.
type malformed struct {
	to                target
	queryURL          string
	adminKey          string
	otherPrivate      string // a private key of another workspace's source
	otherPublic       string
	otherWorkspaceKey string
	led               *ledger
	runID             string
	client            *http.Client
	bound             time.Duration
}

func (m *malformed) serverBody(over map[string]any) []byte {
	b := map[string]any{"teamSlug": m.to.teamSlug, "publicKey": m.to.publicKey, "eventId": "m" + m.runID + "-" + randomID(),
		"name": "install", "customerRef": "shop-m.faults.example", "occurredAt": time.Now().UTC().Format(time.RFC3339Nano)}
	for k, v := range over {
		if v == nil {
			delete(b, k)
		} else {
			b[k] = v
		}
	}
	raw, _ := json.Marshal(b)
	return raw
}

func (m *malformed) browserEvent(over map[string]any) map[string]any {
	e := map[string]any{"eventId": "m" + m.runID + "-" + randomID(), "name": "page_view", "acquisitionId": "m" + m.runID + "-acq",
		"occurredAt": time.Now().UTC().Format(time.RFC3339Nano), "url": "https://faults.example/m"}
	for k, v := range over {
		if v == nil {
			delete(e, k)
		} else {
			e[k] = v
		}
	}
	return e
}

func (m *malformed) collectBody(events ...any) []byte {
	raw, _ := json.Marshal(map[string]any{"key": m.to.publicKey, "batch": events})
	return raw
}

func (m *malformed) cases() []mcase {
	srv := func(name string, body []byte, h ...string) mcase {
		hdr := http.Header{"Authorization": {"Bearer " + m.to.private}, "Content-Type": {"application/json"}}
		for i := 0; i+1 < len(h); i += 2 {
			if h[i+1] == "" {
				hdr.Del(h[i])
			} else {
				hdr.Set(h[i], h[i+1])
			}
		}
		return mcase{Name: "server events: " + name, Edge: "ingest", Method: http.MethodPost, Path: routeServer, Header: hdr, Body: body, Refuse: true}
	}
	web := func(name string, body []byte, h ...string) mcase {
		hdr := http.Header{"Origin": {m.to.origin}, "Content-Type": {"text/plain;charset=UTF-8"}}
		for i := 0; i+1 < len(h); i += 2 {
			if h[i+1] == "" {
				hdr.Del(h[i])
			} else {
				hdr.Set(h[i], h[i+1])
			}
		}
		return mcase{Name: "collect: " + name, Edge: "ingest", Method: http.MethodPost, Path: routeCollect, Header: hdr, Body: body, Refuse: true}
	}
	webEvent := func(name string, ev any) mcase {
		c := web(name, m.collectBody(ev))
		c.Refuse, c.RefuseEvents = false, true
		return c
	}
	big := func(n int) []byte { return m.serverBody(map[string]any{"customerRef": strings.Repeat("a", n)}) }
	bigBatch := func(n int) []byte {
		return m.collectBody(m.browserEvent(map[string]any{"title": strings.Repeat("t", n)}))
	}
	cs := []mcase{
		srv("not JSON", []byte(`{"teamSlug":`)),
		srv("a JSON array", []byte(`[]`)),
		srv("JSON null", []byte(`null`)),
		srv("empty body", nil),
		srv("two JSON values", append(m.serverBody(nil), []byte(`{}`)...)),
		srv("invalid UTF-8", []byte("{\"teamSlug\":\"\xff\xfe\"}")),
		srv("17 KB body", big(17<<10)),
		srv("8 MB body", big(8<<20)),
		srv("eventId a number", m.serverBody(map[string]any{"eventId": 123})),
		srv("eventId of 200 characters", m.serverBody(map[string]any{"eventId": strings.Repeat("e", 200)})),
		srv("eventId with a control character", m.serverBody(map[string]any{"eventId": "a\u0001b"})),
		srv("name a boolean", m.serverBody(map[string]any{"name": true})),
		srv("teamSlug an object", m.serverBody(map[string]any{"teamSlug": map[string]any{}})),
		srv("amountCents a string", m.serverBody(map[string]any{"name": "paid", "amountCents": "1999", "currency": "USD"})),
		srv("amountCents a fraction", m.serverBody(map[string]any{"name": "paid", "amountCents": 19.99, "currency": "USD"})),
		srv("amountCents negative", m.serverBody(map[string]any{"name": "paid", "amountCents": -5, "currency": "USD"})),
		srv("amountCents beyond int64", m.serverBody(map[string]any{"name": "paid", "amountCents": json.Number("99999999999999999999"), "currency": "USD"})),
		srv("paid without amount", m.serverBody(map[string]any{"name": "paid"})),
		srv("currency not a code", m.serverBody(map[string]any{"name": "paid", "amountCents": 100, "currency": "US Dollar"})),
		srv("customerRef not a domain", m.serverBody(map[string]any{"customerRef": "not a domain"})),
		srv("unknown name", m.serverBody(map[string]any{"name": "purchase"})),
		srv("name in upper case", m.serverBody(map[string]any{"name": "INSTALL"})),
		srv("occurredAt a number", m.serverBody(map[string]any{"occurredAt": 1764000000})),
		srv("occurredAt without a zone", m.serverBody(map[string]any{"occurredAt": "2026-11-21T09:30:00"})),
		srv("occurredAt a day that does not exist", m.serverBody(map[string]any{"occurredAt": "2026-02-30T10:00:00Z"})),
		srv("occurredAt in words", m.serverBody(map[string]any{"occurredAt": "yesterday"})),
		srv("occurredAt empty", m.serverBody(map[string]any{"occurredAt": ""})),
		srv("occurredAt in 9999", m.serverBody(map[string]any{"occurredAt": "9999-12-31T23:59:59Z"})),
		srv("occurredAt a day ahead", m.serverBody(map[string]any{"occurredAt": time.Now().UTC().Add(24 * time.Hour).Format(time.RFC3339)})),
		srv("no key", m.serverBody(nil), "Authorization", ""),
		srv("unknown bearer key", m.serverBody(nil), "Authorization", "Bearer tracker_sk_nope"),
		srv("Basic authorization", m.serverBody(nil), "Authorization", "Basic Zm9vOmJhcg=="),
		srv("wrong publicKey", m.serverBody(map[string]any{"publicKey": "tracker_pk_nope"})),
		srv("wrong teamSlug", m.serverBody(map[string]any{"teamSlug": "not-the-team"})),
		srv("another workspace's private key", m.serverBody(nil), "Authorization", "Bearer "+m.otherPrivate),
		srv("another workspace's API key", m.serverBody(nil), "Authorization", "Bearer "+m.otherWorkspaceKey),
		srv("another workspace's public key", m.serverBody(map[string]any{"publicKey": m.otherPublic})),
		{Name: "server events: GET", Edge: "ingest", Method: http.MethodGet, Path: routeServer, Refuse: true},
		{Name: "ingest: unknown route", Edge: "ingest", Method: http.MethodPost, Path: "/api/tracking/nope", Body: []byte(`{}`), Refuse: true},

		web("not JSON", []byte(`{"key":`)),
		web("a JSON array", []byte(`[]`)),
		web("empty body", nil),
		web("batch an object", []byte(fmt.Sprintf(`{"key":%q,"batch":{}}`, m.to.publicKey))),
		web("batch empty", m.collectBody()),
		web("51 events", m.collectBody(repeat(51, func() any { return m.browserEvent(nil) })...)),
		web("70 KB body", bigBatch(70<<10)),
		web("8 MB body", bigBatch(8<<20)),
		web("no key", []byte(`{"batch":[{}]}`)),
		web("key a number", []byte(`{"key":5,"batch":[{}]}`)),
		web("unknown key", []byte(`{"key":"tracker_pk_nope","batch":[{}]}`)),
		web("origin not allowed", m.collectBody(m.browserEvent(nil)), "Origin", "https://evil.example"),
		web("no origin", m.collectBody(m.browserEvent(nil)), "Origin", ""),
		webEvent("event a string", "x"),
		webEvent("eventId a number", m.browserEvent(map[string]any{"eventId": 5})),
		webEvent("name with spaces", m.browserEvent(map[string]any{"name": "bad name!"})),
		webEvent("name empty", m.browserEvent(map[string]any{"name": ""})),
		webEvent("no acquisitionId", m.browserEvent(map[string]any{"acquisitionId": nil})),
		webEvent("occurredAt in words", m.browserEvent(map[string]any{"occurredAt": "yesterday"})),
		webEvent("occurredAt a number", m.browserEvent(map[string]any{"occurredAt": 1764000000})),
		webEvent("properties an array", m.browserEvent(map[string]any{"properties": []int{1}})),
		webEvent("platform identity from elsewhere", m.browserEvent(map[string]any{"platform": map[string]any{"platformIdentitySource": "cookie"}})),

		m.query("no key", http.MethodGet, "/api/v1/tracking/events", "", nil),
		m.query("unknown key", http.MethodGet, "/api/v1/tracking/events", "revtrack_sk_nope", nil),
		m.query("another workspace's private tracking key", http.MethodGet, "/api/v1/summary", m.otherPrivate, nil),
		m.query("from not a date", http.MethodGet, "/api/v1/tracking/events?from=notadate", m.adminKey, nil),
		m.query("limit not a number", http.MethodGet, "/api/v1/tracking/events?limit=abc", m.adminKey, nil),
		m.query("windowDays out of range", http.MethodGet, "/api/v1/tracking/funnel?windowDays=9999", m.adminKey, nil),
		m.query("unknown metric", http.MethodGet, "/api/v1/metrics/nope", m.adminKey, nil),
		m.query("unknown customer", http.MethodGet, "/api/v1/customers/nope", m.adminKey, nil),
		m.query("unknown route", http.MethodGet, "/api/v1/nope", m.adminKey, nil),
		m.query("wrong method", http.MethodDelete, "/api/v1/summary", m.adminKey, nil),
		m.query("admin: not JSON", http.MethodPost, "/api/admin/sources", m.adminKey, []byte(`{"name":`)),
		m.query("admin: wrong types", http.MethodPost, "/api/admin/keys", m.adminKey, []byte(`{"name":5,"scope":["admin"]}`)),
		m.query("admin: 2 MB body", http.MethodPost, "/api/admin/sources", m.adminKey, []byte(`{"name":"`+strings.Repeat("n", 2<<20)+`"}`)),
		m.query("admin: empty object", http.MethodPost, "/api/admin/customer-exclusions", m.adminKey, []byte(`{}`)),
	}
	cs = append(cs, mcase{Name: "mcp: not JSON", Edge: "query", Method: http.MethodPost, Path: "/api/mcp", JSONRPC: true,
		Header: http.Header{"Authorization": {"Bearer " + m.adminKey}, "Content-Type": {"application/json"},
			"Accept": {"application/json, text/event-stream"}}, Body: []byte(`{"jsonrpc":`)})
	return append(cs, m.oddTimes()...)
}

func (m *malformed) query(name, method, path, key string, body []byte) mcase {
	h := http.Header{"Content-Type": {"application/json"}}
	if key != "" {
		h.Set("Authorization", "Bearer "+key)
	}
	return mcase{Name: "query: " + name, Edge: "query", Method: method, Path: path, Header: h, Body: body, Refuse: true}
}

// oddTimes are events whose time parses but which the pipeline cannot store (before 1970, year 1)
// or will not keep (older than the 180-day retention): refused, or acknowledged and then stored
// as sent and kept, like every acknowledged event.
func (m *malformed) oddTimes() []mcase {
	old := time.Now().UTC().AddDate(0, 0, -240).Truncate(time.Second)
	times := []struct{ label, at string }{
		{"1900-01-01", "1900-01-01T00:00:00Z"}, {"0001-01-01", "0001-01-01T00:00:00Z"},
		{"one second before 1970", "1969-12-31T23:59:59Z"}, {"240 days ago", old.Format(time.RFC3339)},
	}
	var out []mcase
	for _, t := range times {
		at, _ := time.Parse(time.RFC3339, t.at)
		se := &sentEvent{ID: "m" + m.runID + "-" + randomID(), Kind: kindServer, Origin: originMalformed, Name: "install",
			Shop: "shop-m.faults.example", Acq: "m" + m.runID + "-acq", At: at}
		out = append(out, mcase{Name: "server events: occurredAt " + t.label, Edge: "ingest", Method: http.MethodPost, Path: routeServer,
			Header: http.Header{"Authorization": {"Bearer " + m.to.private}, "Content-Type": {"application/json"}},
			Body:   m.serverBody(map[string]any{"eventId": se.ID, "occurredAt": t.at, "acquisitionId": se.Acq}), Events: []*sentEvent{se}})
		acq := "m" + m.runID + "-" + randomID()
		be := &sentEvent{ID: "m" + m.runID + "-" + randomID(), Kind: kindBrowser, Origin: originMalformed, Name: "page_view", Acq: acq, At: at}
		out = append(out, mcase{Name: "collect: occurredAt " + t.label, Edge: "ingest", Method: http.MethodPost, Path: routeCollect,
			Header: http.Header{"Origin": {m.to.origin}, "Content-Type": {"text/plain;charset=UTF-8"}},
			Body:   m.collectBody(m.browserEvent(map[string]any{"eventId": be.ID, "occurredAt": t.at, "acquisitionId": acq})), Events: []*sentEvent{be}})
	}
	return out
}

// run sends every case in turn.
func (m *malformed) run(ctx context.Context) []mresult {
	var out []mresult
	for _, c := range m.cases() {
		for _, e := range c.Events {
			m.led.add(e)
		}
		out = append(out, m.send(ctx, c))
	}
	return out
}

func (m *malformed) send(ctx context.Context, c mcase) mresult {
	base := m.to.ingestURL
	if c.Edge == "query" {
		base = m.queryURL
	}
	res := mresult{Case: c.Name}
	req, err := http.NewRequestWithContext(ctx, c.Method, base+c.Path, bytes.NewReader(c.Body))
	if err != nil {
		res.Problem = err.Error()
		return res
	}
	if c.Body == nil {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	req.Header = c.Header.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	start := time.Now()
	resp, err := m.client.Do(req)
	res.Duration = time.Since(start)
	if err != nil {
		res.Problem = "no answer: " + err.Error()
		return res
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	res.Status = resp.StatusCode
	if c.Edge == "ingest" {
		m.led.record(request{Route: c.Path, Phase: "malformed", Start: start, Duration: res.Duration, Status: res.Status,
			BadShape: res.Status >= 400 && !isErrorShape(body)})
	}
	res.Problem, res.Acked = m.judge(c, res.Status, body, time.Now())
	if c.Edge == "ingest" && res.Duration > m.bound {
		res.Problem = strings.TrimPrefix(res.Problem+"; answered after "+round(res.Duration).String(), "; ")
	}
	return res
}

// judge says what is wrong with an answer ("" when nothing), and acknowledges the odd events the
// edge accepted (returning how many).
func (m *malformed) judge(c mcase, status int, body []byte, at time.Time) (string, int) {
	switch {
	case status >= 500:
		return fmt.Sprintf("%d: %.200s", status, body), 0
	case c.JSONRPC:
		return "", 0
	case status >= 400:
		if !isErrorShape(body) {
			return fmt.Sprintf("%d refusal is not a JSON {error, message}: %.200s", status, body), 0
		}
		return "", 0
	case status/100 != 2:
		return fmt.Sprintf("unexpected %d", status), 0
	case c.Refuse:
		return fmt.Sprintf("%d: accepted: %.200s", status, body), 0
	}
	rejected := map[int]bool{}
	if c.Path == routeCollect {
		var r struct {
			Rejected []json.RawMessage `json:"rejected"`
		}
		if json.Unmarshal(body, &r) != nil {
			return fmt.Sprintf("%d body is not the collect answer: %.200s", status, body), 0
		}
		for _, raw := range r.Rejected {
			var item struct {
				Index *int `json:"index"`
			}
			if json.Unmarshal(raw, &item) != nil || item.Index == nil || !isErrorShape(raw) {
				return fmt.Sprintf("a rejected event is not {index, error, message}: %s", raw), 0
			}
			rejected[*item.Index] = true
		}
		if c.RefuseEvents && !rejected[0] {
			return fmt.Sprintf("%d: the invalid event was accepted: %.200s", status, body), 0
		}
	}
	acked := 0
	for i, e := range c.Events {
		if !rejected[i] {
			m.led.ack(at, e.ID)
			acked++
		}
	}
	return "", acked
}

func repeat(n int, f func() any) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = f()
	}
	return out
}
