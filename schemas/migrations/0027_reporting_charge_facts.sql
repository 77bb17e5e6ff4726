-- Each non-test subscription charge with what decides it on any date and its payments, kept when
-- its rows land (docs/REPORTING_PERFORMANCE.md, "Charge facts"). The summary read every charge of
-- reporting_charges with FINAL, then the payment evidence from reporting_charge_payments in two
-- more reads (the annual charges' year scanned by time). One row per charge here holds both: its
-- state events and customer uninstalls as the derivation stored them, and the instants and
-- currencies of its positive subscription sales (de-duplicated).
--
-- retired is the UTC day (days since the epoch) after which the charge can no longer be in effect
-- or be evidence for one in effect (ended for good, its last event and its customer's last uninstall
-- passed, and its payments out of every evidence window: 45 days, 395 for annual charges);
-- 4294967295 while that can still change. It is in the sorting key, so every version of a row has
-- the same one and a reader leaves long-retired charges out before FINAL. When a charge's retired
-- day changes, the row under the old day is replaced by a row with live = 0.
--
-- Like reporting_customer_days (0024) no materialized view fills it: the landing consumer
-- recomputes, after it writes a batch's charges, the rows of every customer the batch names, from
-- reporting_charges FINAL and reporting_customer_payments (schemas/charge_facts.go).
-- `revtrack migrate` fills it for a database with history (schemas/reportingbackfill).
CREATE TABLE IF NOT EXISTS reporting_charge_facts (
    workspace_id        String,
    app_id              String,
    retired             UInt32,
    public_id           String,
    charge_id           String,
    live                UInt8,
    amount_cents        Int64,
    currency            String,
    annual              UInt8,
    frozen              UInt8,
    trial_days          UInt16,
    accepted            UInt32,
    activated           UInt32,
    ended               UInt32,
    states_derived      UInt8,
    state_events        Array(UInt64),
    customer_uninstalls Array(UInt32),
    payments            Array(UInt32),
    payment_currencies  Array(String),
    version             UInt64
) ENGINE = ReplacingMergeTree(version)
ORDER BY (workspace_id, app_id, retired, public_id, charge_id);
