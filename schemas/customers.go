package schemas

import (
	"crypto/sha256"
	"encoding/hex"
)

// CustomerPublicID is the customer identifier the reporting API and MCP show: one per (app, shop)
// install relationship, stable across re-syncs, and opaque so that it reveals neither the shop nor
// the app. The platform's shop ID cannot serve, because a shop that installed two apps is two
// customers.
func CustomerPublicID(appID, shopID string) string {
	h := sha256.Sum256([]byte(appID + "\x1f" + shopID))
	return "cus_" + hex.EncodeToString(h[:10])
}
