package authn

import (
	"crypto/subtle"
	"net/http"

	"github.com/revtrack/revtrack/internal/httpserver/apierror"
)

// CSRFHeader carries the session's synchronizer token on every state-changing request.
const CSRFHeader = "X-CSRF-Token"

// Cross-site request forgery refusals (403 forbidden), each saying why.
var (
	ErrCSRFToken = apierror.New(apierror.Forbidden, "missing or wrong "+CSRFHeader+" header: send the csrfToken of GET /api/admin/session with every request that changes something")
	ErrOrigin    = apierror.New(apierror.Forbidden, "the request's Origin is not this console's: cross-site requests are refused")
)

// safeMethod: methods that change nothing, which a cross-site page may trigger harmlessly.
func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// CheckOrigin refuses a request whose browser-sent Origin is not the base URL's. A request without
// Origin (a non-browser client, or a same-origin GET) passes: the cookie's SameSite=Strict and the
// CSRF token are the other two locks.
func (s *Sessions) CheckOrigin(r *http.Request) error {
	if o := r.Header.Get("Origin"); o != "" && o != s.origin {
		return ErrOrigin
	}
	return nil
}

// CheckCSRF is the session's check of a request: a state-changing request must carry the
// session's token and, when the browser sent one, the console's Origin.
func (s *Sessions) CheckCSRF(r *http.Request, sess Session) error {
	if safeMethod(r.Method) {
		return nil
	}
	if err := s.CheckOrigin(r); err != nil {
		return err
	}
	got := r.Header.Get(CSRFHeader)
	if got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(sess.CSRFToken)) != 1 {
		return ErrCSRFToken
	}
	return nil
}
