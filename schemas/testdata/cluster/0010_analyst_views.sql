CREATE VIEW IF NOT EXISTS revtrack.analyst_workspaces ON CLUSTER revtrack AS
SELECT workspace_id, slug, name, subscription_status, selected_app_ids, created_at, updated_at
FROM
(
    SELECT
        workspace_id,
        argMax(slug, version) AS slug,
        argMax(name, version) AS name,
        toString(argMax(subscription_status, version)) AS subscription_status,
        argMax(selected_app_ids, version) AS selected_app_ids,
        argMax(created_at, version) AS created_at,
        argMax(updated_at, version) AS updated_at,
        argMax(deleted, version) AS is_deleted
    FROM revtrack.workspaces
    GROUP BY workspace_id
)
WHERE is_deleted = 0;

CREATE VIEW IF NOT EXISTS revtrack.analyst_apps ON CLUSTER revtrack AS
SELECT app_id, platform_app_id, name
FROM
(
    SELECT
        app_id,
        argMax(platform_app_id, version) AS platform_app_id,
        argMax(name, version) AS name,
        argMax(deleted, version) AS is_deleted
    FROM revtrack.apps
    GROUP BY app_id
)
WHERE is_deleted = 0;

CREATE VIEW IF NOT EXISTS revtrack.analyst_customers ON CLUSTER revtrack AS
SELECT
    workspace_id,
    app_id,
    customer_id,
    public_id,
    shop_domain,
    shop_name,
    status,
    country,
    plan,
    tags,
    store_classification,
    toUInt8(has(excluded_apps, app_id) OR has(excluded_apps, '')) AS excluded,
    multiIf(lifecycle_events = 0, first_installed_at,
            isNull(first_installed_at), toNullable(first_event_at),
            toNullable(least(assumeNotNull(first_installed_at), first_event_at))) AS first_seen_at,
    multiIf(lifecycle_events = 0, last_event_at,
            isNull(last_event_at), toNullable(last_lifecycle_at),
            toNullable(greatest(assumeNotNull(last_event_at), last_lifecycle_at))) AS last_seen_at
FROM
(
    SELECT *
    FROM
    (
        SELECT
            workspace_id,
            app_id,
            customer_id,
            argMax(public_id, version) AS public_id,
            argMax(shop_domain, version) AS shop_domain,
            argMax(shop_name, version) AS shop_name,
            argMax(status, version) AS status,
            argMax(country, version) AS country,
            argMax(plan, version) AS plan,
            argMax(tags, version) AS tags,
            argMax(store_classification, version) AS store_classification,
            argMax(first_installed_at, version) AS first_installed_at,
            argMax(last_event_at, version) AS last_event_at
        FROM revtrack.platform_customers
        GROUP BY workspace_id, app_id, customer_id
    ) AS latest_customers
    ANY LEFT JOIN
    (
        SELECT workspace_id, shop_domain, groupArrayIf(app_id, rule_excluded = 1) AS excluded_apps
        FROM
        (
            SELECT workspace_id, shop_domain, app_id, argMax(excluded, version) AS rule_excluded
            FROM revtrack.customer_exclusions
            GROUP BY workspace_id, shop_domain, app_id
        )
        GROUP BY workspace_id, shop_domain
    ) AS exclusions USING (workspace_id, shop_domain)
) AS customers
ANY LEFT JOIN
(
    SELECT
        workspace_id,
        app_id,
        customer_id,
        count() AS lifecycle_events,
        min(occurred_at) AS first_event_at,
        max(occurred_at) AS last_lifecycle_at
    FROM revtrack.platform_lifecycle_events
    WHERE customer_id != ''
    GROUP BY workspace_id, app_id, customer_id
) AS lifecycle USING (workspace_id, app_id, customer_id);

