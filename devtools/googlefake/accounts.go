package googlefake

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/revtrack/revtrack/uploader/google"
)

// customer finds a configured customer by ID.
func (f *Fake) customer(id string) (Customer, bool) {
	for _, c := range f.cfg.Customers {
		if c.ID == id {
			return c, true
		}
	}
	return Customer{}, false
}

// reachedViaManager reports whether id is the client of a configured manager, which makes it
// reachable only through that manager.
func (f *Fake) reachedViaManager(id string) bool {
	for _, c := range f.cfg.Customers {
		if c.Manager && slices.Contains(c.Clients, id) {
			return true
		}
	}
	return false
}

// directlyAccessible are the customers listAccessibleCustomers returns, in configuration order.
func (f *Fake) directlyAccessible() []string {
	var ids []string
	for _, c := range f.cfg.Customers {
		if !f.reachedViaManager(c.ID) {
			ids = append(ids, c.ID)
		}
	}
	return ids
}

// canServe reports whether the user may act on customerID when logged in as loginID ("" = the
// customer itself): the login must be directly accessible and be the customer or its manager.
func (f *Fake) canServe(customerID, loginID string) bool {
	if loginID == "" {
		loginID = customerID
	}
	if !slices.Contains(f.directlyAccessible(), loginID) {
		return false
	}
	if loginID == customerID {
		_, ok := f.customer(customerID)
		return ok
	}
	login, _ := f.customer(loginID)
	if !login.Manager || !slices.Contains(login.Clients, customerID) {
		return false
	}
	_, ok := f.customer(customerID)
	return ok
}

// checkDestinations is the optional account check of events:ingest (Config.CheckDestinations).
func (f *Fake) checkDestinations(dests []wireDestination) (int, []fieldViolation) {
	for i, d := range dests {
		p := fmt.Sprintf("destinations[%d]", i)
		login := ""
		if d.LoginAccount != nil {
			login = d.LoginAccount.AccountID
		}
		if !f.canServe(d.OperatingAccount.AccountID, login) {
			field := p + ".operating_account.account_id"
			if login != "" {
				field = p + ".login_account.account_id"
			}
			return http.StatusForbidden, []fieldViolation{{Field: field, Reason: "PERMISSION_DENIED",
				Description: "The caller does not have permission to access the operating account through the login account."}}
		}
		c, _ := f.customer(d.OperatingAccount.AccountID)
		idx := slices.IndexFunc(c.Actions, func(a google.ConversionAction) bool { return a.ID == d.ProductDestinationID })
		switch {
		case idx < 0 || c.Actions[idx].Status == "REMOVED":
			return http.StatusBadRequest, []fieldViolation{{Field: p + ".product_destination_id", Reason: "INVALID_CONVERSION_ACTION_ID",
				Description: "The conversion action does not exist in the operating account."}}
		case c.Actions[idx].Type != "UPLOAD_CLICKS":
			return http.StatusBadRequest, []fieldViolation{{Field: p + ".product_destination_id", Reason: "INVALID_CONVERSION_ACTION_TYPE",
				Description: "The conversion action type does not accept click conversions."}}
		}
	}
	return 0, nil
}
