package controlplane

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// CustomerExclusion is a workspace's rule that keeps a shop out of its aggregate figures (its own
// development store, a partner's store). It is keyed by shop domain, because that is what a
// publisher knows; AppID "" applies to the shop in every app. A lifted rule stays as a row with
// Excluded false, so the history is kept.
//
// Readers apply the rules at query time: a customer (app, shop) is report-excluded when the latest
// row of (workspace, shop_domain, app_id) or of (workspace, shop_domain, empty app_id) has excluded = 1.
type CustomerExclusion struct {
	WorkspaceID string    `json:"workspaceId"`
	ShopDomain  string    `json:"shopDomain"`
	AppID       string    `json:"appId"`
	Excluded    bool      `json:"excluded"`
	Reason      string    `json:"reason"`
	UpdatedAt   time.Time `json:"updatedAt"`
}

// maxExclusionReason bounds the free-text reason.
const maxExclusionReason = 500

// hostnameRe is a lowercase DNS name with at least two labels.
var hostnameRe = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$`)

// NormalizeShopDomain lowercases a shop domain and drops a scheme, path or trailing dot pasted
// with it. The result must be the shop's permanent platform domain (shop_domain of its customer
// rows, e.g. alpha.myshopify.com): a custom storefront domain matches no customer.
func NormalizeShopDomain(d string) (string, error) {
	n := strings.ToLower(strings.TrimSpace(d))
	if i := strings.Index(n, "://"); i >= 0 {
		n = n[i+3:]
	}
	if i := strings.IndexAny(n, "/?#"); i >= 0 {
		n = n[:i]
	}
	n = strings.TrimSuffix(n, ".")
	if len(n) > 253 || !hostnameRe.MatchString(n) {
		return "", fmt.Errorf("%w: shop domain %q: want the shop's platform domain, e.g. alpha.myshopify.com", ErrInvalid, d)
	}
	return n, nil
}

// ExcludeCustomer keeps the shop out of the workspace's aggregate figures, for one selected app or
// (appID "") every app. Excluding again replaces the reason.
func (s *Store) ExcludeCustomer(ctx context.Context, actor, workspaceID, shopDomain, appID, reason string) (CustomerExclusion, error) {
	x, err := s.exclusionRule(ctx, workspaceID, shopDomain, appID, reason)
	if err != nil {
		return x, err
	}
	x.Excluded = true
	err = s.putExclusion(ctx, actor, "customer.exclude", &x)
	return x, err
}

// IncludeCustomer lifts an exclusion: the shop counts again from the next query. It fails with
// ErrNotFound when no exclusion of exactly that shop and app is in force; in particular an
// exclusion for every app cannot be lifted for one app only (lift it, then exclude the others).
func (s *Store) IncludeCustomer(ctx context.Context, actor, workspaceID, shopDomain, appID, reason string) (CustomerExclusion, error) {
	x, err := s.exclusionRule(ctx, workspaceID, shopDomain, appID, reason)
	if err != nil {
		return x, err
	}
	current, err := s.queryExclusions(ctx, selectExclusionsByDomain, workspaceID, x.ShopDomain)
	if err != nil {
		return x, err
	}
	in := func(app string) bool {
		return slices.ContainsFunc(current, func(c CustomerExclusion) bool { return c.AppID == app && c.Excluded })
	}
	if !in(x.AppID) {
		if x.AppID != "" && in("") {
			return x, fmt.Errorf("%w: %s is excluded in every app; lift that exclusion (no app) and exclude the other apps one by one",
				ErrNotFound, x.ShopDomain)
		}
		return x, fmt.Errorf("%w: no exclusion of %s%s is in force", ErrNotFound, x.ShopDomain, forApp(x.AppID))
	}
	err = s.putExclusion(ctx, actor, "customer.include", &x)
	return x, err
}

func forApp(appID string) string {
	if appID == "" {
		return " for every app"
	}
	return " for app " + appID
}

// CustomerExclusions lists the workspace's rules, latest state per shop and app, ordered by
// domain then app. Lifted rules are left out unless withLifted.
func (s *Store) CustomerExclusions(ctx context.Context, workspaceID string, withLifted bool) ([]CustomerExclusion, error) {
	all, err := s.queryExclusions(ctx, selectExclusions, workspaceID)
	if err != nil {
		return nil, err
	}
	out := make([]CustomerExclusion, 0, len(all))
	for _, x := range all {
		if x.Excluded || withLifted {
			out = append(out, x)
		}
	}
	return out, nil
}

// exclusionRule validates a request and returns the rule it names.
func (s *Store) exclusionRule(ctx context.Context, workspaceID, shopDomain, appID, reason string) (CustomerExclusion, error) {
	domain, err := NormalizeShopDomain(shopDomain)
	if err != nil {
		return CustomerExclusion{}, err
	}
	reason = strings.TrimSpace(reason)
	if len(reason) > maxExclusionReason {
		return CustomerExclusion{}, fmt.Errorf("%w: reason: at most %d bytes", ErrInvalid, maxExclusionReason)
	}
	w, err := s.Workspace(ctx, workspaceID)
	if err != nil {
		return CustomerExclusion{}, err
	}
	if appID != "" && !slices.Contains(w.SelectedAppIDs, appID) {
		return CustomerExclusion{}, fmt.Errorf("%w: app %q is not one of the workspace's selected apps (omit it to exclude the shop in every app)",
			ErrInvalid, appID)
	}
	return CustomerExclusion{WorkspaceID: w.ID, ShopDomain: domain, AppID: appID, Reason: reason}, nil
}

func (s *Store) putExclusion(ctx context.Context, actor, action string, x *CustomerExclusion) error {
	x.UpdatedAt = s.now().UTC().Truncate(time.Second)
	if err := s.insert(ctx, insertExclusion, []any{x.WorkspaceID, x.ShopDomain, x.AppID, boolByte(x.Excluded), x.Reason,
		x.UpdatedAt, s.version()}); err != nil {
		return fmt.Errorf("write customer exclusion: %w", err)
	}
	return s.Audit(ctx, AuditEntry{WorkspaceID: x.WorkspaceID, Actor: actor, Action: action, TargetType: "customer_exclusion",
		TargetID: x.ShopDomain, Details: map[string]string{"shopDomain": x.ShopDomain, "appId": x.AppID, "reason": x.Reason}})
}

func (s *Store) queryExclusions(ctx context.Context, q string, args ...any) ([]CustomerExclusion, error) {
	rows, err := s.ch.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("query customer exclusions: %w", err)
	}
	defer rows.Close()
	var out []CustomerExclusion
	for rows.Next() {
		var x CustomerExclusion
		var excluded uint8
		if err := rows.Scan(&x.WorkspaceID, &x.ShopDomain, &x.AppID, &excluded, &x.Reason, &x.UpdatedAt); err != nil {
			return nil, err
		}
		x.Excluded = excluded == 1
		out = append(out, x)
	}
	return out, rows.Err()
}
