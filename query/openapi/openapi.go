// Package openapi holds the OpenAPI 3 description of revtrack's HTTP API (reporting, tracking reads,
// ingestion and administration). openapi.yaml is the source that people edit; the query edge serves
// it as JSON at GET /api/v1/openapi.json. query/openapi_test.go keeps it true: the set of described
// routes equals the set of registered routes, and real responses validate against its schemas.
package openapi

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
)

// Path is where the query edge serves the description.
const Path = "/api/v1/openapi.json"

//go:embed openapi.yaml
var source []byte

// YAML returns the description as written.
func YAML() []byte { return source }

// Load parses the description into a fresh document, with every $ref resolved. Each call returns
// a new document, so a caller may change it (say, its servers) without affecting others.
func Load() (*openapi3.T, error) {
	doc, err := openapi3.NewLoader().LoadFromData(source)
	if err != nil {
		return nil, fmt.Errorf("openapi.yaml: %w", err)
	}
	return doc, nil
}

var jsonOnce = sync.OnceValues(func() ([]byte, error) {
	doc, err := Load()
	if err != nil {
		return nil, err
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("openapi.yaml is not a valid OpenAPI 3 description: %w", err)
	}
	return json.Marshal(doc)
})

// JSON returns the description as JSON, converted once. An error means openapi.yaml is broken,
// which the package's tests catch before release.
func JSON() ([]byte, error) { return jsonOnce() }
