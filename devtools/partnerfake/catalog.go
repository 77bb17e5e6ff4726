package partnerfake

// Fixed word lists and catalogues the generator draws from. They only make the data look real; no
// metric depends on their content.

var defaultAppNames = []string{
	"Upsell Wizard", "Review Stars", "Bundle Builder", "Loyalty Loop", "Shipping Genie",
	"Stock Alerts", "Gift Wrapper", "Size Charts", "Pre-order Pro", "Label Printer",
}

// firstAppNumber matches the demo workspace's apps (gid://partners/App/1001 is "Upsell Wizard").
const firstAppNumber = 1001

var shopAdjectives = []string{
	"sunny", "urban", "little", "golden", "green", "happy", "north", "wild", "blue", "rustic",
	"modern", "cozy", "bright", "silver", "velvet", "coastal", "humble", "noble", "lucky", "quiet",
}

var shopNouns = []string{
	"boutique", "threads", "goods", "market", "supply", "studio", "outfitters", "pantry", "gear",
	"candles", "ceramics", "coffee", "tea", "pets", "books", "jewelry", "prints", "toys", "garden", "skincare",
}

// Plan names per tier; "Free" is the zero-value plan, "Pay as you go" the usage-only plan.
var planNames = [3]string{"Basic", "Pro", "Plus"}

const (
	freePlanName      = "Free"
	usageOnlyPlanName = "Pay as you go"
)

var oneTimeNames = [3]string{"Setup service", "Data migration", "Theme integration"}

var creditNames = []string{"Downgrade proration", "Goodwill credit", "Service outage credit"}

// Uninstall reasons are a comma-separated list in the API; descriptions are merchant free text and
// often empty (null).
var uninstallReasons = []string{
	"Not using it", "Too expensive", "Doesn't work as advertised", "Found a better app",
	"Temporary install", "Store closed", "Other",
}

var uninstallDescriptions = []string{
	"", "", "", "too pricey for a small store", "missing a feature we need", "closing the shop",
	"switching platform", "just testing",
}

// usageUnits names the metered unit of each app's usage records ("120 orders synced").
var usageUnits = []string{"upsell orders", "review requests", "bundles sold", "loyalty points", "labels"}
