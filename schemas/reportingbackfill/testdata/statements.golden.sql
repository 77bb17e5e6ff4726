-- reporting_events
SELECT workspace_id, app_id, toYYYYMM(occurred_at) AS month, count() FROM platform_lifecycle_events WHERE workspace_id = 'ws' GROUP BY workspace_id, app_id, month ORDER BY workspace_id, app_id, month;

SELECT count(), countIf((workspace_id, app_id, public_id, occurred_at, event_key, latest) NOT IN (SELECT workspace_id, app_id, public_id, occurred_at, event_key, max(synced_at) AS latest FROM reporting_events WHERE workspace_id = 'ws' AND app_id = 'app' AND toYYYYMM(occurred_at) = 202501 GROUP BY workspace_id, app_id, public_id, occurred_at, event_key))
FROM (SELECT workspace_id, app_id, public_id, occurred_at, event_key, max(synced_at) AS latest FROM (SELECT workspace_id, app_id, concat('cus_', lower(hex(substring(SHA256(concat(app_id, '\x1f', customer_id)), 1, 10)))) AS public_id,
    occurred_at, event_key, customer_id, type, charge_id, charge_name, amount_cents, currency, reason, description, synced_at
FROM platform_lifecycle_events
WHERE workspace_id = 'ws' AND app_id = 'app' AND toYYYYMM(occurred_at) = 202501) GROUP BY workspace_id, app_id, public_id, occurred_at, event_key);

INSERT INTO reporting_events (workspace_id, app_id, public_id, occurred_at, event_key, customer_id, type, charge_id, charge_name, amount_cents, currency, reason, description, synced_at) SELECT workspace_id, app_id, public_id, occurred_at, event_key, customer_id, type, charge_id, charge_name, amount_cents, currency, reason, description, synced_at FROM (SELECT workspace_id, app_id, concat('cus_', lower(hex(substring(SHA256(concat(app_id, '\x1f', customer_id)), 1, 10)))) AS public_id,
    occurred_at, event_key, customer_id, type, charge_id, charge_name, amount_cents, currency, reason, description, synced_at
FROM platform_lifecycle_events
WHERE workspace_id = 'ws' AND app_id = 'app' AND toYYYYMM(occurred_at) = 202501)
WHERE (workspace_id, app_id, public_id, occurred_at, event_key, synced_at) IN (SELECT workspace_id, app_id, public_id, occurred_at, event_key, max(synced_at) AS latest FROM (SELECT workspace_id, app_id, concat('cus_', lower(hex(substring(SHA256(concat(app_id, '\x1f', customer_id)), 1, 10)))) AS public_id,
    occurred_at, event_key, customer_id, type, charge_id, charge_name, amount_cents, currency, reason, description, synced_at
FROM platform_lifecycle_events
WHERE workspace_id = 'ws' AND app_id = 'app' AND toYYYYMM(occurred_at) = 202501) GROUP BY workspace_id, app_id, public_id, occurred_at, event_key) AND (workspace_id, app_id, public_id, occurred_at, event_key, synced_at) NOT IN (SELECT workspace_id, app_id, public_id, occurred_at, event_key, max(synced_at) AS latest FROM reporting_events WHERE workspace_id = 'ws' AND app_id = 'app' AND toYYYYMM(occurred_at) = 202501 GROUP BY workspace_id, app_id, public_id, occurred_at, event_key);

INSERT INTO reporting_events (workspace_id, app_id, public_id, occurred_at, event_key, customer_id, type, charge_id, charge_name, amount_cents, currency, reason, description, synced_at) SELECT workspace_id, app_id, public_id, occurred_at, event_key, customer_id, type, charge_id, charge_name, amount_cents, currency, reason, description, synced_at FROM (SELECT workspace_id, app_id, concat('cus_', lower(hex(substring(SHA256(concat(app_id, '\x1f', customer_id)), 1, 10)))) AS public_id,
    occurred_at, event_key, customer_id, type, charge_id, charge_name, amount_cents, currency, reason, description, synced_at
FROM platform_lifecycle_events
WHERE workspace_id = 'ws' AND app_id = 'app' AND toYYYYMM(occurred_at) = 202501 AND cityHash64(event_key) % 3 = 1)
WHERE (workspace_id, app_id, public_id, occurred_at, event_key, synced_at) IN (SELECT workspace_id, app_id, public_id, occurred_at, event_key, max(synced_at) AS latest FROM (SELECT workspace_id, app_id, concat('cus_', lower(hex(substring(SHA256(concat(app_id, '\x1f', customer_id)), 1, 10)))) AS public_id,
    occurred_at, event_key, customer_id, type, charge_id, charge_name, amount_cents, currency, reason, description, synced_at
FROM platform_lifecycle_events
WHERE workspace_id = 'ws' AND app_id = 'app' AND toYYYYMM(occurred_at) = 202501 AND cityHash64(event_key) % 3 = 1) GROUP BY workspace_id, app_id, public_id, occurred_at, event_key) AND (workspace_id, app_id, public_id, occurred_at, event_key, synced_at) NOT IN (SELECT workspace_id, app_id, public_id, occurred_at, event_key, max(synced_at) AS latest FROM reporting_events WHERE workspace_id = 'ws' AND app_id = 'app' AND toYYYYMM(occurred_at) = 202501 GROUP BY workspace_id, app_id, public_id, occurred_at, event_key);

