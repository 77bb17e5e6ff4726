package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/bench/internal/benchkit"
	"github.com/revtrack/revtrack/internal/kafkax"
	"github.com/revtrack/revtrack/schemas"
)

// What the tracking part must reach in ClickHouse: distinct browser events, distinct funnel events
// (one per server event, whatever its resolution) and distinct links. Arguments: workspace.
const (
	countBrowserEvents = `SELECT uniqExact(source_id, event_id) FROM browser_events WHERE workspace_id = ?`
	countFunnelEvents  = `SELECT uniqExact(source_id, event_id) FROM funnel_events WHERE workspace_id = ?`
	countLinks         = `SELECT uniqExact(source_id, acquisition_id, shop_domain) FROM acquisition_links WHERE workspace_id = ?`
)

// trackingResult is what loading the tracking part measured; the marker keeps it.
type trackingResult struct {
	Facts trackingFacts `json:"facts"`
	// Produce: until every message was acknowledged by Kafka; Landed: from the first message until
	// ClickHouse held every browser event, funnel event and link.
	Produce time.Duration `json:"produce"`
	Landed  time.Duration `json:"landed"`
	// AddedLater is set when a -reuse run added the tracking part to a data set loaded without it.
	AddedLater bool `json:"addedLater,omitempty"`
}

// trackingOrigin is the page the tracking part's browsers visit (tracking.go's landing URLs).
const trackingOrigin = "https://bench-app.example"

// trackingSourceName is the name of the benchmark's tracking source of an app.
func trackingSourceName(app string) string { return "bench tracking " + app }

// trackingSources returns the workspace's tracking source per app, creating the missing ones with
// `revtrack admin source create`, as an operator does.
func trackingSources(ctx context.Context, st *stack, ds *dataset) (map[string]string, error) {
	var have []struct {
		ID, AppID, Name string
	}
	if err := st.adminJSON(ctx, &have, "source", "list", benchSlug); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, s := range have {
		if s.Name == trackingSourceName(s.AppID) {
			out[s.AppID] = s.ID
		}
	}
	for _, a := range ds.apps {
		if out[a.ID] != "" {
			continue
		}
		var created struct {
			Source struct {
				ID string `json:"id"`
			} `json:"source"`
		}
		if err := st.adminJSON(ctx, &created, "source", "create", benchSlug, "--app", a.ID, "--name", trackingSourceName(a.ID),
			"--origins", trackingOrigin); err != nil {
			return nil, err
		}
		out[a.ID] = created.Source.ID
	}
	return out, nil
}