CREATE VIEW IF NOT EXISTS revtrack.analyst_charges ON CLUSTER revtrack AS
SELECT
    workspace_id,
    app_id,
    charge_id,
    argMax(customer_id, version) AS customer_id,
    toString(argMax(kind, version)) AS kind,
    argMax(name, version) AS name,
    argMax(amount_cents, version) AS amount_cents,
    argMax(currency, version) AS currency,
    toString(argMax(billing_interval, version)) AS billing_interval,
    argMax(status, version) AS status,
    argMax(test, version) AS test,
    argMax(trial_days, version) AS trial_days,
    argMax(capped_amount_cents, version) AS capped_amount_cents,
    argMax(accepted_at, version) AS accepted_at,
    argMax(activated_at, version) AS activated_at,
    argMax(ended_at, version) AS ended_at,
    argMax(billing_on, version) AS billing_on
FROM revtrack.platform_charges
GROUP BY workspace_id, app_id, charge_id;

CREATE VIEW IF NOT EXISTS revtrack.analyst_transactions ON CLUSTER revtrack AS
SELECT
    workspace_id,
    app_id,
    transaction_id,
    type,
    customer_id,
    shop_domain,
    charge_id,
    created_at,
    currency,
    gross_cents,
    platform_fee_cents,
    processing_fee_cents,
    net_cents,
    gross_cents - net_cents AS fees_cents,
    billing_interval,
    latest_sync AS synced_at
FROM
(
    SELECT
        workspace_id,
        app_id,
        transaction_id,
        toString(argMax(type, synced_at)) AS type,
        argMax(customer_id, synced_at) AS customer_id,
        argMax(shop_domain, synced_at) AS shop_domain,
        argMax(charge_id, synced_at) AS charge_id,
        argMax(created_at, synced_at) AS created_at,
        argMax(currency, synced_at) AS currency,
        argMax(gross_cents, synced_at) AS gross_cents,
        argMax(platform_fee_cents, synced_at) AS platform_fee_cents,
        argMax(processing_fee_cents, synced_at) AS processing_fee_cents,
        argMax(net_cents, synced_at) AS net_cents,
        toString(argMax(billing_interval, synced_at)) AS billing_interval,
        max(synced_at) AS latest_sync
    FROM revtrack.platform_transactions
    GROUP BY workspace_id, app_id, transaction_id
);

CREATE VIEW IF NOT EXISTS revtrack.analyst_lifecycle_events ON CLUSTER revtrack AS
SELECT
    workspace_id,
    app_id,
    event_key,
    argMax(type, synced_at) AS type,
    argMax(customer_id, synced_at) AS customer_id,
    argMax(shop_domain, synced_at) AS shop_domain,
    argMax(occurred_at, synced_at) AS occurred_at,
    argMax(charge_id, synced_at) AS charge_id,
    argMax(charge_name, synced_at) AS charge_name,
    argMax(amount_cents, synced_at) AS amount_cents,
    argMax(currency, synced_at) AS currency,
    argMax(reason, synced_at) AS reason,
    argMax(description, synced_at) AS description
FROM revtrack.platform_lifecycle_events
GROUP BY workspace_id, app_id, event_key;

CREATE VIEW IF NOT EXISTS revtrack.analyst_usage_charges ON CLUSTER revtrack AS
SELECT
    workspace_id,
    app_id,
    usage_record_id,
    argMax(customer_id, synced_at) AS customer_id,
    argMax(charge_id, synced_at) AS charge_id,
    argMax(description, synced_at) AS description,
    argMax(amount_cents, synced_at) AS amount_cents,
    argMax(currency, synced_at) AS currency,
    argMax(occurred_at, synced_at) AS occurred_at
FROM revtrack.platform_usage_charges
GROUP BY workspace_id, app_id, usage_record_id;

CREATE VIEW IF NOT EXISTS revtrack.analyst_usage_events ON CLUSTER revtrack AS
SELECT workspace_id, app_id, event_id, customer_id, name, quantity, occurred_at, latest_receipt AS received_at
FROM
(
    SELECT
        workspace_id,
        app_id,
        event_id,
        argMax(customer_id, received_at) AS customer_id,
        argMax(name, received_at) AS name,
        argMax(quantity, received_at) AS quantity,
        argMax(occurred_at, received_at) AS occurred_at,
        max(received_at) AS latest_receipt
    FROM revtrack.usage_events
    GROUP BY workspace_id, app_id, event_id
);

