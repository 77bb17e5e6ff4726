package ingest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/ingest/tracker"
)

var (
	scriptETag    = func() string { s := sha256.Sum256(tracker.Script); return `"` + hex.EncodeToString(s[:8]) + `"` }()
	scriptModTime = time.Now()
)

// serveTrackerJS serves the script with a short shared cache (an edit reaches browsers within the
// hour; the ETag makes revalidation cheap) and open CORS, since any page may load it.
func serveTrackerJS(c *gin.Context) {
	h := c.Writer.Header()
	h.Set("Content-Type", "application/javascript; charset=utf-8")
	h.Set("Cache-Control", "public, max-age=3600")
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Cross-Origin-Resource-Policy", "cross-origin")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("ETag", scriptETag)
	http.ServeContent(c.Writer, c.Request, "tracker.js", scriptModTime, bytes.NewReader(tracker.Script))
}