-- reporting_payments
SELECT workspace_id, app_id, toYYYYMM(created_at) AS month, count() FROM platform_transactions WHERE workspace_id = 'ws' GROUP BY workspace_id, app_id, month ORDER BY workspace_id, app_id, month;

SELECT count(), countIf((workspace_id, app_id, created_at, public_id, currency) NOT IN (SELECT DISTINCT workspace_id, app_id, created_at, public_id, currency FROM reporting_payments WHERE workspace_id = 'ws' AND app_id = 'app' AND toYYYYMM(created_at) = 202501))
FROM (SELECT DISTINCT workspace_id, app_id, created_at, public_id, currency FROM (SELECT workspace_id, app_id, created_at, concat('cus_', lower(hex(substring(SHA256(concat(app_id, '\x1f', customer_id)), 1, 10)))) AS public_id,
    currency
FROM platform_transactions
WHERE (type = 'subscription' AND gross_cents > 0) AND workspace_id = 'ws' AND app_id = 'app' AND toYYYYMM(created_at) = 202501));

INSERT INTO reporting_payments (workspace_id, app_id, created_at, public_id, currency) SELECT workspace_id, app_id, created_at, public_id, currency FROM (SELECT workspace_id, app_id, created_at, concat('cus_', lower(hex(substring(SHA256(concat(app_id, '\x1f', customer_id)), 1, 10)))) AS public_id,
    currency
FROM platform_transactions
WHERE (type = 'subscription' AND gross_cents > 0) AND workspace_id = 'ws' AND app_id = 'app' AND toYYYYMM(created_at) = 202501)
WHERE (workspace_id, app_id, created_at, public_id, currency) NOT IN (SELECT DISTINCT workspace_id, app_id, created_at, public_id, currency FROM reporting_payments WHERE workspace_id = 'ws' AND app_id = 'app' AND toYYYYMM(created_at) = 202501);

INSERT INTO reporting_payments (workspace_id, app_id, created_at, public_id, currency) SELECT workspace_id, app_id, created_at, public_id, currency FROM (SELECT workspace_id, app_id, created_at, concat('cus_', lower(hex(substring(SHA256(concat(app_id, '\x1f', customer_id)), 1, 10)))) AS public_id,
    currency
FROM platform_transactions
WHERE (type = 'subscription' AND gross_cents > 0) AND workspace_id = 'ws' AND app_id = 'app' AND toYYYYMM(created_at) = 202501 AND cityHash64(transaction_id) % 3 = 1)
WHERE (workspace_id, app_id, created_at, public_id, currency) NOT IN (SELECT DISTINCT workspace_id, app_id, created_at, public_id, currency FROM reporting_payments WHERE workspace_id = 'ws' AND app_id = 'app' AND toYYYYMM(created_at) = 202501);

-- acquisition_clicks
SELECT count() FROM system.tables WHERE database = currentDatabase() AND name = 'acquisition_clicks_mv';

DESCRIBE TABLE (SELECT
    source_id,
    acquisition_id,
    toStartOfMonth(occurred_at) AS event_month,
    workspace_id,
    app_id,
    argMinState(first_gclid, (first_gclid = '', occurred_at, occurred_ms, event_id)) AS click_gclid,
    argMinState(first_gbraid, (first_gbraid = '', occurred_at, occurred_ms, event_id)) AS click_gbraid,
    argMinState(first_wbraid, (first_wbraid = '', occurred_at, occurred_ms, event_id)) AS click_wbraid
FROM browser_events
GROUP BY source_id, acquisition_id, event_month, workspace_id, app_id
HAVING max(first_gclid != '' OR first_gbraid != '' OR first_wbraid != '') = 1);