CREATE VIEW IF NOT EXISTS revtrack.analyst_sync_runs ON CLUSTER revtrack AS
SELECT
    workspace_id,
    app_id,
    run_id,
    toString(argMax(trigger, version)) AS trigger,
    toString(argMax(status, version)) AS status,
    argMax(started_at, version) AS started_at,
    argMax(finished_at, version) AS finished_at,
    argMax(events_count, version) AS events_count,
    argMax(transactions_count, version) AS transactions_count,
    argMax(coverage_from, version) AS coverage_from,
    argMax(coverage_through, version) AS coverage_through,
    argMax(truncated, version) AS truncated,
    argMax(error, version) AS error
FROM revtrack.sync_runs
GROUP BY workspace_id, app_id, run_id;

CREATE VIEW IF NOT EXISTS revtrack.analyst_acquisitions ON CLUSTER revtrack AS
SELECT
    workspace_id,
    app_id,
    source_id,
    acquisition_id,
    minMerge(first_seen) AS first_seen_at,
    maxMerge(last_seen) AS last_seen_at,
    argMinMerge(first_tracker_ref) AS tracker_ref,
    argMinMerge(first_utm_source) AS utm_source,
    argMinMerge(first_utm_medium) AS utm_medium,
    argMinMerge(first_utm_campaign) AS utm_campaign,
    argMinMerge(first_utm_term) AS utm_term,
    argMinMerge(first_utm_content) AS utm_content,
    argMinMerge(first_gclid) AS gclid,
    argMinMerge(first_gbraid) AS gbraid,
    argMinMerge(first_wbraid) AS wbraid,
    argMinMerge(first_landing_url) AS landing_url,
    argMinMerge(first_referrer) AS referrer,
    uniqExactIfMerge(page_views) AS page_view_count,
    uniqExactMerge(events) AS event_count
FROM revtrack.acquisitions
GROUP BY workspace_id, app_id, source_id, acquisition_id;

CREATE VIEW IF NOT EXISTS revtrack.analyst_funnel_events ON CLUSTER revtrack AS
SELECT
    workspace_id,
    app_id,
    source_id,
    event_id,
    toString(argMax(name, version)) AS name,
    argMax(occurred_at, version) AS occurred_at,
    argMax(acquisition_source_id, version) AS acquisition_source_id,
    argMax(acquisition_id, version) AS acquisition_id,
    toString(argMax(acquisition_resolved_by, version)) AS acquisition_resolved_by,
    argMax(shop_domain, version) AS shop_domain,
    argMax(amount_cents, version) AS amount_cents,
    argMax(currency, version) AS currency
FROM revtrack.funnel_events
GROUP BY workspace_id, source_id, app_id, event_id;

CREATE VIEW IF NOT EXISTS revtrack.analyst_daily_revenue ON CLUSTER revtrack AS
SELECT
    workspace_id,
    app_id,
    toDate(created_at) AS date,
    currency,
    type,
    sum(gross_cents) AS gross_cents,
    sum(fees_cents) AS fees_cents,
    sum(platform_fee_cents) AS platform_fee_cents,
    sum(net_cents) AS net_cents,
    count() AS transaction_count
FROM revtrack.analyst_transactions
GROUP BY workspace_id, app_id, date, currency, type;

CREATE VIEW IF NOT EXISTS revtrack.analyst_daily_usage ON CLUSTER revtrack AS
SELECT
    workspace_id,
    app_id,
    toDate(occurred_at) AS date,
    name,
    count() AS event_count,
    sum(quantity) AS total_quantity,
    uniqExact(customer_id) AS customers
FROM revtrack.analyst_usage_events
GROUP BY workspace_id, app_id, date, name;
