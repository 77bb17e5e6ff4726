package processors

import (
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/internal/kafkax"
	"github.com/revtrack/revtrack/internal/testenv"
	"github.com/revtrack/revtrack/schemas"
)

// recordChecks builds the service with clients that never connect (a closed port) and returns its
// consumers' checks; nothing is consumed.
func recordChecks(t *testing.T) []RecordCheck {
	t.Helper()
	kc := kafkax.DefaultConfig()
	kc.Brokers = []string{"127.0.0.1:1"}
	svc, err := New(DefaultConfig(), Deps{Kafka: kc, Registry: prometheus.NewRegistry(), Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	svc.Close()
	return svc.RecordChecks()
}

// TestEveryConsumerRefusesTheTimesOfIssue12: land-server-events used to store what it decoded
// (1900 as 2036) while the other consumers dead-lettered it. Every consumer of an event topic now
// applies the one rule of schemas/event_time.go, judged from the message's receipt time.
func TestEveryConsumerRefusesTheTimesOfIssue12(t *testing.T) {
	received := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	refused := []time.Time{time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC), {},
		received.Add(-schemas.MaxEventAge - time.Millisecond), time.Date(2106, 2, 7, 6, 28, 16, 0, time.UTC)}
	accepted := []time.Time{received.Add(-schemas.MaxEventAge), received, received.Add(30 * 24 * time.Hour)}
	seen := map[string]bool{}
	for _, c := range recordChecks(t) {
		var msg func(at time.Time) any
		switch c.Topic {
		case schemas.TopicServerEvents:
			msg = func(at time.Time) any {
				return schemas.ServerEvent{EventID: "e", SourceID: "s", WorkspaceID: "w", AppID: "a", Name: "install", OccurredAt: at, ReceivedAt: received}
			}
		case schemas.TopicBrowserEvents:
			msg = func(at time.Time) any {
				return schemas.BrowserEvent{EventID: "e", SourceID: "s", WorkspaceID: "w", AppID: "a", AcquisitionID: "acq", Name: "page_view",
					OccurredAt: at, ReceivedAt: received}
			}
		default:
			continue
		}
		seen[c.Consumer] = true
		for _, at := range refused {
			err := c.Check(&kgo.Record{Topic: c.Topic, Value: mustJSON(t, msg(at))})
			if !errors.Is(err, schemas.ErrInvalidMessage) || reasonFor(err) != ReasonInvalidMessage {
				t.Errorf("%s accepted occurredAt %s: %v", c.Consumer, at, err)
			}
		}
		for _, at := range accepted {
			if err := c.Check(&kgo.Record{Topic: c.Topic, Value: mustJSON(t, msg(at))}); err != nil {
				t.Errorf("%s refused occurredAt %s: %v", c.Consumer, at, err)
			}
		}
	}
	for _, name := range []string{"land-server-events", "identity-join", "upload-match", "sessionize"} {
		if !seen[name] {
			t.Errorf("no check of %s", name)
		}
	}
}

// TestOldestAcceptedEventOutlivesTheNextRetentionPass: the oldest time the edge accepts, in the
// worst case — at the last second of a month, landed a week (the topics' retention) after receipt,
// and the daily retention pass a day after that — is still there after that pass, in every
// retained table. One second later the pass would drop it: the slack is exactly what it must be.
func TestOldestAcceptedEventOutlivesTheNextRetentionPass(t *testing.T) {
	if retentionInterval > 24*time.Hour {
		t.Fatal("schemas.MaxEventAge assumes a retention pass at least daily")
	}
	e := setup(t)
	ctx := testenv.Ctx(t)
	at := time.Date(2026, 6, 30, 23, 59, 59, 0, time.UTC)
	received := at.Add(schemas.MaxEventAge)
	if from, _ := schemas.EventTimeRange(received, time.Hour); !from.Equal(at) {
		t.Fatalf("oldest accepted %s", from)
	}
	bev := schemas.BrowserEvent{EventID: "e", SourceID: "src", WorkspaceID: "ws", AppID: "app", AcquisitionID: "acq",
		Name: "page_view", OccurredAt: at, ReceivedAt: received, FirstTouch: schemas.FirstTouch{Gclid: "g"}}
	sev := schemas.ServerEvent{EventID: "e", SourceID: "src", WorkspaceID: "ws", AppID: "app", AcquisitionID: "acq",
		Name: "install", OccurredAt: at, ReceivedAt: received}
	st := schemas.SessionState{SourceID: "src", WorkspaceID: "ws", AcquisitionID: "acq", SessionID: "s",
		StartedAt: at, LastEventAt: at, EventCount: 1, SessionOrdinal: 1}
	insertRows(t, e, insertBrowserEvents, browserEventRow(bev)) // acquisitions and acquisition_clicks follow through views
	insertRows(t, e, insertServerEvents, serverEventRow(sev))
	insertRows(t, e, insertFunnelEvents, funnelRowValues(funnelRowOf(sev, nil)))
	insertRows(t, e, insertSessions, sessionRowValues(sessionRow{SessionState: st, Version: 1}))
	insertRows(t, e, insertSessionState, stateRowValues(stateRow{browserKey{"src", "acq"}, &browserState{SessionState: st, Version: 1}}))

	pass := received.Add(7*24*time.Hour + retentionInterval)
	if rep, err := RunRetention(ctx, e.ch, pass); err != nil || len(rep.Dropped) != 0 {
		t.Fatalf("the pass a day after a week-late landing dropped %v (%v)", rep.Dropped, err)
	}
	for _, tbl := range retainedTables {
		if n := count(t, e, "SELECT count() FROM "+tbl); n != 1 {
			t.Errorf("%s keeps %d rows", tbl, n)
		}
	}
	rep, err := RunRetention(ctx, e.ch, pass.Add(time.Second))
	if err != nil || len(rep.Dropped) == 0 {
		t.Fatalf("a pass one second later dropped %v (%v): the slack is larger than it must be", rep.Dropped, err)
	}
}