SELECT toYYYYMM(occurred_at) AS month, count() FROM browser_events WHERE workspace_id = 'ws' GROUP BY month ORDER BY month;

SELECT count(), countIf((workspace_id, app_id, source_id, acquisition_id) NOT IN (SELECT workspace_id, app_id, source_id, acquisition_id FROM acquisition_clicks WHERE toYYYYMM(event_month) = 202501))
FROM (SELECT
    source_id,
    acquisition_id,
    toStartOfMonth(occurred_at) AS event_month,
    workspace_id,
    app_id,
    argMinState(first_gclid, (first_gclid = '', occurred_at, occurred_ms, event_id)) AS click_gclid,
    argMinState(first_gbraid, (first_gbraid = '', occurred_at, occurred_ms, event_id)) AS click_gbraid,
    argMinState(first_wbraid, (first_wbraid = '', occurred_at, occurred_ms, event_id)) AS click_wbraid
FROM browser_events
WHERE toYYYYMM(occurred_at) = 202501
GROUP BY source_id, acquisition_id, event_month, workspace_id, app_id
HAVING max(first_gclid != '' OR first_gbraid != '' OR first_wbraid != '') = 1);

SELECT count(), countIf((workspace_id, app_id, source_id, acquisition_id) NOT IN (SELECT workspace_id, app_id, source_id, acquisition_id FROM acquisition_clicks WHERE toYYYYMM(event_month) = 202501 AND workspace_id = 'ws'))
FROM (SELECT
    source_id,
    acquisition_id,
    toStartOfMonth(occurred_at) AS event_month,
    workspace_id,
    app_id,
    argMinState(first_gclid, (first_gclid = '', occurred_at, occurred_ms, event_id)) AS click_gclid,
    argMinState(first_gbraid, (first_gbraid = '', occurred_at, occurred_ms, event_id)) AS click_gbraid,
    argMinState(first_wbraid, (first_wbraid = '', occurred_at, occurred_ms, event_id)) AS click_wbraid
FROM browser_events
WHERE toYYYYMM(occurred_at) = 202501 AND workspace_id = 'ws'
GROUP BY source_id, acquisition_id, event_month, workspace_id, app_id
HAVING max(first_gclid != '' OR first_gbraid != '' OR first_wbraid != '') = 1);

INSERT INTO acquisition_clicks (source_id, acquisition_id, event_month, workspace_id, app_id, click_gclid, click_gbraid, click_wbraid)
SELECT
    source_id,
    acquisition_id,
    toStartOfMonth(occurred_at) AS event_month,
    workspace_id,
    app_id,
    argMinState(first_gclid, (first_gclid = '', occurred_at, occurred_ms, event_id)) AS click_gclid,
    argMinState(first_gbraid, (first_gbraid = '', occurred_at, occurred_ms, event_id)) AS click_gbraid,
    argMinState(first_wbraid, (first_wbraid = '', occurred_at, occurred_ms, event_id)) AS click_wbraid
FROM browser_events
WHERE toYYYYMM(occurred_at) = 202501
GROUP BY source_id, acquisition_id, event_month, workspace_id, app_id
HAVING max(first_gclid != '' OR first_gbraid != '' OR first_wbraid != '') = 1;

INSERT INTO acquisition_clicks (source_id, acquisition_id, event_month, workspace_id, app_id, click_gclid, click_gbraid, click_wbraid)
SELECT
    source_id,
    acquisition_id,
    toStartOfMonth(occurred_at) AS event_month,
    workspace_id,
    app_id,
    argMinState(first_gclid, (first_gclid = '', occurred_at, occurred_ms, event_id)) AS click_gclid,
    argMinState(first_gbraid, (first_gbraid = '', occurred_at, occurred_ms, event_id)) AS click_gbraid,
    argMinState(first_wbraid, (first_wbraid = '', occurred_at, occurred_ms, event_id)) AS click_wbraid
FROM browser_events
WHERE toYYYYMM(occurred_at) = 202501 AND workspace_id = 'ws' AND cityHash64(workspace_id, app_id, source_id, acquisition_id) % 3 = 1
GROUP BY source_id, acquisition_id, event_month, workspace_id, app_id
HAVING max(first_gclid != '' OR first_gbraid != '' OR first_wbraid != '') = 1;
