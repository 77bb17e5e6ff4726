CREATE TABLE IF NOT EXISTS revtrack.reporting_charge_facts_text_local ON CLUSTER revtrack (
    workspace_id   String,
    app_id         String,
    retired        UInt32,
    public_id      String,
    charge_id      String,
    live           UInt8,
    amount_cents   Int64,
    currency       String,
    annual         UInt8,
    frozen         UInt8,
    trial_days     UInt16,
    accepted       UInt32,
    activated      UInt32,
    ended          UInt32,
    states_derived UInt8,
    facts_text     String,
    version        UInt64
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/revtrack/reporting_charge_facts_text_local', '{replica}', version)
ORDER BY (workspace_id, app_id, retired, public_id, charge_id)
SETTINGS index_granularity = 1024;

CREATE TABLE IF NOT EXISTS revtrack.reporting_charge_facts_text ON CLUSTER revtrack AS revtrack.reporting_charge_facts_text_local
ENGINE = Distributed(revtrack, revtrack, reporting_charge_facts_text_local, cityHash64(public_id));

CREATE MATERIALIZED VIEW IF NOT EXISTS revtrack.reporting_charge_facts_text_mv ON CLUSTER revtrack TO revtrack.reporting_charge_facts_text_local AS
SELECT workspace_id, app_id, retired, public_id, charge_id, live, amount_cents, currency, annual, frozen, trial_days,
    accepted, activated, ended, states_derived,
    concat(currency, '|', arrayStringConcat(arrayMap(k -> toString(k), state_events), ','),
        '|', arrayStringConcat(arrayMap(t -> toString(t), customer_uninstalls), ','),
        '|', arrayStringConcat(arrayMap(t -> toString(t), payments), ','),
        '|', if(arrayAll(c -> c = currency, payment_currencies), '', arrayStringConcat(payment_currencies, ',')),
        '|', charge_id) AS facts_text,
    version
FROM revtrack.reporting_charge_facts_local;
