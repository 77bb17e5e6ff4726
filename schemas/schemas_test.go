package schemas

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/revtrack/revtrack/internal/testenv"
)

func TestTopicSchemasGolden(t *testing.T) {
	for _, tp := range Topics() {
		b, err := JSONSchema(tp)
		if err != nil {
			t.Fatal(err)
		}
		testenv.Golden(t, SchemaFile(tp), b)
	}
}

func TestTopicNamesCarryVersion(t *testing.T) {
	seen := map[string]bool{}
	for _, tp := range Topics() {
		if !strings.HasPrefix(tp.Name, "revtrack.") || !strings.Contains(tp.Name, ".v") {
			t.Errorf("topic %q: want revtrack.<name>.v<N>", tp.Name)
		}
		if seen[tp.Name] {
			t.Errorf("topic %q declared twice", tp.Name)
		}
		seen[tp.Name] = true
		if tp.Compact != (tp.Retention < 0) {
			t.Errorf("topic %q: compacted state keeps records forever; event logs have a bounded retention", tp.Name)
		}
	}
}

func sampleMessages() map[string]any {
	at := time.Date(2026, 11, 1, 12, 30, 0, 123e6, time.UTC)
	amount := int64(2900)
	return map[string]any{
		TopicBrowserEvents: BrowserEvent{EventID: "e1", SourceID: "s1", WorkspaceID: "w1", AppID: "a1", AcquisitionID: "acq1",
			Name: "page_view", OccurredAt: at, ReceivedAt: at, URL: "https://app.example/", FirstTouch: FirstTouch{Gclid: "abc"},
			Properties: json.RawMessage(`{"plan":"pro"}`)},
		TopicServerEvents: ServerEvent{EventID: "e2", SourceID: "s1", WorkspaceID: "w1", AppID: "a1", AcquisitionID: "acq1",
			Name: "paid", CustomerRef: "shop.example", AmountCents: &amount, Currency: "USD", OccurredAt: at, ReceivedAt: at},
		TopicSessionState: SessionState{SourceID: "s1", WorkspaceID: "w1", AcquisitionID: "acq1", SessionID: "sess1",
			StartedAt: at, LastEventAt: at, EventCount: 1, PageViewCount: 1, SessionOrdinal: 1},
		TopicAcquisitionLinks: AcquisitionLink{SourceID: "s1", WorkspaceID: "w1", AppID: "a1", AcquisitionID: "acq1",
			ShopDomain: "shop.example", FirstEventID: "e2", LinkedAt: at},
		TopicPlatformRecords: PlatformRecord{Kind: "transaction", WorkspaceID: "w1", AppID: "a1", SyncedAt: at,
			Transaction: &Transaction{TransactionID: "t1", Type: "subscription", CustomerID: "c1", CreatedAt: at, Currency: "EUR",
				GrossCents: 1000, PlatformFeeCents: 0, NetCents: 971}},
		TopicUploadJobs: UploadJob{RowID: "r1", WorkspaceID: "w1", MappingID: "m1", SourceID: "s1",
			EventIDHash: strings.Repeat("ab", 32), TransactionID: "tx1", Milestone: "paid", ClickIDType: "gclid", ClickID: "abc",
			EventTime: at, ValueCents: &amount, Currency: "USD"},
		TopicDeadLetters: DeadLetter{Consumer: "lander", Topic: TopicServerEvents, Partition: 2, Offset: 9,
			Value: []byte("{"), Reason: "decode_error", Error: "unexpected end of JSON input", At: at},
	}
}

func compile(t *testing.T, tp Topic) *jsonschema.Schema {
	t.Helper()
	raw, err := JSONSchema(tp)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(tp.Name, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(tp.Name)
	if err != nil {
		t.Fatalf("%s: %v", tp.Name, err)
	}
	return s
}

func TestMessagesValidateAgainstSchemas(t *testing.T) {
	samples := sampleMessages()
	for _, tp := range Topics() {
		msg, ok := samples[tp.Name]
		if !ok {
			t.Fatalf("no sample message for %s", tp.Name)
		}
		b, err := json.Marshal(msg)
		if err != nil {
			t.Fatal(err)
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if err := compile(t, tp).Validate(inst); err != nil {
			t.Errorf("%s: sample does not validate: %v", tp.Name, err)
		}
	}
}

func TestSchemasRejectBadMessages(t *testing.T) {
	var server Topic
	for _, tp := range Topics() {
		if tp.Name == TopicServerEvents {
			server = tp
		}
	}
	s := compile(t, server)
	for name, body := range map[string]string{
		"unknown name":    `{"eventId":"e","sourceId":"s","workspaceId":"w","appId":"a","name":"bought","occurredAt":"2026-11-01T00:00:00Z","receivedAt":"2026-11-01T00:00:00Z"}`,
		"zero amount":     `{"eventId":"e","sourceId":"s","workspaceId":"w","appId":"a","name":"paid","amountCents":0,"currency":"USD","occurredAt":"2026-11-01T00:00:00Z","receivedAt":"2026-11-01T00:00:00Z"}`,
		"missing eventId": `{"sourceId":"s","workspaceId":"w","appId":"a","name":"paid","occurredAt":"2026-11-01T00:00:00Z","receivedAt":"2026-11-01T00:00:00Z"}`,
	} {
		inst, _ := jsonschema.UnmarshalJSON(strings.NewReader(body))
		if err := s.Validate(inst); err == nil {
			t.Errorf("%s: schema accepted it", name)
		}
	}
}

// rerunnableDataRe admits the data moves a migration may make when repeating them changes nothing
// that reads see: a copy into a table whose readers take the latest version (a repeat only adds the
// same rows again), and an ALTER … UPDATE that sets a value (a repeat sets it again). Each such
// migration says in a comment why a repeat is harmless (0017).
var rerunnableDataRe = regexp.MustCompile(`^(INSERT INTO \w+ \([^)]*\)\s+SELECT |ALTER TABLE \w+ UPDATE \w+ = )`)

func TestMigrationsParse(t *testing.T) {
	ms, err := Migrations()
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 {
		t.Fatal("no migrations embedded")
	}
	for i, m := range ms {
		if m.Version != uint32(i+1) {
			t.Errorf("migration %s has version %d, want %d (no gaps)", m.Name, m.Version, i+1)
		}
		for _, st := range m.Statements {
			if !strings.HasPrefix(st, "CREATE TABLE IF NOT EXISTS ") && !strings.HasPrefix(st, "CREATE MATERIALIZED VIEW IF NOT EXISTS ") &&
				!strings.HasPrefix(st, "CREATE VIEW IF NOT EXISTS ") && !addColumnRe.MatchString(st) && !rerunnableDataRe.MatchString(st) {
				t.Errorf("%04d_%s: every statement must be CREATE TABLE IF NOT EXISTS, CREATE [MATERIALIZED] VIEW IF NOT EXISTS or ALTER TABLE … ADD COLUMN (re-runnable), got %.60q", m.Version, m.Name, st)
			}
		}
	}
}
