package cli_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestEveryRouteBoundsItsBody: `revtrack all` answers an oversized body on the MCP and admin routes
// with 413 and the JSON error before any handler reads it (with a valid read key too), whether the
// length is declared or the body is chunked; a normal MCP request still goes through.
func TestEveryRouteBoundsItsBody(t *testing.T) {
	e := startAll(t)
	big := bytes.Repeat([]byte(" "), 2<<20)
	for _, c := range []struct {
		name, path, key string
		body            io.Reader
	}{
		{"mcp, declared length, read key", "/api/mcp", e.apiKey, bytes.NewReader(big)},
		{"mcp, chunked, read key", "/api/mcp", e.apiKey, io.MultiReader(bytes.NewReader(big))},
		{"admin, declared length, no key", "/api/admin/sources", "", bytes.NewReader(big)},
		{"admin, chunked, read key", "/api/admin/sources", e.apiKey, io.MultiReader(bytes.NewReader(big))},
	} {
		req, _ := http.NewRequest(http.MethodPost, e.base+c.path, c.body)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if c.key != "" {
			req.Header.Set("Authorization", "Bearer "+c.key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var body struct{ Error, Message string }
		_ = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge || body.Error != "payload_too_large" || !strings.Contains(body.Message, "1048576") {
			t.Errorf("%s: %d %+v", c.name, resp.StatusCode, body)
		}
	}

	req, _ := http.NewRequest(http.MethodPost, e.base+"/api/mcp", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+e.apiKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"serverInfo"`) {
		t.Fatalf("a normal MCP request: %d %s", resp.StatusCode, b)
	}
}
