ALTER TABLE revtrack.upload_queue_local ON CLUSTER revtrack ADD COLUMN poll_attempts UInt16 DEFAULT 0;

ALTER TABLE revtrack.upload_queue ON CLUSTER revtrack ADD COLUMN poll_attempts UInt16 DEFAULT 0;

ALTER TABLE revtrack.upload_queue_local ON CLUSTER revtrack ADD COLUMN diagnostics_status String DEFAULT '';

ALTER TABLE revtrack.upload_queue ON CLUSTER revtrack ADD COLUMN diagnostics_status String DEFAULT '';

ALTER TABLE revtrack.upload_queue_local ON CLUSTER revtrack ADD COLUMN conversion_customer_id String DEFAULT '';

ALTER TABLE revtrack.upload_queue ON CLUSTER revtrack ADD COLUMN conversion_customer_id String DEFAULT '';

ALTER TABLE revtrack.upload_queue_local ON CLUSTER revtrack ADD COLUMN login_customer_id String DEFAULT '';

ALTER TABLE revtrack.upload_queue ON CLUSTER revtrack ADD COLUMN login_customer_id String DEFAULT '';

ALTER TABLE revtrack.upload_queue_local ON CLUSTER revtrack ADD COLUMN conversion_action_id String DEFAULT '';

ALTER TABLE revtrack.upload_queue ON CLUSTER revtrack ADD COLUMN conversion_action_id String DEFAULT '';

ALTER TABLE revtrack.upload_queue_local ON CLUSTER revtrack ADD COLUMN request_events UInt32 DEFAULT 0;

ALTER TABLE revtrack.upload_queue ON CLUSTER revtrack ADD COLUMN request_events UInt32 DEFAULT 0;
