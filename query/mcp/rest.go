package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/revtrack/revtrack/controlplane/authn"
)

// restClient calls the query edge's REST handlers in-process: an http.Request dispatched into the
// same handler chain as a network request, with the MCP caller's bearer header (and Cache-Control
// header, if any), marked as MCP's own (authn.ViaMCP), which is what lets a tracking private key
// through: the REST routes refuse that key from the network. Nothing is re-implemented or
// re-checked here: authentication, parameter rules, data access, the cost limits and every number
// are the REST API's, and its error replies become tool errors (errors.go).
type restClient struct{ h http.Handler }

type cacheControlKey struct{}

// withCacheControl keeps the MCP request's Cache-Control header for the REST calls its tools make:
// `Cache-Control: no-cache` on a tool call asks the REST handlers for responses computed from the
// data, as it does on a REST request, rather than kept ones.
func withCacheControl(ctx context.Context, h http.Header) context.Context {
	v := h.Values("Cache-Control")
	if len(v) == 0 {
		return ctx
	}
	return context.WithValue(ctx, cacheControlKey{}, strings.Join(v, ", "))
}

// restError is a non-2xx REST reply.
type restError struct {
	Status  int
	Code    string // the body's "error"
	Message string // the body's "message"
	Body    json.RawMessage
	// RetryAfter is the reply's Retry-After header (429, 503), "" without one.
	RetryAfter string
}

func (e *restError) Error() string {
	return fmt.Sprintf("REST %d %s: %s", e.Status, e.Code, e.Message)
}

// get answers GET path?q as the REST API would, returning the JSON body of a 2xx reply or a
// *restError.
func (c restClient) get(ctx context.Context, path string, q url.Values) (json.RawMessage, error) {
	u := &url.URL{Path: path, RawQuery: q.Encode()}
	req, err := http.NewRequestWithContext(authn.ViaMCP(ctx), http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("build request %s: %w", path, err)
	}
	if ci, ok := callerFrom(ctx); ok && ci.authorization != "" {
		req.Header.Set("Authorization", ci.authorization)
	}
	if cc, ok := ctx.Value(cacheControlKey{}).(string); ok {
		req.Header.Set("Cache-Control", cc)
	}
	req.Header.Set("Accept", "application/json")
	req.RemoteAddr = "in-process"
	w := &bufferedResponse{header: http.Header{}}
	c.h.ServeHTTP(w, req)
	if w.status == 0 {
		w.status = http.StatusOK
	}
	body := w.body.Bytes()
	if w.status >= 200 && w.status < 300 {
		if !json.Valid(body) {
			return nil, fmt.Errorf("REST %s answered %d with a body that is not JSON", path, w.status)
		}
		return body, nil
	}
	re := &restError{Status: w.status, Body: body, RetryAfter: w.header.Get("Retry-After")}
	var e struct {
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &e) == nil {
		re.Code, re.Message = e.Error, e.Message
	}
	return nil, re
}

// bufferedResponse is an http.ResponseWriter that keeps the reply in memory.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *bufferedResponse) Header() http.Header { return w.header }

func (w *bufferedResponse) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *bufferedResponse) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.body.Write(b)
}

// restCall is one GET of getAll.
type restCall struct {
	path string
	q    url.Values
}

// restConcurrency is how many in-process REST calls of one tool call run at once: enough to overlap
// the queries of a series, few enough not to crowd out other callers.
const restConcurrency = 4

// getAll runs calls concurrently and returns their bodies in order, or the first error.
func (c restClient) getAll(ctx context.Context, calls []restCall) ([]json.RawMessage, error) {
	bodies := make([]json.RawMessage, len(calls))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(restConcurrency)
	for i, call := range calls {
		g.Go(func() error {
			b, err := c.get(gctx, call.path, call.q)
			bodies[i] = b
			return err
		})
	}
	return bodies, g.Wait()
}
