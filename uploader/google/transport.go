package google

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"golang.org/x/oauth2"
)

// maxResponseBytes bounds what is read of any Google response.
const maxResponseBytes = 8 << 20

// caller performs one authenticated JSON call.
type caller struct{ hc *http.Client }

func newCaller(hc *http.Client) caller {
	if hc == nil {
		hc = &http.Client{Timeout: defaultTimeout}
	}
	return caller{hc: hc}
}

// do sends body (nil for none) with a bearer token from ts and decodes a 2xx answer into out. A
// non-2xx answer is returned as *APIError; a token failure as the token source's error (with
// ErrInvalidGrant in the chain when Google refused the refresh token).
func (c caller) do(ctx context.Context, ts oauth2.TokenSource, method, url string, header http.Header, body []byte, out any) error {
	if ts == nil {
		return errors.New("google api: nil token source")
	}
	tok, err := ts.Token()
	if err != nil {
		return fmt.Errorf("google api: access token: %w", tokenError(err))
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return fmt.Errorf("google api: %w", err)
	}
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	tok.SetAuthHeader(req)
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("google api: %s %s: %w", method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return fmt.Errorf("google api: read %s response: %w", req.URL.Path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return parseAPIError(resp, data)
	}
	if out == nil || len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("google api: decode %s response: %w", req.URL.Path, err)
	}
	return nil
}
