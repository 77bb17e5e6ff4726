package httpserver

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/revtrack/revtrack/internal/httpserver/apierror"
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
			apierror.WriteHTTP(w, apierror.New(apierror.PayloadTooLarge, tooLargeMessage(cfg.MaxBodyBytes)))
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
		apierror.WriteHTTP(w, apierror.New(apierror.PayloadTooLarge, tooLargeMessage(limit)))
	case errors.Is(err, os.ErrDeadlineExceeded):
		apierror.WriteHTTP(w, apierror.New(apierror.RequestTimeout, "the request body was not received in time"))
	default:
		apierror.WriteHTTP(w, apierror.New(apierror.InvalidBody, "the request body could not be read"))
	}
}

func tooLargeMessage(limit int64) string {
	return fmt.Sprintf("request body is too large: at most %d bytes", limit)
}
