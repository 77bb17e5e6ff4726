/* on one replica of every shard */ ALTER TABLE revtrack.upload_queue_local ADD COLUMN poll_attempts UInt16 DEFAULT 0;

/* on every node */ ALTER TABLE revtrack.upload_queue ADD COLUMN poll_attempts UInt16 DEFAULT 0;

/* on one replica of every shard */ ALTER TABLE revtrack.upload_queue_local ADD COLUMN diagnostics_status String DEFAULT '';

/* on every node */ ALTER TABLE revtrack.upload_queue ADD COLUMN diagnostics_status String DEFAULT '';

/* on one replica of every shard */ ALTER TABLE revtrack.upload_queue_local ADD COLUMN conversion_customer_id String DEFAULT '';

/* on every node */ ALTER TABLE revtrack.upload_queue ADD COLUMN conversion_customer_id String DEFAULT '';

/* on one replica of every shard */ ALTER TABLE revtrack.upload_queue_local ADD COLUMN login_customer_id String DEFAULT '';

/* on every node */ ALTER TABLE revtrack.upload_queue ADD COLUMN login_customer_id String DEFAULT '';

/* on one replica of every shard */ ALTER TABLE revtrack.upload_queue_local ADD COLUMN conversion_action_id String DEFAULT '';

/* on every node */ ALTER TABLE revtrack.upload_queue ADD COLUMN conversion_action_id String DEFAULT '';

/* on one replica of every shard */ ALTER TABLE revtrack.upload_queue_local ADD COLUMN request_events UInt32 DEFAULT 0;

/* on every node */ ALTER TABLE revtrack.upload_queue ADD COLUMN request_events UInt32 DEFAULT 0;
