package uploader

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/schemas"
)

func testJob(mappingID, eventID, clickType, clickID string, at time.Time) schemas.UploadJob {
	hash := schemas.EventIDHash("src-1", eventID)
	return schemas.UploadJob{RowID: schemas.UploadRowID(mappingID, hash), WorkspaceID: "ws-1", MappingID: mappingID, SourceID: "src-1",
		EventIDHash: hash, TransactionID: schemas.UploadTransactionID(mappingID, hash), Milestone: "paid", AcquisitionID: "acq-1",
		ClickIDType: clickType, ClickID: clickID, EventTime: at}
}

// TestNewRowInitialStates covers the "(new)" rows of the upload-queue state table.
func TestNewRowInitialStates(t *testing.T) {
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	m := controlplane.AdMapping{MappingID: "m-1", CreatedAt: now.Add(-24 * time.Hour)}
	maxAge := 90 * 24 * time.Hour
	for _, c := range []struct {
		name      string
		clickType string
		at        time.Time
		status    Status
		reason    string
	}{
		{"click inside the window", "gclid", now.Add(-time.Hour), StatusQueued, ""},
		{"gbraid", "gbraid", now.Add(-time.Hour), StatusQueued, ""},
		{"wbraid", "wbraid", now.Add(-time.Hour), StatusQueued, ""},
		{"no click ID", "", now.Add(-time.Hour), StatusUnattributed, ""},
		{"no click ID before the mapping stays unattributed", "", now.Add(-48 * time.Hour), StatusUnattributed, ""},
		{"before the mapping", "gclid", m.CreatedAt.Add(-time.Second), StatusRejected, ReasonEventBeforeMapping},
		{"at the mapping's creation", "gclid", m.CreatedAt, StatusQueued, ""},
		{"older than the window", "gclid", now.Add(-maxAge - time.Second), StatusRejected, ReasonEventOutsideWindow},
		{"a little ahead of the clock", "gclid", now.Add(4 * time.Minute), StatusQueued, ""},
		{"in the future", "gclid", now.Add(6 * time.Minute), StatusRejected, ReasonEventOutsideWindow},
	} {
		t.Run(c.name, func(t *testing.T) {
			mm := m
			if c.reason == ReasonEventOutsideWindow {
				mm.CreatedAt = now.Add(-2 * maxAge) // isolate the window check from the mapping check
			}
			click := ""
			if c.clickType != "" {
				click = "Cj0-" + c.clickType
			}
			r := newRow(testJob("m-1", "evt", c.clickType, click, c.at), mm, now, maxAge)
			if r.Status != c.status || (c.reason == "") != (len(r.ReasonCodes) == 0) ||
				(c.reason != "" && r.ReasonCodes[0] != c.reason) {
				t.Fatalf("got %s %v (%s)", r.Status, r.ReasonCodes, r.Message)
			}
			if r.Attempts != 0 || r.Version == 0 || !r.CreatedAt.Equal(now) || r.ReasonCodes == nil {
				t.Fatalf("row %+v", r)
			}
			if r.Status != StatusQueued && r.Message == "" {
				t.Fatal("a row that will not be uploaded says why")
			}
		})
	}
}

func TestValidateJob(t *testing.T) {
	at := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	good := testJob("m-1", "evt", "gclid", "Cj0", at)
	if err := validateJob(good); err != nil {
		t.Fatal(err)
	}
	for name, mutate := range map[string]func(*schemas.UploadJob){
		"raw event ID instead of its hash": func(j *schemas.UploadJob) { j.EventIDHash = "evt-1" },
		"row ID of another mapping":        func(j *schemas.UploadJob) { j.RowID = schemas.UploadRowID("m-2", j.EventIDHash) },
		"numeric transaction ID":           func(j *schemas.UploadJob) { j.TransactionID = "12345" },
		"unknown milestone":                func(j *schemas.UploadJob) { j.Milestone = "page_view" },
		"unknown click type":               func(j *schemas.UploadJob) { j.ClickIDType = "dclid" },
		"click type without ID":            func(j *schemas.UploadJob) { j.ClickID = "" },
		"no event time":                    func(j *schemas.UploadJob) { j.EventTime = time.Time{} },
		"lower-case currency":              func(j *schemas.UploadJob) { j.Currency = "usd" },
		"zero value":                       func(j *schemas.UploadJob) { v := int64(0); j.ValueCents = &v },
		"no workspace":                     func(j *schemas.UploadJob) { j.WorkspaceID = "" },
	} {
		j := good
		mutate(&j)
		if err := validateJob(j); !errors.Is(err, schemas.ErrInvalidMessage) {
			t.Errorf("%s: %v", name, err)
		} else if !strings.Contains(err.Error(), "invalid message") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestNextVersionIsMonotonic(t *testing.T) {
	now := time.Unix(100, 0)
	if v := nextVersion(0, now); v != uint64(now.UnixNano()) {
		t.Fatal(v)
	}
	// A clock behind the previous writer's still yields a newer version.
	if v := nextVersion(uint64(now.UnixNano())+10, now); v != uint64(now.UnixNano())+11 {
		t.Fatal(v)
	}
}
