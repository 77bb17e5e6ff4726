// Package uploader consumes revtrack.upload-jobs.v1 and sends verified lifecycle events to the
// advertising platform as offline click conversions, keeping each upload-queue row's state in
// ClickHouse.
package uploader
