package httpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"
)

// guard applies cfg's body limit and per-path write deadlines to each request before h sees it.
//
// Body limit: a declared Content-Length over the limit is answered 413 at once, unread. A body of
// unknown length (chunked) is read here, up to the limit, so that every handler sees a body known to
// fit and answers with its own errors only; memory per request stays below the limit either way.
//
// ReadTimeout needs no help here: net/http lifts the read deadline once the body is read (its
// background read starts without one), so ReadTimeout bounds the request, not the handler.
// TestReadTimeoutDoesNotCancelASlowHandler keeps that true.
func guard(h http.Handler, cfg Config) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		if d, ok := cfg.LongWrites[r.URL.Path]; ok {
			// Errors mean a writer without deadlines (a test recorder): nothing to extend.
			_ = rc.SetWriteDeadline(time.Now().Add(d))
		}
		// A declared length within the limit needs nothing more: net/http never reads past it.
		switch {
		case r.ContentLength > cfg.MaxBodyBytes:
			w.Header().Set("Connection", "close")
			writeError(w, http.StatusRequestEntityTooLarge, "payload_too_large", tooLargeMessage(cfg.MaxBodyBytes))
			return
		case r.ContentLength < 0 && r.Body != nil && r.Body != http.NoBody:
			body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, cfg.MaxBodyBytes))
			if err != nil {
				bodyError(w, err, cfg.MaxBodyBytes)
				return
			}
			r.Body, r.ContentLength, r.TransferEncoding = io.NopCloser(bytes.NewReader(body)), int64(len(body)), nil
		}
		h.ServeHTTP(w, r)
	})
}

func bodyError(w http.ResponseWriter, err error, limit int64) {
	w.Header().Set("Connection", "close")
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		writeError(w, http.StatusRequestEntityTooLarge, "payload_too_large", tooLargeMessage(limit))
	case errors.Is(err, os.ErrDeadlineExceeded):
		writeError(w, http.StatusRequestTimeout, "request_timeout", "the request body was not received in time")
	default:
		writeError(w, http.StatusBadRequest, "invalid_body", "the request body could not be read")
	}
}

func tooLargeMessage(limit int64) string {
	return fmt.Sprintf("request body is too large: at most %d bytes", limit)
}

// writeError answers like every edge answers its errors: JSON {error, message}, never cached.
func writeError(w http.ResponseWriter, status int, code, msg string) {
	b, _ := json.Marshal(map[string]string{"error": code, "message": msg})
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
