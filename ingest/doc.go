// Package ingest is the HTTP edge that accepts tracking data: it serves tracker.js, collects browser
// events and verified server events, deduplicates event IDs and enforces rate limits in Redis, and
// answers 2xx only after Kafka acknowledged the write. It writes revtrack.browser-events.v1 and
// revtrack.server-events.v1 (see schemas.Topics).
package ingest
