package schemas

import (
	"regexp"
	"testing"
)

// The expected values were computed outside Go (printf '…' | sha256sum), so the test checks the
// documented recipe rather than the code against itself.
func TestUploadIDsFollowTheDocumentedRecipe(t *testing.T) {
	h := EventIDHash("src-1", "evt-1")
	if h != "05a447ff53bb62c6063af531f3435aa545ad409ce37584be53c6b9005507c1f9" {
		t.Fatalf("event ID hash %s", h)
	}
	if got := UploadRowID("map-1", h); got != "uq_20564a2d5f5b3f10a8015b4cc71e1ab1" {
		t.Fatalf("row ID %s", got)
	}
	if got := UploadTransactionID("map-1", h); got != "rt-40c80da784c45d258965a332e6563074" {
		t.Fatalf("transaction ID %s", got)
	}
	if got := UploadRowID("map-2", h); got != "uq_b32155779e239b0de1ec639b6553f31e" {
		t.Fatalf("row ID of another mapping %s", got)
	}
}

func TestUploadIDsSeparateSourcesMappingsAndKinds(t *testing.T) {
	if EventIDHash("src-1", "evt-1") == EventIDHash("src-2", "evt-1") {
		t.Fatal("the same event ID of two sources must hash differently")
	}
	h := EventIDHash("src-1", "evt-1")
	if UploadRowID("map-1", h) == UploadRowID("map-2", h) || UploadTransactionID("map-1", h) == UploadTransactionID("map-2", h) {
		t.Fatal("two mappings of one event must name two rows and two transactions")
	}
	if UploadRowID("map-1", h)[3:] == UploadTransactionID("map-1", h)[3:] {
		t.Fatal("the transaction ID must not reveal the row ID")
	}
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(h) {
		t.Fatalf("event ID hash %q is not 64 hex digits (UploadJob's schema)", h)
	}
	if tx := UploadTransactionID("1", "2"); !regexp.MustCompile(`^rt-[0-9a-f]{32}$`).MatchString(tx) {
		t.Fatalf("transaction ID %q", tx)
	}
}
