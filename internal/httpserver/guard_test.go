package httpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorder is a handler that reads the whole body and remembers what it saw.
type recorder struct {
	mu      sync.Mutex
	calls   int
	body    []byte
	length  int64
	readErr error
	ctxErr  error
	sleep   time.Duration
}

func (h *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(r.Body)
	time.Sleep(h.sleep)
	h.mu.Lock()
	h.calls++
	h.body, h.length, h.readErr, h.ctxErr = b, r.ContentLength, err, r.Context().Err()
	h.mu.Unlock()
	if err != nil {
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	_, _ = w.Write([]byte("ok"))
}

func (h *recorder) seen() (calls int, body []byte, length int64, readErr, ctxErr error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.calls, h.body, h.length, h.readErr, h.ctxErr
}

// serve runs NewServer on a loopback port, as Serve does, and returns its address.
func serve(t *testing.T, h http.Handler, cfg Config) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(h, cfg)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

func errorBody(t *testing.T, resp *http.Response) (code string) {
	t.Helper()
	var body struct{ Error, Message string }
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Message == "" {
		t.Fatalf("%d: not the JSON error contract: %v %+v", resp.StatusCode, err, body)
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") || resp.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("error headers: %v", resp.Header)
	}
	return body.Error
}

func TestBodyOverTheLimitIsRefusedBeforeTheHandler(t *testing.T) {
	h := &recorder{}
	addr := serve(t, h, Config{MaxBodyBytes: 4096})
	big := bytes.Repeat([]byte("x"), 1<<20)

	// Declared length: refused from the headers, unread.
	resp, err := http.Post("http://"+addr+"/api/mcp", "application/json", bytes.NewReader(big))
	if err != nil {
		t.Fatal(err)
	}
	if code := errorBody(t, resp); resp.StatusCode != http.StatusRequestEntityTooLarge || code != "payload_too_large" {
		t.Fatalf("declared length: %d %s", resp.StatusCode, code)
	}
	resp.Body.Close()

	// Unknown length (chunked): read up to the limit, then refused.
	resp, err = http.Post("http://"+addr+"/api/admin/sources", "application/json", io.MultiReader(bytes.NewReader(big)))
	if err != nil {
		t.Fatal(err)
	}
	if code := errorBody(t, resp); resp.StatusCode != http.StatusRequestEntityTooLarge || code != "payload_too_large" {
		t.Fatalf("chunked: %d %s", resp.StatusCode, code)
	}
	resp.Body.Close()
	if calls, _, _, _, _ := h.seen(); calls != 0 {
		t.Fatalf("the handler saw %d oversized requests", calls)
	}
}

func TestBodyWithinTheLimitReachesTheHandler(t *testing.T) {
	h := &recorder{}
	addr := serve(t, h, Config{MaxBodyBytes: 4096})
	payload := bytes.Repeat([]byte("y"), 4096)
	for name, body := range map[string]io.Reader{"declared": bytes.NewReader(payload), "chunked": io.MultiReader(bytes.NewReader(payload))} {
		resp, err := http.Post("http://"+addr+"/api/mcp", "application/json", body)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		_, got, length, readErr, _ := h.seen()
		if resp.StatusCode != http.StatusOK || !bytes.Equal(got, payload) || length != int64(len(payload)) || readErr != nil {
			t.Fatalf("%s: %d, handler read %d bytes (Content-Length %d): %v", name, resp.StatusCode, len(got), length, readErr)
		}
	}
}

// slowBody sends a request whose body arrives one byte at a time, until the server stops taking it
// or the whole body is sent; it returns the server's answer, if one came.
func slowBody(t *testing.T, addr, framing string, size int) (*http.Response, bool) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "POST /v1/collect HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\n%s\r\n", framing)
	complete := true
	for i := 0; i < size; i++ {
		b := []byte("a")
		if framing == "Transfer-Encoding: chunked\r\n" {
			b = []byte("1\r\na\r\n")
		}
		if _, err := conn.Write(b); err != nil {
			complete = false
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return nil, complete
	}
	return resp, complete
}

