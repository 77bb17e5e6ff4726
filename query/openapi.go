package query

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/query/openapi"
)

// registerOpenAPI serves the API description without a key: it describes the API and holds no
// workspace data. Like every API response it is not cached (no-store, docs/API.md), so a deploy is
// seen at once; a client that keeps its own copy can still ask with If-None-Match (ETag).
func registerOpenAPI(r gin.IRouter) {
	r.GET(openapi.Path, serveOpenAPI)
}

func serveOpenAPI(c *gin.Context) {
	body, err := openapi.JSON()
	if err != nil {
		writeError(c, err)
		return
	}
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:8]) + `"`
	c.Header("Cache-Control", "no-store")
	c.Header("ETag", etag)
	if c.GetHeader("If-None-Match") == etag {
		c.Status(http.StatusNotModified)
		return
	}
	c.Data(http.StatusOK, "application/json; charset=utf-8", body)
}
