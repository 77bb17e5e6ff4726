package processors

// SQL of the retention job. The partition and table names in DROP PARTITION are not bound (DDL
// takes no parameters): tables come from retainedTables and partition IDs are checked to be
// YYYYMM digits before use. Times are bound as epoch seconds.
const (
	// selectRetainedPartitions lists the monthly partitions that hold data, per table.
	selectRetainedPartitions = `SELECT table, partition_id
FROM system.parts
WHERE database = currentDatabase() AND active AND has(?, table)
GROUP BY table, partition_id
ORDER BY table, partition_id`

	// uploadIdentifiersCondition selects upload-queue rows past retention that still hold an
	// identifier. The queue keeps no merchant identifier: the shop domain never reaches it and
	// source event IDs are stored hashed.
	uploadIdentifiersCondition = `created_at < toDateTime(?) AND (click_id != '' OR acquisition_id != '')`

	countUploadIdentifiers = `SELECT count() FROM upload_queue WHERE ` + uploadIdentifiersCondition

	// scrubUploadIdentifiers is an asynchronous mutation: it returns once queued, and ClickHouse
	// rewrites the affected parts in the background (system.mutations shows progress).
	scrubUploadIdentifiers = `ALTER TABLE upload_queue UPDATE click_id = '', acquisition_id = '' WHERE ` + uploadIdentifiersCondition
)
