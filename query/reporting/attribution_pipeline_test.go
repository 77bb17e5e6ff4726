package reporting

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/internal/testenv/pipeline"
	"github.com/revtrack/revtrack/processors"
	"github.com/revtrack/revtrack/query/reporting/reportingtest"
	"github.com/revtrack/revtrack/schemas"
)

// TestAttributionThroughTheIdentityJoin writes the tracking side through the real consumers
// (sessionize, land-server-events, identity-join) from browser and server events on the broker,
// and the platform side as synced rows, then reads attribution by campaign (docs/METRICS.md 10).
// Dates are recent: the process component's retention drops months older than 180 days.
//
//	shop-one   app-1: browser acq-1 (src-a, spring) installs it, naming the shop in upper case; a
//	           browser acq-2 (src-b, summer) seen earlier is linked an hour later: the first link,
//	           acq-1, wins. 49.00 USD.
//	shop-one   app-2: the same domain, through acq-4 of app-2's src-c (fall). 29.00 USD.
//	shop-two   app-1: its install named only the shop; browser acq-3 (brand), seen before the
//	           install, is linked by an identified event later: the install is re-resolved to it.
//	           19.00 USD.
//	shop-five  app-1: installed with acq-5, whose browser event reaches the broker only after the
//	           install was attributed: no_browser_history, then spring. 9.00 USD.
func TestAttributionThroughTheIdentityJoin(t *testing.T) {
	db := pipeline.Migrated(t)
	kc, producer := pipeline.Topics(t)
	cfg := processors.DefaultConfig()
	cfg.Backoff, cfg.MaxBackoff = 50*time.Millisecond, 200*time.Millisecond
	svc, err := processors.New(cfg, processors.Deps{Kafka: kc, ClickHouse: db.Conn, Producer: producer, Registry: prometheus.NewRegistry(),
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Run(runCtx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("processors: %v", err)
		}
	})
	produce := func(topic, key string, v any) {
		b, _ := json.Marshal(v)
		if err := producer.ProduceSync(testenv.Ctx(t), &kgo.Record{Topic: kc.Topic(topic), Key: []byte(key), Value: b}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	today := DateOf(time.Now())
	day := today.AddDays(-10).Start() // every event of the scenario is on this day, or the days after
	at := func(d time.Duration) time.Time { return day.Add(d) }
	view := func(app, source, acq string, d time.Duration, campaign string) {
		produce(schemas.TopicBrowserEvents, source+":"+acq, schemas.BrowserEvent{EventID: "pv-" + acq, SourceID: source, WorkspaceID: "ws",
			AppID: app, AcquisitionID: acq, Name: "page_view", OccurredAt: at(d), ReceivedAt: at(d + time.Second),
			URL: "https://app.example/", Path: "/", FirstTouch: schemas.FirstTouch{UTMCampaign: campaign}})
	}
	server := func(app, source, id, name, acq, shop string, d time.Duration) {
		produce(schemas.TopicServerEvents, source+":"+acq, schemas.ServerEvent{EventID: id, SourceID: source, WorkspaceID: "ws", AppID: app,
			AcquisitionID: acq, Name: name, CustomerRef: shop, OccurredAt: at(d), ReceivedAt: at(d + time.Second)})
	}
	view("app-1", "src-a", "acq-1", 8*time.Hour, "spring")
	view("app-1", "src-b", "acq-2", 7*time.Hour, "summer")
	view("app-1", "src-a", "acq-3", 32*time.Hour, "brand")
	view("app-2", "src-c", "acq-4", 8*time.Hour, "fall")
	server("app-1", "src-a", "one-install", "install", "acq-1", "Shop-One.myshopify.com", 9*time.Hour)
	server("app-1", "src-b", "one-identified", "identified", "acq-2", "shop-one.myshopify.com", 10*time.Hour)
	server("app-2", "src-c", "one-install-2", "install", "acq-4", "shop-one.myshopify.com", 9*time.Hour)
	server("app-1", "src-a", "two-install", "install", "", "shop-two.myshopify.com", 33*time.Hour)
	server("app-1", "src-a", "two-identified", "identified", "acq-3", "shop-two.myshopify.com", 5*24*time.Hour)
	server("app-1", "src-a", "five-install", "install", "acq-5", "shop-five.myshopify.com", 56*time.Hour)

	fx := reportingtest.New(db.Conn, "ws")
	stamp := func(d time.Duration) string { return at(d).Format(time.RFC3339) }
	for _, c := range []struct {
		app, shop, domain string
		installed         time.Duration
		amount            int64
	}{
		{"app-1", "one", "shop-one.myshopify.com", 9 * time.Hour, 4900},
		{"app-2", "one", "shop-one.myshopify.com", 9 * time.Hour, 2900},
		{"app-1", "two", "shop-two.myshopify.com", 33 * time.Hour, 1900},
		{"app-1", "five", "shop-five.myshopify.com", 56 * time.Hour, 900},
	} {
		shop := reportingtest.Shop(c.shop)
		fx.AddCustomer(reportingtest.Customer{App: c.app, Shop: shop, Domain: c.domain, Name: c.shop, Installed: stamp(c.installed)})
		charge := "sub-" + c.app + "-" + c.shop
		fx.AddCharge(reportingtest.Charge{App: c.app, ID: charge, Shop: shop, Name: "Plan", Amount: c.amount, Currency: "USD",
			Interval: "every_30_days", Status: "active", Accepted: stamp(c.installed), Activated: stamp(c.installed)})
		fx.AddTx(reportingtest.Tx{App: c.app, ID: "tx-" + charge, Type: "subscription", Shop: shop, Charge: charge, At: stamp(c.installed + time.Hour),
			Currency: "USD", Gross: c.amount, Net: c.amount, Interval: "every_30_days"})
	}
	fx.Flush(t)

	count := func(q string) uint64 {
		var n uint64
		if err := db.Conn.QueryRow(testenv.Ctx(t), q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	testenv.Eventually(t, "six funnel events, the two-install re-resolved, four browsers", func() bool {
		return count("SELECT count() FROM funnel_events FINAL") == 6 &&
			count("SELECT count() FROM funnel_events FINAL WHERE event_id = 'two-install' AND acquisition_id = 'acq-3'") == 1 &&
			count("SELECT count() FROM (SELECT source_id, acquisition_id FROM acquisitions GROUP BY source_id, acquisition_id)") == 4
	})
	store := New(db.Conn, WithResultCache(0))
	req := AttributionRequest{Scope: scopeOf("app-1", "app-2"), Range: Range{From: today.AddDays(-29), To: today}, GroupBy: GroupUTMCampaign}
	type cell struct{ acquisitions, installs, customers, mrr int64 }
	read := func() map[string]cell {
		out, err := store.Attribution(testenv.Ctx(t), req)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]cell{}
		for _, r := range out.Rows {
			name := r.Kind
			if r.Key != nil {
				name = *r.Key
			}
			if r.Acquisitions+r.Installs+r.Customers > 0 {
				got[name] = cell{r.Acquisitions, r.Installs, r.Customers, r.ByCurrency["USD"].MRRCents}
			}
		}
		return got
	}
	jsonEq(t, "before acq-5's browser event", read(), map[string]cell{"spring": {1, 1, 1, 4900}, "summer": {1, 0, 0, 0}, "brand": {1, 1, 1, 1900},
		"fall": {1, 1, 1, 2900}, RowNoBrowserHistory: {0, 1, 1, 900}})

	view("app-1", "src-a", "acq-5", 55*time.Hour, "spring")
	testenv.Eventually(t, "five browsers", func() bool {
		return count("SELECT count() FROM (SELECT source_id, acquisition_id FROM acquisitions GROUP BY source_id, acquisition_id)") == 5
	})
	jsonEq(t, "after", read(), map[string]cell{"spring": {2, 2, 2, 4900 + 900}, "summer": {1, 0, 0, 0}, "brand": {1, 1, 1, 1900},
		"fall": {1, 1, 1, 2900}})
}
