package processors

import (
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/revtrack/revtrack/schemas"
)

// The upload matcher's pure rules.

func TestUploadMatchMilestonesAreTheMappableOnes(t *testing.T) {
	for _, name := range schemas.ServerEventNames {
		want := name == "install" || name == "trial_started" || name == "trial_converted" || name == "qualified" || name == "paid"
		if got := isUploadMilestone(name); got != want {
			t.Errorf("%s mappable = %v, want %v", name, got, want)
		}
	}
}

func TestUploadMatchClickPreference(t *testing.T) {
	for _, c := range []struct {
		in         clickEvidence
		kind, want string
	}{
		{clickEvidence{Gclid: "g", Gbraid: "b", Wbraid: "w"}, "gclid", "g"},
		{clickEvidence{Gbraid: "b", Wbraid: "w"}, "gbraid", "b"},
		{clickEvidence{Wbraid: "w"}, "wbraid", "w"},
		{clickEvidence{}, "", ""},
	} {
		if kind, id := c.in.pick(); kind != c.kind || id != c.want {
			t.Errorf("%+v picked %s %s, want %s %s", c.in, kind, id, c.kind, c.want)
		}
	}
}

func TestUploadMatchJobsOfAnEvent(t *testing.T) {
	paid := serverEvent("evt-1", "paid", "acq-1", "shop.example", 0)
	paid.SourceID, paid.AmountCents, paid.Currency = "src-1", cents(4900), "USD"
	paid.OccurredAt = time.Date(2026, 11, 20, 13, 0, 0, 5e6, time.FixedZone("CET", 3600))
	jobs := uploadJobsOf(paid, []string{"map-1", "map-2"}, clickEvidence{Gbraid: "gb-1", Wbraid: "wb-1"})
	if len(jobs) != 2 {
		t.Fatalf("jobs %+v", jobs)
	}
	// The IDs of docs/ADS_UPLOAD.md, checked against values computed with sha256sum (schemas/upload_ids_test.go).
	j := jobs[0]
	if j.EventIDHash != "05a447ff53bb62c6063af531f3435aa545ad409ce37584be53c6b9005507c1f9" ||
		j.RowID != "uq_20564a2d5f5b3f10a8015b4cc71e1ab1" || j.TransactionID != "rt-40c80da784c45d258965a332e6563074" {
		t.Fatalf("IDs %+v", j)
	}
	if j.MappingID != "map-1" || j.WorkspaceID != "ws" || j.SourceID != "src-1" || j.Milestone != "paid" || j.AcquisitionID != "acq-1" ||
		j.ClickIDType != "gbraid" || j.ClickID != "gb-1" || *j.ValueCents != 4900 || j.Currency != "USD" ||
		!j.EventTime.Equal(paid.OccurredAt) || j.EventTime.Location() != time.UTC {
		t.Fatalf("job %+v", j)
	}
	if string(uploadJobKey(j)) != "ws:map-1" {
		t.Fatalf("key %s", uploadJobKey(j))
	}
	if jobs[1].RowID == j.RowID || jobs[1].TransactionID == j.TransactionID || jobs[1].EventIDHash != j.EventIDHash {
		t.Fatalf("a second mapping must name another row and transaction of the same event: %+v", jobs[1])
	}

	// Without its own acquisition ID an event has no click evidence, whatever is passed.
	paid.AcquisitionID = ""
	if j := uploadJobsOf(paid, []string{"map-1"}, clickEvidence{Gclid: "g"})[0]; j.ClickIDType != "" || j.ClickID != "" {
		t.Fatalf("job without acquisition %+v", j)
	}
}

func TestUploadMatchMappingIndexIsSortedAndDistinct(t *testing.T) {
	k := mappingKey{"ws", "src", "paid"}
	idx := mappingIndex([]uploadMapping{{"m-b", k}, {"m-a", k}, {"m-b", k}, {"m-c", mappingKey{"ws", "src", "install"}}})
	if got := idx[k]; len(got) != 2 || got[0] != "m-a" || got[1] != "m-b" {
		t.Fatalf("paid mappings %v", got)
	}
}

func TestUploadMatchDecodeRefusesTimesOutsideDateTime(t *testing.T) {
	ev := serverEvent("e1", "install", "acq", "", 0)
	ev.OccurredAt = time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC)
	_, err := decodeUploadMatchEvent(&kgo.Record{Topic: "t", Value: mustJSON(t, ev)})
	if !errors.Is(err, schemas.ErrInvalidMessage) {
		t.Fatalf("err %v", err)
	}
	ev.OccurredAt = i0
	if _, err := decodeUploadMatchEvent(&kgo.Record{Topic: "t", Value: mustJSON(t, ev)}); err != nil {
		t.Fatal(err)
	}
}
