package reporting

// ---- The customer list's search (customers.go): SQL of q, the shop domain or name search. ----

// searchMatch is q's test: a case-insensitive substring of the shop domain or of the shop name.
// position() is used rather than LIKE so that q needs no escaping (% and _ are plain characters).
// Arguments: q, q.
const searchMatch = `(positionCaseInsensitiveUTF8(shop_domain, ?) > 0 OR positionCaseInsensitiveUTF8(shop_name, ?) > 0)`

// selectSearchPageIDs is selectCustomerPageIDs among the rows that match q. A row is any version of
// a customer, so an ID found here may belong to a customer whose latest version no longer matches:
// the FINAL read of the page filters again on the latest version (whereSearch, andSearch).
// Arguments: workspace, cursor, apps, q, q, limit.
const selectSearchPageIDs = `SELECT public_id FROM reporting_customers
WHERE workspace_id = ? AND public_id > ? AND app_id IN ? AND ` + searchMatch + `
ORDER BY public_id
LIMIT ?`

// Conditions on customersFinal's latest rows: q alone (customerScope all), or after whereIncluded
// or whereExcluded.
const (
	whereSearch = `
WHERE ` + searchMatch
	andSearch = `
    AND ` + searchMatch
)
