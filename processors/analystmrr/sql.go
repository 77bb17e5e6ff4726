package analystmrr

// Statements of the job over the tables of migration 0022 (ClickHouse 18.16 and current).

const (
	insertSpans = `INSERT INTO customer_mrr_spans (workspace_id, app_id, generation, public_id, customer_id, shop_domain, currency,
from_date, to_date, mrr_cents, subscription_mrr_cents, usage_mrr_cents, paying, excluded, computed_at)`
	insertMovements = `INSERT INTO customer_mrr_movements (workspace_id, app_id, generation, public_id, customer_id, shop_domain, currency,
date, kind, movement_cents, subscription_mrr_before_cents, subscription_mrr_after_cents, excluded, computed_at)`
	insertGeneration = `INSERT INTO customer_mrr_generations (workspace_id, app_id, generation, computed_at, through_date, inputs_version,
customers, spans, movements)`

	// selectGenerations is the current (greatest) generation of every (workspace, app), as the views
	// choose it, with what it was computed from.
	selectGenerations = `SELECT workspace_id, app_id, max(generation), argMax(inputs_version, generation), toUInt32(argMax(through_date, generation))
FROM customer_mrr_generations
GROUP BY workspace_id, app_id`

	// deleteHead … deleteTail delete superseded generations: one condition per (workspace, app),
	// `(workspace_id = ? AND app_id = ? AND generation < ?)` joined by OR. Mutations run in the
	// background on both engines; the views never read a superseded generation, so a late delete
	// only costs space.
	deleteSpansHead     = `ALTER TABLE customer_mrr_spans DELETE WHERE `
	deleteMovementsHead = `ALTER TABLE customer_mrr_movements DELETE WHERE `
	deleteCondition     = `(workspace_id = ? AND app_id = ? AND generation < ?)`
	deleteOr            = ` OR `
)
