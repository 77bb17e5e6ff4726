package query

import (
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/controlplane/authn"
	"github.com/revtrack/revtrack/query/reporting"
)

// reportingRange reads from/to as parseRange does (default: the 30 days ending today) and refuses
// a range that ends after today: the reporting date cannot be in the future (docs/METRICS.md 1.2).
func reportingRange(c *gin.Context, now time.Time) (reporting.Range, error) {
	r, err := parseRange(c, now)
	if err != nil {
		return reporting.Range{}, err
	}
	from, err1 := reporting.ParseDate(r.From)
	to, err2 := reporting.ParseDate(r.To)
	if err1 != nil || err2 != nil {
		return reporting.Range{}, invalidParam("from and to must be dates YYYY-MM-DD")
	}
	if to.After(reporting.DateOf(now)) {
		return reporting.Range{}, invalidParam("to must not be after today (%s, UTC)", reporting.DateOf(now))
	}
	return reporting.Range{From: from, To: to}, nil
}

// coveredApps is the appId parameter against the caller's selected apps: every selected app when
// absent, else that one app, which must be selected.
func coveredApps(c *gin.Context) (reporting.Scope, string, error) {
	w := authn.From(c).Workspace
	sc := reporting.Scope{WorkspaceID: w.ID, AppIDs: w.SelectedAppIDs}
	id := c.Query("appId")
	if id == "" {
		return sc, "", nil
	}
	if !slices.Contains(w.SelectedAppIDs, id) {
		return sc, "", invalidParam("appId must be one of the workspace's selected apps")
	}
	sc.AppIDs = []string{id}
	return sc, id, nil
}

var currencyCode = regexp.MustCompile(`^[A-Za-z]{3}$`)

// currencyParam reads currency: three letters, upper-cased; "" for every currency.
func currencyParam(c *gin.Context) (string, error) {
	cur := c.Query("currency")
	if cur == "" {
		return "", nil
	}
	if !currencyCode.MatchString(cur) {
		return "", invalidParam("currency must be a three-letter currency code such as USD")
	}
	return strings.ToUpper(cur), nil
}

// customerScopeParam reads customerScope: included (default), excluded or all.
func customerScopeParam(c *gin.Context) (reporting.CustomerScope, error) {
	cs, err := reporting.ParseCustomerScope(c.Query("customerScope"))
	if err != nil {
		return "", invalidParam("customerScope must be one of included, excluded, all")
	}
	return cs, nil
}

// notApplied refuses a filter the endpoint does not apply (400) instead of ignoring it: a caller
// who asked for one currency, say, would otherwise take an unfiltered answer for a filtered one.
// why says what the endpoint does instead.
func notApplied(c *gin.Context, param, why string) error {
	if _, ok := c.GetQuery(param); ok {
		return invalidParam("%s does not apply here: %s", param, why)
	}
	return nil
}
