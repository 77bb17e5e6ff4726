ALTER TABLE revtrack.platform_lifecycle_events_local ON CLUSTER revtrack ADD COLUMN shop_name String DEFAULT '';

/* on every node */ ALTER TABLE revtrack.platform_lifecycle_events ADD COLUMN shop_name String DEFAULT '';

ALTER TABLE revtrack.platform_lifecycle_events_local ON CLUSTER revtrack ADD COLUMN charge_type String DEFAULT '';

/* on every node */ ALTER TABLE revtrack.platform_lifecycle_events ADD COLUMN charge_type String DEFAULT '';

ALTER TABLE revtrack.platform_lifecycle_events_local ON CLUSTER revtrack ADD COLUMN test UInt8 DEFAULT 0;

/* on every node */ ALTER TABLE revtrack.platform_lifecycle_events ADD COLUMN test UInt8 DEFAULT 0;

ALTER TABLE revtrack.platform_lifecycle_events_local ON CLUSTER revtrack ADD COLUMN billing_on Nullable(DateTime('UTC'));

/* on every node */ ALTER TABLE revtrack.platform_lifecycle_events ADD COLUMN billing_on Nullable(DateTime('UTC'));

ALTER TABLE revtrack.platform_usage_charges_local ON CLUSTER revtrack ADD COLUMN test UInt8 DEFAULT 0;

/* on every node */ ALTER TABLE revtrack.platform_usage_charges ADD COLUMN test UInt8 DEFAULT 0;

ALTER TABLE revtrack.platform_charges_local ON CLUSTER revtrack ADD COLUMN end_reason String DEFAULT '';

/* on every node */ ALTER TABLE revtrack.platform_charges ADD COLUMN end_reason String DEFAULT '';
