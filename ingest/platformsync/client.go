// Package platformsync pulls an app's records from the platform's Partner API (GraphQL) and
// produces them to the platform-records topic, keeping per-stream cursors in sync_cursors and one
// sync_runs row per run.
package platformsync

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// DefaultBaseURL is the real Partner API host.
const DefaultBaseURL = "https://partners.shopify.com"

// Client calls POST {BaseURL}/{OrgID}/api/{Version}/graphql.json.
type Client struct {
	BaseURL string // default DefaultBaseURL
	OrgID   string
	Token   string // sent as X-Shopify-Access-Token
	Version string // e.g. "2025-07"; "unstable" also selects processingFee
	HTTP    *http.Client
	// MaxAttempts bounds tries of one request on 429/5xx/transport errors (default 6).
	MaxAttempts int
	// Backoff is the first wait (default 500ms), doubled per attempt up to MaxBackoff (default 30s),
	// with full jitter; a Retry-After header, when present, is honoured instead.
	Backoff, MaxBackoff time.Duration
	// PageSize is `first` (default 100).
	PageSize int
	// Log receives upstream error details for the operator (nil: slog.Default()).
	Log *slog.Logger
}

// logUpstream records an upstream detail for the operator, bounded; it never reaches a run's error.
func (c *Client) logUpstream(what, detail string) {
	l := c.Log
	if l == nil {
		l = slog.Default()
	}
	l.Warn("partner api: "+what, "org", c.OrgID, "detail", clip300(detail))
}

// HTTPError is a non-2xx answer after retries (or a non-retryable one). Its message is ours, by
// status class: the body of an upstream answer never reaches a run's stored error, which workspace
// members read (an answer is only as trustworthy as the server that gave it).
type HTTPError struct {
	Status int
}

func (e *HTTPError) Error() string {
	var why string
	switch {
	case e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden:
		why = "the access token was refused: check the organization ID and the token's permissions"
	case e.Status == http.StatusNotFound:
		why = "not found: check the organization ID"
	case e.Status == http.StatusTooManyRequests:
		why = "throttled: retried until the attempts ran out"
	case e.Status >= 500:
		why = "the partner API failed: retried until the attempts ran out"
	case e.Status >= 300 && e.Status < 400:
		why = "unexpected redirect (not followed)"
	default:
		why = "unexpected answer"
	}
	return fmt.Sprintf("partner api: HTTP %d: %s", e.Status, why)
}

// GraphQLError is a response whose `errors` is non-empty, or a response without the data asked
// for. Codes keeps the error codes the API gave (extensions.code) when they are known ones;
// upstream messages are logged for the operator, never stored.
type GraphQLError struct {
	Codes []string
	// Ours is set for errors revtrack words itself (a missing field), never for upstream text.
	Ours string
}

// knownGraphQLCodes are the partner API's documented error codes, the only upstream words a
// stored error may carry.
var knownGraphQLCodes = map[string]bool{"ACCESS_DENIED": true, "THROTTLED": true, "NOT_FOUND": true,
	"INTERNAL_SERVER_ERROR": true, "BAD_USER_INPUT": true, "MAX_COST_EXCEEDED": true, "GRAPHQL_VALIDATION_FAILED": true,
	"GRAPHQL_PARSE_FAILED": true, "UNAUTHENTICATED": true}

func (e *GraphQLError) Error() string {
	if e.Ours != "" {
		return "partner api: graphql: " + e.Ours
	}
	if len(e.Codes) == 0 {
		return "partner api: graphql: the API answered with an error (details in the server log)"
	}
	return "partner api: graphql: the API answered with an error: " + strings.Join(e.Codes, ", ")
}

// clip bounds an upstream value quoted in one of our messages (an ID, an amount, a type name).
func clip(s string) string {
	const n = 64
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, s)
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func (c *Client) endpoint() string {
	base := c.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	return strings.TrimRight(base, "/") + "/" + c.OrgID + "/api/" + c.Version + "/graphql.json"
}

func (c *Client) pageSize() int {
	if c.PageSize > 0 {
		return c.PageSize
	}
	return 100
}

// hasProcessingFee reports whether the version's schema exposes processingFee (only unstable does).
func (c *Client) hasProcessingFee() bool { return c.Version == "unstable" }

