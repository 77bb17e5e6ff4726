-- What the customer, charge and usage-charge rows are derived from (docs/PLATFORM_DATA.md). The
-- partner API has no customers or charges query: the landing consumer folds each customer's
-- lifecycle events into platform_customers and platform_charges, so the events must carry
-- everything those rows show. Rows landed before this migration have the defaults until re-synced.

-- The event's shop name (relationship and charge events carry the shop).
ALTER TABLE platform_lifecycle_events ADD COLUMN shop_name String DEFAULT '';

-- The GraphQL type of the event's charge or credit: AppSubscription, AppPurchaseOneTime,
-- AppUsageRecord or AppCredit; '' for events without one.
ALTER TABLE platform_lifecycle_events ADD COLUMN charge_type String DEFAULT '';

-- The charge's test flag: test charges (development stores) never count as revenue.
ALTER TABLE platform_lifecycle_events ADD COLUMN test UInt8 DEFAULT 0;

-- AppSubscription.billingOn as the event reported it (null on cancel, decline, expiry and freeze).
ALTER TABLE platform_lifecycle_events ADD COLUMN billing_on Nullable(DateTime('UTC'));

-- A usage record's own test flag. The API links a usage record to no subscription (charge_id stays
-- ''), so readers filter test = 0 rather than joining the parent charge.
ALTER TABLE platform_usage_charges ADD COLUMN test UInt8 DEFAULT 0;

-- Why an ended charge ended: canceled, declined, expired, or uninstalled (the shop uninstalled the
-- app after the charge was activated; status is then canceled). '' while the charge has not ended.
ALTER TABLE platform_charges ADD COLUMN end_reason String DEFAULT '';
