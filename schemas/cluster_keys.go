package schemas

// Where each table lives on a ClickHouse cluster (deploy/README.md, "ClickHouse", derives them).
// A table is either sharded (a replicated <name>_local on every shard behind a Distributed table
// under its name, rows placed by the key below) or kept whole on every node (one replication
// group over the whole cluster, no Distributed table): the small control-plane tables that large
// ones are filtered or joined by, and the tables revtrack mutates with ALTER … DELETE or UPDATE,
// which a Distributed table does not accept.
//
// A sharding key names the unit that must stay on one shard. Every de-duplication of a replacing
// or aggregating table happens within a shard, so the key must be a function of every row's
// de-duplication key that no version of the row changes; and a materialized view, which runs on
// the node its source's rows land on, writes its target on the source's shard, so a view's target
// has the source's unit (TestClusterViewsKeepTheirShard checks each view).

// Sharding units.
const (
	// unitBrowser is one browser of a tracking source: its events, sessions, sessionizer state and
	// first touch. Every event of a browser carries its acquisition ID, a retried event included.
	unitBrowser = "browser"
	// unitServerEvent is one verified server event: its rows may name different acquisitions (the
	// identity join resolves a shop link later), never a different event ID.
	unitServerEvent = "server_event"
	// unitShop is one shop of an app: its acquisition links and first link.
	unitShop = "shop"
	// unitCustomer is one platform customer (app, customer ID), the public ID's inputs: every
	// platform row of a customer and every reporting copy of it.
	unitCustomer = "customer"
	// unitUploadRow is one upload-queue row, whose versions share its row ID.
	unitUploadRow = "upload_row"
	// unitWorkspace keeps a workspace's rows together.
	unitWorkspace = "workspace"
	// unitEverywhere is a table kept whole on every node.
	unitEverywhere = "everywhere"
)

// publicIDExpr is schemas.CustomerPublicID in SQL, as the reporting copies' views compute it.
const publicIDExpr = `concat('cus_', lower(hex(substring(SHA256(concat(app_id, '\x1f', customer_id)), 1, 10))))`

// ClusterPlacement says where one table's rows go.
type ClusterPlacement struct {
	Unit string
	// Key is the Distributed table's sharding key, an expression over the table's columns; empty
	// for a table kept on every node.
	Key string
}

func sharded(unit, key string) ClusterPlacement { return ClusterPlacement{Unit: unit, Key: key} }

var everywhere = ClusterPlacement{Unit: unitEverywhere}

var (
	byBrowser     = sharded(unitBrowser, "cityHash64(source_id, acquisition_id)")
	byServerEvent = sharded(unitServerEvent, "cityHash64(source_id, event_id)")
	byShop        = sharded(unitShop, "cityHash64(workspace_id, app_id, shop_domain)")
	// A table with the customer's IDs hashes the public ID computed from them; a copy that keeps
	// only the public ID hashes it: the same value, so both place a customer on the same shard.
	byCustomerIDs = sharded(unitCustomer, "cityHash64("+publicIDExpr+")")
	byPublicID    = sharded(unitCustomer, "cityHash64(public_id)")
	byUploadRow   = sharded(unitUploadRow, "cityHash64(row_id)")
	byWorkspace   = sharded(unitWorkspace, "cityHash64(workspace_id)")
)

// clusterPlacements has every table the migrations create. A migration that adds a table adds it
// here; cluster mode refuses a table it does not know.
var clusterPlacements = map[string]ClusterPlacement{
	// Bookkeeping: every node knows what was applied.
	migrationsTable: everywhere,

	// Control plane (0001, 0005, 0017, 0018, 0023): small, read on every request, joined to nothing
	// large; sealed_secrets and the connections are mutated by ALTER.
	"workspaces":          everywhere,
	"workspace_members":   everywhere,
	"apps":                everywhere,
	"api_keys":            everywhere,
	"tracking_sources":    everywhere,
	"audit_log":           byWorkspace,
	"sealed_secrets":      everywhere,
	"analyst_access":      everywhere,
	"users":               everywhere,
	"user_tokens":         everywhere,
	"partner_connections": everywhere,
	"ad_connections":      everywhere,
	"conversion_actions":  everywhere,
	"ad_mappings":         everywhere,
	"customer_exclusions": everywhere,
	"sync_runs":           everywhere,
	"sync_cursors":        everywhere,
	"copy_backfills":      everywhere,

	// Tracking (0002, 0006, 0007, 0015, 0025).
	"browser_events":      byBrowser,
	"sessions":            byBrowser,
	"session_state":       byBrowser,
	"acquisitions":        byBrowser,
	"acquisition_clicks":  byBrowser,
	"acquisition_touches": byBrowser,
	"server_events":       byServerEvent,
	"funnel_events":       byServerEvent,
	"acquisition_links":   byShop,
	"shop_attribution":    byShop,

	// Upload queue (0004, 0013): every version of a row on one shard.
	"upload_queue": byUploadRow,

	// Platform data (0003) and what is derived per customer from it (0011, 0012, 0014, 0020, 0024, 0026, 0027, 0028).
	"platform_customers":                      byCustomerIDs,
	"platform_charges":                        byCustomerIDs,
	"platform_lifecycle_events":               byCustomerIDs,
	"platform_transactions":                   byCustomerIDs,
	"platform_usage_charges":                  byCustomerIDs,
	"usage_events":                            byCustomerIDs,
	"platform_events_by_customer":             byCustomerIDs,
	"platform_subscription_sales_by_customer": byCustomerIDs,
	"reporting_observed_usage":                byCustomerIDs,
	"reporting_customers":                     byPublicID,
	"reporting_charges":                       byPublicID,
	"reporting_events":                        byPublicID,
	"reporting_transactions":                  byPublicID,
	"reporting_payments":                      byPublicID,
	"reporting_usage_transactions":            byPublicID,
	"reporting_usage_charges":                 byPublicID,
	"reporting_usage_events":                  byPublicID,
	"reporting_usage_sales":                   byPublicID,
	"reporting_charge_payments":               byPublicID,
	"reporting_customer_payments":             byPublicID,
	"reporting_charge_billing":                byPublicID,
	"reporting_customer_days":                 byPublicID,
	"reporting_observed_days":                 byPublicID,
	"reporting_charge_facts":                  byPublicID,
	"reporting_usage_days":                    byPublicID,
	"reporting_charge_facts_fine":             byPublicID,
	"reporting_charge_facts_text":             byPublicID,
	"reporting_observed_days_fine":            byPublicID,

	// Analyst MRR (0022): the job deletes older generations with ALTER … DELETE.
	"customer_mrr_generations": everywhere,
	"customer_mrr_spans":       everywhere,
	"customer_mrr_movements":   everywhere,
}
