package schemas

import (
	"crypto/sha256"
	"encoding/hex"
)

// Identifiers of an upload-queue row (docs/ADS_UPLOAD.md "Identifiers"). They are pure functions of the
// source event and the mapping, so the matcher, the queue and a redelivered job always name the same
// row, and a resend carries the same transaction ID, which the advertising platform deduplicates.

// EventIDHash is the hex SHA-256 of "<source_id>:<event_id>": the form in which a source event ID is
// kept by the upload queue (the raw ID never is).
func EventIDHash(sourceID, eventID string) string {
	return hexSHA256(sourceID + ":" + eventID)
}

// UploadRowID is "uq_" and the first 32 hex digits of SHA-256("<mapping_id>:<event_id_hash>").
func UploadRowID(mappingID, eventIDHash string) string {
	return "uq_" + hexSHA256(mappingID + ":" + eventIDHash)[:32]
}

// UploadTransactionID is "rt-" and the first 32 hex digits of SHA-256("<mapping_id>:<event_id_hash>:tx").
// The prefix keeps it from ever being purely numeric.
func UploadTransactionID(mappingID, eventIDHash string) string {
	return "rt-" + hexSHA256(mappingID + ":" + eventIDHash + ":tx")[:32]
}

func hexSHA256(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
