package google

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"golang.org/x/oauth2"
)

// GAQL queries of account discovery. The fake (devtools/googlefake) understands exactly these
// shapes.
const (
	gaqlConversionActions = "SELECT conversion_action.id, conversion_action.name, conversion_action.status, " +
		"conversion_action.type, conversion_action.category, conversion_action.owner_customer " +
		"FROM conversion_action " +
		"WHERE conversion_action.type = 'UPLOAD_CLICKS' AND conversion_action.status = 'ENABLED'"
	gaqlCustomerClients = "SELECT customer_client.id, customer_client.descriptive_name, customer_client.manager, " +
		"customer_client.level, customer_client.status " +
		"FROM customer_client WHERE customer_client.level <= 1"
)

// maxSearchPages stops a server that keeps answering with a page token.
const maxSearchPages = 1000

// Ads is a client of the two Google Ads API calls used for account discovery. No developer token
// is sent: Google retired it on 2026-09-09.
type Ads struct {
	base, version string
	c             caller
}

// NewAds: baseURL is the API host (https://googleads.googleapis.com or the fake), version "v26"
// (DefaultAdsAPIVersion when empty); hc nil means a client with a 30 s timeout.
func NewAds(baseURL, version string, hc *http.Client) *Ads {
	if version == "" {
		version = DefaultAdsAPIVersion
	}
	return &Ads{base: strings.TrimRight(baseURL, "/"), version: version, c: newCaller(hc)}
}

// ConversionAction is one conversion action. ID is the int64 ID as Google's decimal string: the
// Data Manager productDestinationId.
type ConversionAction struct {
	ID, Name, Status, Type, Category string
	// OwnerCustomerID is the 10-digit customer owning the action (empty if not returned).
	OwnerCustomerID string
}

// CustomerClient is one account below (or equal to, Level 0) a manager account.
type CustomerClient struct {
	ID, Name string
	Manager  bool
	Level    int64
	Status   string
}

// AccessibleCustomers returns the 10-digit IDs of the customers the user can access directly (from
// "customers/<id>"). Clients reached only through a manager are not listed: see CustomerClients.
func (a *Ads) AccessibleCustomers(ctx context.Context, ts oauth2.TokenSource) ([]string, error) {
	var wire struct {
		ResourceNames []string `json:"resourceNames"`
	}
	if err := a.c.do(ctx, ts, http.MethodGet, a.url("customers:listAccessibleCustomers"), nil, nil, &wire); err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(wire.ResourceNames))
	for _, rn := range wire.ResourceNames {
		ids = append(ids, strings.TrimPrefix(rn, "customers/"))
	}
	return ids, nil
}

// ConversionActions runs the GAQL query for ENABLED UPLOAD_CLICKS actions of customerID (all
// pages), sending login-customer-id when loginCustomerID != "". IDs may be written with hyphens.
func (a *Ads) ConversionActions(ctx context.Context, ts oauth2.TokenSource, customerID, loginCustomerID string) ([]ConversionAction, error) {
	type row struct {
		ConversionAction struct {
			ID            string `json:"id"`
			Name          string `json:"name"`
			Status        string `json:"status"`
			Type          string `json:"type"`
			Category      string `json:"category"`
			OwnerCustomer string `json:"ownerCustomer"`
		} `json:"conversionAction"`
	}
	var out []ConversionAction
	err := a.search(ctx, ts, customerID, loginCustomerID, gaqlConversionActions, func(raw json.RawMessage) error {
		var r row
		if err := json.Unmarshal(raw, &r); err != nil {
			return err
		}
		ca := r.ConversionAction
		out = append(out, ConversionAction{ID: ca.ID, Name: ca.Name, Status: ca.Status, Type: ca.Type, Category: ca.Category,
			OwnerCustomerID: strings.TrimPrefix(ca.OwnerCustomer, "customers/")})
		return nil
	})
	return out, err
}

// CustomerClients lists the accounts directly below managerID (level 1) and the manager itself
// (level 0), querying as the manager.
func (a *Ads) CustomerClients(ctx context.Context, ts oauth2.TokenSource, managerID string) ([]CustomerClient, error) {
	type row struct {
		CustomerClient struct {
			ID              string      `json:"id"`
			DescriptiveName string      `json:"descriptiveName"`
			Manager         bool        `json:"manager"`
			Level           int64String `json:"level"`
			Status          string      `json:"status"`
		} `json:"customerClient"`
	}
	var out []CustomerClient
	err := a.search(ctx, ts, managerID, managerID, gaqlCustomerClients, func(raw json.RawMessage) error {
		var r row
		if err := json.Unmarshal(raw, &r); err != nil {
			return err
		}
		c := r.CustomerClient
		out = append(out, CustomerClient{ID: c.ID, Name: c.DescriptiveName, Manager: c.Manager, Level: int64(c.Level), Status: c.Status})
		return nil
	})
	return out, err
}

// search runs a GAQL query through every page (pageToken until nextPageToken is absent). pageSize
// is never sent: Google rejects it.
func (a *Ads) search(ctx context.Context, ts oauth2.TokenSource, customerID, loginCustomerID, query string, each func(json.RawMessage) error) error {
	cid, err := NormalizeCustomerID(customerID)
	if err != nil {
		return err
	}
	header := http.Header{}
	if loginCustomerID != "" {
		login, err := NormalizeCustomerID(loginCustomerID)
		if err != nil {
			return fmt.Errorf("google ads: login customer: %w", err)
		}
		header.Set("login-customer-id", login)
	}
	token := ""
	for page := 0; page < maxSearchPages; page++ {
		reqBody := struct {
			Query     string `json:"query"`
			PageToken string `json:"pageToken,omitempty"`
		}{query, token}
		body, err := json.Marshal(reqBody)
		if err != nil {
			return err
		}
		var wire struct {
			Results       []json.RawMessage `json:"results"`
			NextPageToken string            `json:"nextPageToken"`
		}
		if err := a.c.do(ctx, ts, http.MethodPost, a.url("customers/"+cid+"/googleAds:search"), header, body, &wire); err != nil {
			return err
		}
		for _, r := range wire.Results {
			if err := each(r); err != nil {
				return fmt.Errorf("google ads: decode search row: %w", err)
			}
		}
		if wire.NextPageToken == "" {
			return nil
		}
		token = wire.NextPageToken
	}
	return fmt.Errorf("google ads: search of customer %s returned more than %d pages", cid, maxSearchPages)
}

func (a *Ads) url(path string) string { return a.base + "/" + a.version + "/" + path }

// NormalizeCustomerID strips the hyphens of "123-456-7890" and checks that 10 digits remain.
func NormalizeCustomerID(id string) (string, error) {
	s := strings.ReplaceAll(strings.TrimSpace(id), "-", "")
	if len(s) != 10 {
		return "", fmt.Errorf("google ads: customer ID %q is not 10 digits", id)
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return "", fmt.Errorf("google ads: customer ID %q is not 10 digits", id)
		}
	}
	return s, nil
}
