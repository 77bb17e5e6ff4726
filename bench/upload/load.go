package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/bench/internal/benchkit"
	"github.com/revtrack/revtrack/schemas"
)

// Names of one pass's data. A pass tag ("p1", "p2", …) is followed by "-" so that no pass's LIKE
// pattern matches another's ("acq-p1-%" does not match "acq-p10-…").
func passAcq(tag string, i int) string   { return fmt.Sprintf("acq-%s-%06d", tag, i) }
func passEvent(tag string, i int) string { return fmt.Sprintf("evt-%s-%06d", tag, i) }
func passGclid(tag string, i int) string { return fmt.Sprintf("Cj0KCQ-bench-%s-%06d", tag, i) }
func acqPattern(tag string) string       { return "acq-" + tag + "-%" }

// Every server event of the benchmark, through the edge or straight to Kafka, is one shop's payment.
const (
	benchShop        = "bench-shop.myshopify.com"
	benchAmountCents = 4900
	benchCurrency    = "USD"
)

// produceChunk records per ProduceSync: large enough to batch, small enough to bound memory.
const produceChunk = 2000

func (e *uploadEnv) produce(ctx context.Context, recs []*kgo.Record) error {
	for chunk := range slices.Chunk(recs, produceChunk) {
		if err := e.producer.ProduceSync(ctx, chunk...).FirstErr(); err != nil {
			return err
		}
	}
	return nil
}

// seedClicks lands n acquisitions whose first touch captured a gclid, through the real pipeline:
// one page view per acquisition on the browser-events topic (what the edge writes for tracker.js),
// which the sessionizer lands in browser_events and the acquisitions view summarises. It returns
// once `acquisitions` holds all n, so the matcher never waits for a late click during a pass.
func (e *uploadEnv) seedClicks(ctx context.Context, tag string, n int) (time.Duration, error) {
	start := time.Now()
	at := start.UTC()
	topic := e.kc.Topic(schemas.TopicBrowserEvents)
	recs := make([]*kgo.Record, n)
	for i := range n {
		acq := passAcq(tag, i)
		ev := schemas.BrowserEvent{EventID: "pv-" + acq, SourceID: e.st.Source.ID, WorkspaceID: e.ws, AppID: benchkit.AppID,
			AcquisitionID: acq, SessionID: "ses-" + acq, Name: "page_view", OccurredAt: at, ReceivedAt: at,
			URL: benchkit.Origin + "/pricing?gclid=" + passGclid(tag, i), Path: "/pricing",
			FirstTouch: schemas.FirstTouch{UTMSource: "google", UTMMedium: "cpc", Gclid: passGclid(tag, i), LandingURL: benchkit.Origin + "/pricing"}}
		b, err := json.Marshal(ev)
		if err != nil {
			return 0, err
		}
		recs[i] = &kgo.Record{Topic: topic, Key: []byte(ev.SourceID + ":" + ev.AcquisitionID), Value: b}
	}
	if err := e.produce(ctx, recs); err != nil {
		return 0, fmt.Errorf("produce browser events: %w", err)
	}
	timeout := 2*time.Minute + time.Duration(n)*time.Millisecond
	for {
		var landed uint64
		if err := e.st.Conn.QueryRow(ctx, countAcquisitionsSQL, e.ws, e.st.Source.ID, acqPattern(tag)).Scan(&landed); err != nil {
			return 0, fmt.Errorf("count acquisitions: %w", err)
		}
		if landed >= uint64(n) {
			return time.Since(start), nil
		}
		if time.Since(start) > timeout {
			return 0, fmt.Errorf("acquisitions holds %d of %d seeded clicks after %s", landed, n, timeout)
		}
		if err := sleep(ctx, 250*time.Millisecond); err != nil {
			return 0, err
		}
	}
}

// serverEvent is a verified lifecycle event of the bench source on acquisition i of the pass, as the
// edge writes it to the server-events topic after authentication and validation.
func (e *uploadEnv) serverEvent(tag string, i int, milestone string, at time.Time) schemas.ServerEvent {
	amount := int64(benchAmountCents)
	return schemas.ServerEvent{EventID: passEvent(tag, i), SourceID: e.st.Source.ID, WorkspaceID: e.ws, AppID: benchkit.AppID,
		AcquisitionID: passAcq(tag, i), Name: milestone, CustomerRef: benchShop, AmountCents: &amount,
		Currency: benchCurrency, OccurredAt: at, ReceivedAt: at}
}

// produceServerEvents writes n server events of the pass straight to the server-events topic, keyed
// as the edge keys them.
func (e *uploadEnv) produceServerEvents(ctx context.Context, tag string, n int, milestone string) error {
	at := time.Now().UTC()
	topic := e.kc.Topic(schemas.TopicServerEvents)
	recs := make([]*kgo.Record, n)
	for i := range n {
		ev := e.serverEvent(tag, i, milestone, at)
		b, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		recs[i] = &kgo.Record{Topic: topic, Key: []byte(ev.SourceID + ":" + ev.AcquisitionID), Value: b}
	}
	return e.produce(ctx, recs)
}

// postServerEvent sends one server event of the pass through the edge (POST
// /api/tracking/server-events, bearer private key) and returns when the answer was read.
func (e *uploadEnv) postServerEvent(ctx context.Context, client *http.Client, tag string, i int, milestone string) (time.Time, string) {
	body, _ := json.Marshal(schemas.ServerEventRequest{TeamSlug: benchkit.TeamSlug, PublicKey: e.st.Source.PublicKey, EventID: passEvent(tag, i),
		AcquisitionID: passAcq(tag, i), Name: milestone, CustomerRef: benchShop, AmountCents: json.RawMessage(strconv.Itoa(benchAmountCents)),
		Currency: benchCurrency, OccurredAt: time.Now().UTC().Format(time.RFC3339Nano)})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.st.Revtrack.BaseURL+"/api/tracking/server-events", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+e.st.Private)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	at := time.Now()
	if err != nil {
		return at, "transport error"
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return at, "HTTP " + strconv.Itoa(resp.StatusCode)
	}
	return at, ""
}

// rowCounts are one pass's rows of a mapping: how many exist in the queue, and how many are in the
// wanted state.
func (e *uploadEnv) rowCounts(ctx context.Context, mappingID, tag, status string) (filed, in uint64, err error) {
	err = e.st.Conn.QueryRow(ctx, countRowsSQL, status, e.ws, mappingID, acqPattern(tag)).Scan(&filed, &in)
	return filed, in, err
}

// activeParts is upload_queue's number of active parts.
func (e *uploadEnv) activeParts(ctx context.Context) (uint64, error) {
	var n uint64
	err := e.st.Conn.QueryRow(ctx, activePartsSQL).Scan(&n)
	return n, err
}

// rowStates returns the latest state of each of rowIDs that exists.
func (e *uploadEnv) rowStates(ctx context.Context, rowIDs []string) (map[string]string, error) {
	out := map[string]string{}
	for chunk := range slices.Chunk(rowIDs, 1000) {
		set := make([]any, len(chunk))
		for i, id := range chunk {
			set[i] = id
		}
		rows, err := e.st.Conn.Query(ctx, rowStatesSQL, e.ws, clickhouse.GroupSet{Value: set})
		if err != nil {
			return nil, fmt.Errorf("row states: %w", err)
		}
		for rows.Next() {
			var id, st string
			if err := rows.Scan(&id, &st); err != nil {
				rows.Close()
				return nil, err
			}
			out[id] = st
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
