-- A copy of the charge facts (0027) whose text fields and arrays are one text, which the summary,
-- the focused metrics and the timeline read instead of reporting_charge_facts_fine
-- (docs/REPORTING_PERFORMANCE.md, "Charge facts as text"). Every report decides a charge's state
-- on its dates from the state events, the customer's uninstalls and the payments; done in
-- ClickHouse, that was a dozen lambdas per row (arrayFilter, arrayReduce, arrayMap with toString to
-- send the arrays as text, which the driver decodes faster than arrays), about half of the
-- summary's largest read. Here the view writes them as text once, when the row lands, and Go
-- searches them: on the bench data the read fell from 60–83 ms to 38–65 ms on its own. One text
-- rather than six strings, because the driver's cost per string (a length, an allocation) was
-- most of the Go time the read cost.
--
-- facts_text is currency|state events|customer uninstalls|payments|payment currencies|charge ID:
-- numbers comma-separated, in the order of the arrays; the payment currencies '' when every payment
-- is in the charge's currency (nearly always), else each payment's; the charge ID last, so that it
-- may hold any character. A full copy (no filter), with the source's sorting key, version and
-- granularity of 1,024 rows (0029), so FINAL over it keeps exactly the rows it keeps over the
-- source. `revtrack migrate` fills it on a database with history.
CREATE TABLE IF NOT EXISTS reporting_charge_facts_text (
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
) ENGINE = ReplacingMergeTree(version)
ORDER BY (workspace_id, app_id, retired, public_id, charge_id)
SETTINGS index_granularity = 1024;

CREATE MATERIALIZED VIEW IF NOT EXISTS reporting_charge_facts_text_mv TO reporting_charge_facts_text AS
SELECT workspace_id, app_id, retired, public_id, charge_id, live, amount_cents, currency, annual, frozen, trial_days,
    accepted, activated, ended, states_derived,
    concat(currency, '|', arrayStringConcat(arrayMap(k -> toString(k), state_events), ','),
        '|', arrayStringConcat(arrayMap(t -> toString(t), customer_uninstalls), ','),
        '|', arrayStringConcat(arrayMap(t -> toString(t), payments), ','),
        '|', if(arrayAll(c -> c = currency, payment_currencies), '', arrayStringConcat(payment_currencies, ',')),
        '|', charge_id) AS facts_text,
    version
FROM reporting_charge_facts;
