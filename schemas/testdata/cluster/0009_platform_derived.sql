/* on one replica of every shard */ ALTER TABLE revtrack.platform_lifecycle_events_local ADD COLUMN shop_name String DEFAULT '';

/* on every node */ ALTER TABLE revtrack.platform_lifecycle_events ADD COLUMN shop_name String DEFAULT '';

/* on one replica of every shard */ ALTER TABLE revtrack.platform_lifecycle_events_local ADD COLUMN charge_type String DEFAULT '';

/* on every node */ ALTER TABLE revtrack.platform_lifecycle_events ADD COLUMN charge_type String DEFAULT '';

/* on one replica of every shard */ ALTER TABLE revtrack.platform_lifecycle_events_local ADD COLUMN test UInt8 DEFAULT 0;

/* on every node */ ALTER TABLE revtrack.platform_lifecycle_events ADD COLUMN test UInt8 DEFAULT 0;

/* on one replica of every shard */ ALTER TABLE revtrack.platform_lifecycle_events_local ADD COLUMN billing_on Nullable(DateTime('UTC'));

/* on every node */ ALTER TABLE revtrack.platform_lifecycle_events ADD COLUMN billing_on Nullable(DateTime('UTC'));

/* on one replica of every shard */ ALTER TABLE revtrack.platform_usage_charges_local ADD COLUMN test UInt8 DEFAULT 0;

/* on every node */ ALTER TABLE revtrack.platform_usage_charges ADD COLUMN test UInt8 DEFAULT 0;

/* on one replica of every shard */ ALTER TABLE revtrack.platform_charges_local ADD COLUMN end_reason String DEFAULT '';

/* on every node */ ALTER TABLE revtrack.platform_charges ADD COLUMN end_reason String DEFAULT '';
