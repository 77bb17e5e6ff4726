package googlefake

import (
	"io"
	"net/http"

	"github.com/revtrack/revtrack/uploader/google"
)

const (
	scopeDataManager = google.ScopeDataManager
	scopeAdWords     = google.ScopeAdWords
)

func (f *Fake) routes() {
	f.mux.HandleFunc("GET /o/oauth2/v2/auth", f.authorize)
	f.mux.HandleFunc("POST /token", f.token)
	f.mux.HandleFunc("POST /revoke", f.revoke)
	f.mux.HandleFunc("POST /v1/events:ingest", f.ingest)
	f.mux.HandleFunc("GET /v1/requestStatus:retrieve", f.retrieve)
	f.mux.HandleFunc("GET /{version}/customers:listAccessibleCustomers", f.listAccessibleCustomers)
	f.mux.HandleFunc("POST /{version}/customers/{customer}/googleAds:search", f.search)
}

// readBody returns the body ServeHTTP already buffered.
func readBody(r *http.Request) ([]byte, error) { return io.ReadAll(r.Body) }