// loadTracking produces the tracking part to the browser- and server-event topics, as the ingest
// edge would after accepting it (the edge itself is not measured: its dedup and rate limits are
// bench-ingest's subject), and waits until the consumers of the running `revtrack all` landed it.
func loadTracking(ctx context.Context, st *stack, ds *dataset, ws string, timeout time.Duration) (trackingResult, error) {
	sources, err := trackingSources(ctx, st, ds)
	if err != nil {
		return trackingResult{}, fmt.Errorf("tracking sources: %w", err)
	}
	p := planTracking(ds, ws, sources)
	res := trackingResult{Facts: p.facts}
	progress("producing the tracking part: %s browsers (one page view each) and %s server events; %s of %s customers linked, %s credited",
		benchkit.Num(float64(p.facts.Browsers)), benchkit.Num(float64(p.facts.ServerEvents)), benchkit.Num(float64(p.facts.Tracked)),
		benchkit.Num(float64(ds.facts.Customers)), benchkit.Num(float64(p.facts.Credited)))
	kc := kafkax.DefaultConfig()
	kc.Brokers, kc.TopicSuffix = st.brokers, ""
	cl, err := kafkax.NewProducer(kc, "bench-tracking", nil)
	if err != nil {
		return res, err
	}
	defer cl.Close()
	start := time.Now()
	recs := make([]*kgo.Record, 0, 5000)
	flush := func() error {
		if len(recs) == 0 {
			return nil
		}
		err := cl.ProduceSync(ctx, recs...).FirstErr()
		recs = recs[:0]
		return err
	}
	add := func(topic, key string, v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		recs = append(recs, &kgo.Record{Topic: kc.Topic(topic), Key: []byte(key), Value: b})
		if len(recs) == cap(recs) {
			return flush()
		}
		return nil
	}
	// Keys as the edge writes them (ingest/collect.go, server_events.go): source and acquisition,
	// or source and event ID for a server event without an acquisition.
	for _, e := range p.browser {
		if err := add(schemas.TopicBrowserEvents, e.SourceID+":"+e.AcquisitionID, e); err != nil {
			return res, err
		}
	}
	if err := flush(); err != nil {
		return res, fmt.Errorf("produce browser events: %w", err)
	}
	for _, e := range p.server {
		key := e.SourceID + ":" + e.AcquisitionID
		if e.AcquisitionID == "" {
			key = e.SourceID + ":" + e.EventID
		}
		if err := add(schemas.TopicServerEvents, key, e); err != nil {
			return res, err
		}
	}
	if err := flush(); err != nil {
		return res, fmt.Errorf("produce server events: %w", err)
	}
	res.Produce = time.Since(start)
	progress("tracking part produced in %s; waiting for ClickHouse", res.Produce.Round(time.Millisecond))
	deadline := time.Now().Add(timeout)
	for {
		missing, err := st.trackingMissing(ctx, ws, p.facts)
		if err != nil {
			return res, err
		}
		if missing == "" {
			res.Landed = time.Since(start)
			return res, nil
		}
		if time.Now().After(deadline) {
			return res, fmt.Errorf("tracking part not landed after %s: %s", timeout, missing)
		}
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// trackingMissing says what ClickHouse lacks of the tracking part ("" when it holds all of it).
func (s *stack) trackingMissing(ctx context.Context, ws string, f trackingFacts) (string, error) {
	for _, q := range []struct {
		query, what string
		want        int
	}{{countBrowserEvents, "browser events", f.Browsers}, {countFunnelEvents, "funnel events", f.ServerEvents}, {countLinks, "acquisition links", f.Links}} {
		n, err := s.rows(ctx, q.query, ws)
		if err != nil {
			return "", err
		}
		if n < uint64(q.want) {
			return fmt.Sprintf("%d of %d %s", n, q.want, q.what), nil
		}
	}
	return "", nil
}

// trackingReuse says why a data set whose marker records another tracking part cannot be reused
// ("" when it can): its rows would mix with the new generator's, so it needs a reload. A data set
// loaded without any tracking part is reusable: ensureTracking adds it.
func trackingReuse(m marker, ds *dataset) string {
	if m.Tracking == nil || m.Tracking.Facts.sameAs(planTracking(ds, "", nil).facts) {
		return ""
	}
	return fmt.Sprintf("its tracking data was generated by another version of the generator (version %d, now %d): it needs a reload",
		m.Tracking.Facts.Version, trackingVersion)
}

// ensureTracking makes a reused data set hold the tracking part: a data set loaded before it, or
// whose tracking rows are not all in ClickHouse, gets it now through the same topics and consumers
// (an in-process `revtrack all` without schedule; the messages are the same, so what already landed
// is de-duplicated by the tables' keys); the marker then records it.
func ensureTracking(ctx context.Context, st *stack, ds *dataset, m *marker, o options) error {
	want := planTracking(ds, "", nil).facts
	if err := st.open(ctx); err != nil {
		return err
	}
	why := "the data set was loaded without tracking data"
	if m.Tracking != nil {
		missing, err := st.trackingMissing(ctx, m.WorkspaceID, want)
		if err != nil || missing == "" {
			return err
		}
		why = "ClickHouse holds " + missing
	}
	progress("adding the tracking part to the reused data set: %s", why)
	if err := st.start(ctx, "all", "--platform-sync-interval", "0"); err != nil {
		return err
	}
	res, err := loadTracking(ctx, st, ds, m.WorkspaceID, o.landTimeout)
	if serr := st.stop(); serr != nil {
		progress("stopping revtrack all: %v", serr)
	}
	if err != nil {
		return err
	}
	res.AddedLater = true
	m.Tracking = &res
	return writeMarker(o.stackDir, *m)
}

// printTracking is the report's line on the tracking part.
func (r *report) printTracking(w io.Writer) {
	t := r.marker.Tracking
	if t == nil {
		fmt.Fprintln(w, "Tracking part: none (attribution has no first touches to join).")
		return
	}
	f := t.Facts
	how := "after the platform load"
	if t.AddedLater {
		how = "added by a -reuse run to a data set loaded without it"
	}
	fmt.Fprintf(w, "Tracking part (%s): one tracking source per app, from %s to the data set's end; %s browsers (%d per customer that "+
		"never install, one page view each, 1 in 10 without a campaign, the rest over %d campaigns), %s of %s customers (%d %%) "+
		"linked to a browser, %s of them first seen before an install inside the window (credited), the rest installed earlier "+
		"and linked by `identified`; %s server events (install, identified, trial_started, trial_converted), %s links. "+
		"Produced to %s and %s in %s, in ClickHouse (browser_events, acquisitions, acquisition_links, funnel_events) %s after "+
		"the first message.\n", how, f.From, benchkit.Num(float64(f.Browsers)), unconvertedPerCustomer, trackingCampaigns,
		benchkit.Num(float64(f.Tracked)), benchkit.Num(float64(r.ds.facts.Customers)), trackedPercent, benchkit.Num(float64(f.Credited)),
		benchkit.Num(float64(f.ServerEvents)), benchkit.Num(float64(f.Links)), schemas.TopicBrowserEvents, schemas.TopicServerEvents,
		seconds(t.Produce), seconds(t.Landed))
}