// Do runs one GraphQL operation and decodes `data` into out, retrying throttling and server errors.
func (c *Client) Do(ctx context.Context, query string, vars map[string]any, out any) error {
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		return err
	}
	attempts := c.MaxAttempts
	if attempts <= 0 {
		attempts = 6
	}
	wait, maxWait := c.Backoff, c.MaxBackoff
	if wait <= 0 {
		wait = 500 * time.Millisecond
	}
	if maxWait < wait {
		maxWait = max(30*time.Second, wait)
	}
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 60 * time.Second}
	}
	var lastErr error
	for attempt := 1; ; attempt++ {
		retryAfter, err := c.once(ctx, hc, body, out)
		if err == nil {
			return nil
		}
		lastErr = err
		var he *HTTPError
		retryable := errors.As(err, &he) && (he.Status == http.StatusTooManyRequests || he.Status >= 500) ||
			!errors.As(err, &he) && !isGraphQL(err) && ctx.Err() == nil && !isDecode(err)
		if !retryable || attempt >= attempts {
			return lastErr
		}
		d := time.Duration(rand.Int64N(int64(wait)) + 1) // full jitter
		if retryAfter > 0 {
			d = retryAfter
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %v)", ctx.Err(), lastErr)
		case <-time.After(d):
		}
		wait = min(wait*2, maxWait)
	}
}

type decodeError struct{ error }

func isGraphQL(err error) bool { var g *GraphQLError; return errors.As(err, &g) }
func isDecode(err error) bool  { var d decodeError; return errors.As(err, &d) }

