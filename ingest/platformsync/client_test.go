package platformsync

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

func TestParseMinor(t *testing.T) {
	for _, c := range []struct {
		in, cur string
		want    int64
		ok      bool
	}{
		{"9.99", "USD", 999, true}, {"10.0", "USD", 1000, true}, {"-0.5", "EUR", -50, true},
		{"1500", "JPY", 1500, true}, {"1.5", "JPY", 0, false}, {"1.234", "BHD", 1234, true},
		{"0.001", "USD", 0, false}, {"1e3", "USD", 0, false}, {"", "USD", 0, false}, {"12.30", "GBX", 1230, true},
	} {
		got, err := ParseMinor(c.in, c.cur)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseMinor(%q, %s) = %d, %v", c.in, c.cur, got, err)
		}
	}
}

// A 429 with Retry-After is retried after that many seconds; GraphQL errors are not retried.
func TestClientRetryAfterAndGraphQLErrors(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Shopify-Access-Token") != "tok" || r.URL.Path != "/42/api/2025-07/graphql.json" {
			http.Error(w, "bad request", 400)
			return
		}
		switch calls.Add(1) {
		case 1:
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(429)
			_, _ = w.Write([]byte(`{"errors":[{"message":"Too many requests","extensions":{"code":"429"}}]}`))
		case 2:
			_, _ = w.Write([]byte(`{"data":{"transactions":{"edges":[{"cursor":"c1","node":{"__typename":"AppUsageSale","id":"t1","createdAt":"2025-01-02T03:04:05Z"}}],"pageInfo":{"hasNextPage":false}}}}`))
		default:
			_, _ = w.Write([]byte(`{"errors":[{"message":"Field 'x' doesn't exist"}]}`))
		}
	}))
	defer srv.Close()
	c := &Client{BaseURL: srv.URL, OrgID: "42", Token: "tok", Version: "2025-07", Backoff: time.Millisecond}
	start := time.Now()
	p, err := c.Transactions(context.Background(), "app", time.Time{}, time.Time{}, 0, "")
	if err != nil || len(p.Nodes) != 1 || p.Cursor() != "c1" {
		t.Fatalf("page %+v, err %v", p, err)
	}
	if time.Since(start) < time.Second {
		t.Errorf("Retry-After not honoured: %v", time.Since(start))
	}
	_, err = c.Transactions(context.Background(), "app", time.Time{}, time.Time{}, 0, "")
	var g *GraphQLError
	if !errors.As(err, &g) || calls.Load() != 3 {
		t.Errorf("err %v after %d calls: want a GraphQLError, not retried", err, calls.Load())
	}
}
