package googlefake

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
)

const methodSearch = "google.ads.googleads.%s.services.GoogleAdsService.Search"

var versionRE = regexp.MustCompile(`^v[0-9]+$`)

func newAdsRequestID() string {
	return strings.ReplaceAll(newRequestID()[2:], "-", "")[:22]
}

type accessibleCustomersResponse struct {
	ResourceNames []string `json:"resourceNames"`
}

// listAccessibleCustomers is GET /v{N}/customers:listAccessibleCustomers: the customers the user
// reaches directly (clients of a configured manager are reached only through it).
func (f *Fake) listAccessibleCustomers(w http.ResponseWriter, r *http.Request) {
	version := r.PathValue("version")
	if !versionRE.MatchString(version) {
		http.NotFound(w, r)
		return
	}
	method := fmt.Sprintf("google.ads.googleads.%s.services.CustomerService.ListAccessibleCustomers", version)
	if !f.authenticateAds(w, r, version, method) {
		return
	}
	resp := accessibleCustomersResponse{ResourceNames: []string{}}
	for _, id := range f.directlyAccessible() {
		resp.ResourceNames = append(resp.ResourceNames, "customers/"+id)
	}
	writeJSON(w, http.StatusOK, resp)
}

type searchRequest struct {
	Query     string          `json:"query"`
	PageToken string          `json:"pageToken"`
	PageSize  json.RawMessage `json:"pageSize"`
}

type searchResponse struct {
	Results                  []map[string]any `json:"results,omitempty"`
	NextPageToken            string           `json:"nextPageToken,omitempty"`
	FieldMask                string           `json:"fieldMask"`
	QueryResourceConsumption string           `json:"queryResourceConsumption"`
}

// search is POST /v{N}/customers/{id}/googleAds:search with the GAQL stub (gaql.go).
func (f *Fake) search(w http.ResponseWriter, r *http.Request) {
	version := r.PathValue("version")
	if !versionRE.MatchString(version) {
		http.NotFound(w, r)
		return
	}
	if !f.authenticateAds(w, r, version, fmt.Sprintf(methodSearch, version)) {
		return
	}
	reqID := newAdsRequestID()
	adsErr := func(code int, category, value, message string) {
		text := "Request contains an invalid argument."
		if code == http.StatusForbidden {
			text = "The caller does not have permission"
		}
		writeEnvelope(w, code, text, newAdsFailure(version, category, value, message, reqID))
	}
	cid := r.PathValue("customer")
	if !tenDigits.MatchString(cid) {
		adsErr(http.StatusBadRequest, "requestError", "INVALID_CUSTOMER_ID", "Invalid customer ID '"+cid+"'.")
		return
	}
	login := r.Header.Get("login-customer-id")
	if login != "" && !tenDigits.MatchString(login) {
		adsErr(http.StatusBadRequest, "requestError", "INVALID_LOGIN_CUSTOMER_ID", "Invalid login customer ID '"+login+"'.")
		return
	}
	body, _ := readBody(r)
	var req searchRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeParseError(w, &parseError{message: "Invalid JSON payload received. " + err.Error()})
		return
	}
	if len(req.PageSize) > 0 && string(req.PageSize) != "null" {
		adsErr(http.StatusBadRequest, "requestError", "PAGE_SIZE_NOT_SUPPORTED", "Setting the page size is not supported. Search responses have a fixed page size of 10000 rows.")
		return
	}
	if !f.canServe(cid, login) {
		adsErr(http.StatusForbidden, "authorizationError", "USER_PERMISSION_DENIED",
			"User doesn't have permission to access customer. Note: If you're accessing a client customer, the manager's customer id must be set in the 'login-customer-id' header. See https://developers.google.com/google-ads/api/docs/concepts/call-structure#cid")
		return
	}
	q, err := parseGAQL(req.Query)
	if err != nil {
		adsErr(http.StatusBadRequest, "queryError", err.code, err.message)
		return
	}
	rows := q.run(f.rowsFor(q.resource, cid))
	offset := 0
	if req.PageToken != "" {
		offset, err = decodePageToken(req.PageToken, req.Query)
		if err != nil || offset > len(rows) {
			adsErr(http.StatusBadRequest, "requestError", "INVALID_PAGE_TOKEN", "Page token is invalid.")
			return
		}
	}
	end := min(offset+f.cfg.SearchPageSize, len(rows))
	resp := searchResponse{FieldMask: q.fieldMask(), QueryResourceConsumption: strconv.Itoa(10 * (end - offset + 1))}
	for _, row := range rows[offset:end] {
		resp.Results = append(resp.Results, q.render(row))
	}
	if end < len(rows) {
		resp.NextPageToken = encodePageToken(end, req.Query)
	}
	writeJSON(w, http.StatusOK, resp)
}

// Page tokens bind the offset to the query, as Google's do.
func encodePageToken(offset int, query string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(offset) + ":" + strconv.Itoa(len(query))))
}

func decodePageToken(tok, query string) (int, *gaqlError) {
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	bad := &gaqlError{code: "INVALID_PAGE_TOKEN", message: "Page token is invalid."}
	if err != nil {
		return 0, bad
	}
	off, qlen, ok := strings.Cut(string(raw), ":")
	n, err1 := strconv.Atoi(off)
	if !ok || err1 != nil || n < 0 || qlen != strconv.Itoa(len(query)) {
		return 0, bad
	}
	return n, nil
}

// rowsFor returns the rows of resource as seen from customer cid.
func (f *Fake) rowsFor(resource, cid string) []gaqlRow {
	c, _ := f.customer(cid)
	customerRow := func(x Customer, prefix string) gaqlRow {
		return gaqlRow{
			prefix + ".id":               int64Val(x.ID),
			prefix + ".descriptive_name": strVal(x.Name),
			prefix + ".manager":          boolVal(x.Manager),
			prefix + ".status":           enumVal("ENABLED"),
		}
	}
	var rows []gaqlRow
	switch resource {
	case "conversion_action":
		for _, a := range c.Actions {
			rows = append(rows, gaqlRow{
				"conversion_action.resource_name":  strVal("customers/" + cid + "/conversionActions/" + a.ID),
				"conversion_action.id":             int64Val(a.ID),
				"conversion_action.name":           strVal(a.Name),
				"conversion_action.status":         enumVal(a.Status),
				"conversion_action.type":           enumVal(a.Type),
				"conversion_action.category":       enumVal(a.Category),
				"conversion_action.owner_customer": strVal("customers/" + cid),
			})
		}
	case "customer_client":
		self := customerRow(c, "customer_client")
		self["customer_client.resource_name"] = strVal("customers/" + cid + "/customerClients/" + cid)
		self["customer_client.level"] = int64Val("0")
		self["customer_client.client_customer"] = strVal("customers/" + cid)
		rows = append(rows, self)
		if c.Manager {
			for _, id := range c.Clients {
				client, ok := f.customer(id)
				if !ok {
					client = Customer{ID: id}
				}
				row := customerRow(client, "customer_client")
				row["customer_client.resource_name"] = strVal("customers/" + cid + "/customerClients/" + id)
				row["customer_client.level"] = int64Val("1")
				row["customer_client.client_customer"] = strVal("customers/" + id)
				rows = append(rows, row)
			}
		}
	case "customer":
		row := customerRow(c, "customer")
		row["customer.resource_name"] = strVal("customers/" + cid)
		row["customer.conversion_tracking_setting.google_ads_conversion_customer"] = strVal("customers/" + cid)
		rows = append(rows, row)
	}
	return rows
}