func (c *Client) once(ctx context.Context, hc *http.Client, body []byte, out any) (time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint(), bytes.NewReader(body))
	if err != nil {
		return 0, decodeError{err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-Shopify-Access-Token", c.Token)
	resp, err := hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("partner api: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return 0, fmt.Errorf("partner api: read body: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return parseRetryAfter(resp.Header.Get("Retry-After")), &HTTPError{Status: resp.StatusCode}
	}
	var env struct {
		Data   json.RawMessage `json:"data"`
		Errors []struct {
			Message    string `json:"message"`
			Extensions struct {
				Code string `json:"code"`
			} `json:"extensions"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		c.logUpstream("undecodable response", err.Error())
		return 0, decodeError{errors.New("partner api: the response is not the expected JSON")}
	}
	if len(env.Errors) > 0 {
		g := &GraphQLError{}
		for _, e := range env.Errors {
			if code := strings.ToUpper(e.Extensions.Code); knownGraphQLCodes[code] && !slices.Contains(g.Codes, code) {
				g.Codes = append(g.Codes, code)
			}
			c.logUpstream("graphql error", e.Message)
		}
		return 0, g
	}
	if len(env.Data) == 0 || string(env.Data) == "null" {
		return 0, &GraphQLError{Ours: "response has no data"}
	}
	if err := json.Unmarshal(env.Data, out); err != nil {
		c.logUpstream("undecodable data", err.Error())
		return 0, decodeError{errors.New("partner api: the response data is not the expected shape")}
	}
	return 0, nil
}

func parseRetryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

// MoneyNode is the API's Money.
type MoneyNode struct {
	Amount       string `json:"amount"`
	CurrencyCode string `json:"currencyCode"`
}

// ShopNode is the API's Shop.
type ShopNode struct {
	ID              string `json:"id"`
	MyshopifyDomain string `json:"myshopifyDomain"`
	Name            string `json:"name"`
}

// TransactionNode is one app transaction as selected by TransactionsQuery.
type TransactionNode struct {
	Typename  string    `json:"__typename"`
	ID        string    `json:"id"`
	CreatedAt time.Time `json:"createdAt"`
	ChargeID  *string   `json:"chargeId"`
	App       *struct {
		ID string `json:"id"`
	} `json:"app"`
	Shop            *ShopNode  `json:"shop"`
	GrossAmount     *MoneyNode `json:"grossAmount"`
	ShopifyFee      *MoneyNode `json:"shopifyFee"`
	ProcessingFee   *MoneyNode `json:"processingFee"`
	NetAmount       *MoneyNode `json:"netAmount"`
	BillingInterval *string    `json:"billingInterval"`
}

// ChargeNode is an event's charge or appCredit.
type ChargeNode struct {
	Typename  string     `json:"__typename"`
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	Amount    *MoneyNode `json:"amount"`
	Test      bool       `json:"test"`
	BillingOn *time.Time `json:"billingOn"`
}

// EventNode is one app event as selected by EventsQuery.
type EventNode struct {
	Typename    string      `json:"__typename"`
	Type        string      `json:"type"`
	OccurredAt  time.Time   `json:"occurredAt"`
	Shop        *ShopNode   `json:"shop"`
	Charge      *ChargeNode `json:"charge"`
	AppCredit   *ChargeNode `json:"appCredit"`
	Reason      *string     `json:"reason"`
	Description *string     `json:"description"`
}

// Page is one page of a connection; Cursor is the last edge's cursor ("" when no edges).
type Page[T any] struct {
	Nodes       []T
	Cursors     []string
	HasNextPage bool
}

// Cursor returns the last edge's cursor.
func (p Page[T]) Cursor() string {
	if len(p.Cursors) == 0 {
		return ""
	}
	return p.Cursors[len(p.Cursors)-1]
}

type connection[T any] struct {
	Edges []struct {
		Cursor string `json:"cursor"`
		Node   T      `json:"node"`
	} `json:"edges"`
	PageInfo struct {
		HasNextPage bool `json:"hasNextPage"`
	} `json:"pageInfo"`
}

func (c connection[T]) page() Page[T] {
	p := Page[T]{HasNextPage: c.PageInfo.HasNextPage}
	for _, e := range c.Edges {
		p.Nodes = append(p.Nodes, e.Node)
		p.Cursors = append(p.Cursors, e.Cursor)
	}
	return p
}

const moneyFields = `{ amount currencyCode }`

// TransactionsQuery selects the five app transaction types. processingFee exists only on
// versions that expose it (asking for it elsewhere is a validation error).
func TransactionsQuery(withProcessingFee bool) string {
	fee := ""
	if withProcessingFee {
		fee = " processingFee " + moneyFields
	}
	common := `grossAmount ` + moneyFields + ` shopifyFee ` + moneyFields + ` netAmount ` + moneyFields + fee +
		` chargeId shop { id myshopifyDomain name } app { id }`
	return `query Transactions($appId: ID, $createdAtMin: DateTime, $createdAtMax: DateTime, $first: Int, $after: String) {
  transactions(appId: $appId, createdAtMin: $createdAtMin, createdAtMax: $createdAtMax, first: $first, after: $after) {
    edges { cursor node { __typename id createdAt
      ... on AppSubscriptionSale { ` + common + ` billingInterval }
      ... on AppUsageSale { ` + common + ` }
      ... on AppOneTimeSale { ` + common + ` }
      ... on AppSaleAdjustment { ` + common + ` }
      ... on AppSaleCredit { ` + common + ` }
    } }
    pageInfo { hasNextPage }
  }
}`
}

// EventsQuery selects app events with the payload of each event type.
const EventsQuery = `query AppEvents($appId: ID!, $occurredAtMin: DateTime, $occurredAtMax: DateTime, $first: Int, $after: String) {
  app(id: $appId) {
    events(occurredAtMin: $occurredAtMin, occurredAtMax: $occurredAtMax, first: $first, after: $after) {
      edges { cursor node { __typename type occurredAt shop { id myshopifyDomain name }
        ... on AppSubscriptionEvent { charge { __typename id name test amount ` + moneyFields + ` billingOn } }
        ... on AppPurchaseOneTimeEvent { charge { __typename id name test amount ` + moneyFields + ` } }
        ... on AppUsageRecordEvent { charge { __typename id name test amount ` + moneyFields + ` } }
        ... on AppCreditEvent { appCredit { __typename id name test amount ` + moneyFields + ` } }
        ... on RelationshipUninstalled { reason description }
      } }
      pageInfo { hasNextPage }
    }
  }
}`

func timeVar(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

func strVar(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// Transactions returns one page of the app's transactions in [min, max] (both inclusive; zero
// means unbounded) after the cursor. first <= 0 means PageSize.
func (c *Client) Transactions(ctx context.Context, appID string, min, max time.Time, first int, after string) (Page[TransactionNode], error) {
	if first <= 0 {
		first = c.pageSize()
	}
	var out struct {
		Transactions *connection[TransactionNode] `json:"transactions"`
	}
	vars := map[string]any{"appId": appID, "createdAtMin": timeVar(min), "createdAtMax": timeVar(max), "first": first, "after": strVar(after)}
	if err := c.Do(ctx, TransactionsQuery(c.hasProcessingFee()), vars, &out); err != nil {
		return Page[TransactionNode]{}, err
	}
	if out.Transactions == nil {
		return Page[TransactionNode]{}, &GraphQLError{Ours: "transactions is null"}
	}
	return out.Transactions.page(), nil
}

// Events returns one page of the app's events in [min, max] after the cursor.
func (c *Client) Events(ctx context.Context, appID string, min, max time.Time, first int, after string) (Page[EventNode], error) {
	if first <= 0 {
		first = c.pageSize()
	}
	var out struct {
		App *struct {
			Events *connection[EventNode] `json:"events"`
		} `json:"app"`
	}
	vars := map[string]any{"appId": appID, "occurredAtMin": timeVar(min), "occurredAtMax": timeVar(max), "first": first, "after": strVar(after)}
	if err := c.Do(ctx, EventsQuery, vars, &out); err != nil {
		return Page[EventNode]{}, err
	}
	if out.App == nil || out.App.Events == nil {
		return Page[EventNode]{}, &GraphQLError{Ours: "app " + clip(appID) + " not found or has no events"}
	}
	return out.App.Events.page(), nil
}

func clip300(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