func TestSlowBodyIsCutOff(t *testing.T) {
	cfg := Config{ReadHeaderTimeout: 100 * time.Millisecond, ReadTimeout: 300 * time.Millisecond}
	h := &recorder{}
	addr := serve(t, h, cfg)

	// Declared length: the handler's read fails at the deadline.
	slowBody(t, addr, "Content-Length: 200\r\n", 200)
	calls, got, _, readErr, _ := h.seen()
	if calls != 1 || !errors.Is(readErr, os.ErrDeadlineExceeded) || len(got) >= 200 {
		t.Fatalf("declared length: %d calls, %d bytes read, err %v; want the read cut off", calls, len(got), readErr)
	}

	// Unknown length: read by the guard, which answers 408 without calling the handler.
	resp, _ := slowBody(t, addr, "Transfer-Encoding: chunked\r\n", 200)
	if resp == nil {
		t.Fatal("chunked: no answer")
	}
	defer resp.Body.Close()
	if code := errorBody(t, resp); resp.StatusCode != http.StatusRequestTimeout || code != "request_timeout" {
		t.Fatalf("chunked: %d %s", resp.StatusCode, code)
	}
	if calls, _, _, _, _ := h.seen(); calls != 1 {
		t.Fatalf("the handler was called for the cut-off chunked body")
	}
}

// A handler slower than ReadTimeout keeps its context: the read deadline ends with the body.
func TestReadTimeoutDoesNotCancelASlowHandler(t *testing.T) {
	h := &recorder{sleep: 600 * time.Millisecond}
	addr := serve(t, h, Config{ReadHeaderTimeout: 100 * time.Millisecond, ReadTimeout: 200 * time.Millisecond})
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		req, _ := http.NewRequest(method, "http://"+addr+"/api/v1/summary", strings.NewReader("{}"))
		if method == http.MethodGet {
			req.Body, req.ContentLength = http.NoBody, 0
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		resp.Body.Close()
		if _, _, _, _, ctxErr := h.seen(); resp.StatusCode != http.StatusOK || ctxErr != nil {
			t.Fatalf("%s: %d, handler context: %v", method, resp.StatusCode, ctxErr)
		}
	}
}

func TestWriteTimeoutAndLongWrites(t *testing.T) {
	h := &recorder{sleep: 500 * time.Millisecond}
	addr := serve(t, h, Config{WriteTimeout: 150 * time.Millisecond, LongWrites: map[string]time.Duration{"/api/mcp": 10 * time.Second}})
	if resp, err := http.Get("http://" + addr + "/api/v1/summary"); err == nil {
		b, rerr := io.ReadAll(resp.Body)
		resp.Body.Close()
		if rerr == nil && string(b) == "ok" {
			t.Fatalf("an answer later than WriteTimeout was delivered: %d %q", resp.StatusCode, b)
		}
	}
	resp, err := http.Post("http://"+addr+"/api/mcp", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatalf("long-write path: %v", err)
	}
	defer resp.Body.Close()
	if b, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusOK || string(b) != "ok" {
		t.Fatalf("long-write path: %d %q", resp.StatusCode, b)
	}
}

func TestIdleConnectionIsClosed(t *testing.T) {
	addr := serve(t, &recorder{}, Config{IdleTimeout: 200 * time.Millisecond})
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprint(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	// Send nothing more: the server must close the connection (EOF), not the client's safety net.
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Fatalf("idle connection not closed by the server: %v", err)
	}
}

func TestEveryServerIsBounded(t *testing.T) {
	srv := NewServer(http.NotFoundHandler(), Config{})
	if srv.ReadHeaderTimeout <= 0 || srv.ReadTimeout <= 0 || srv.WriteTimeout <= 0 || srv.IdleTimeout <= 0 {
		t.Fatalf("unbounded server from a zero Config: %+v", srv)
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	bad := DefaultConfig()
	bad.ReadTimeout, bad.MaxBodyBytes = time.Second, 10
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "http-read-timeout") || !strings.Contains(err.Error(), "http-max-body-bytes") {
		t.Fatalf("validate: %v", err)
	}
}
