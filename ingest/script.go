package ingest

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"

	"github.com/andybalholm/brotli"
	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/ingest/tracker"
)

// tracker.js is served minified (tracker.Script, made at build time) and compressed once, at
// start-up, with brotli and gzip at their best levels: some 10 ms once, instead of work per request,
// and the smallest bytes for every page that loads the script (docs/TRACKING.md, "tracker.js").

// scriptVariant is one encoding of the script with its own strong ETag: RFC 9110 gives each
// content coding its own entity tag, so a cache never takes one encoding's bytes for another's.
type scriptVariant struct {
	encoding string // Content-Encoding; "" for identity
	body     []byte
	etag     string
	length   string
}

// scriptCacheControl: fresh for an hour, then served from the cache while one request in the
// background revalidates it (answered 304 without a body while it has not changed) for up to a week.
// The URL is not versioned (publishers paste it once), so a new script reaches a browser at its
// first page view after the hour, and a browser pays one small conditional request an hour at most.
const scriptCacheControl = "public, max-age=3600, stale-while-revalidate=604800"

var scriptVariants = buildScriptVariants(tracker.Script)

func buildScriptVariants(js []byte) map[string]scriptVariant {
	sum := sha256.Sum256(js)
	tag := hex.EncodeToString(sum[:12])
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	_, _ = zw.Write(js)
	_ = zw.Close()
	var br bytes.Buffer
	bw := brotli.NewWriterLevel(&br, brotli.BestCompression)
	_, _ = bw.Write(js)
	_ = bw.Close()
	v := func(enc string, b []byte, suffix string) scriptVariant {
		return scriptVariant{encoding: enc, body: b, etag: `"` + tag + suffix + `"`, length: strconv.Itoa(len(b))}
	}
	return map[string]scriptVariant{
		"br":   v("br", br.Bytes(), "-br"),
		"gzip": v("gzip", gz.Bytes(), "-gz"),
		"":     v("", js, ""),
	}
}

// acceptedCodings reads Accept-Encoding into coding → acceptable (q > 0). Malformed q-values count
// as acceptable, as a lenient reader should; "*" stands for any coding not named.
func acceptedCodings(header string) map[string]bool {
	out := map[string]bool{}
	for part := range strings.SplitSeq(header, ",") {
		name, params, _ := strings.Cut(part, ";")
		name = strings.ToLower(strings.TrimSpace(name))
		if name == "" {
			continue
		}
		ok := true
		for p := range strings.SplitSeq(params, ";") {
			k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
			if strings.EqualFold(k, "q") {
				if q, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && q <= 0 {
					ok = false
				}
			}
		}
		out[name] = ok
	}
	return out
}

// negotiateScript picks brotli, then gzip, then identity, as the request accepts them.
func negotiateScript(acceptEncoding string) scriptVariant {
	acc := acceptedCodings(acceptEncoding)
	for _, enc := range []string{"br", "gzip"} {
		if ok, named := acc[enc]; (named && ok) || (!named && acc["*"]) {
			return scriptVariants[enc]
		}
	}
	return scriptVariants[""]
}

// etagMatches applies If-None-Match: "*" or any listed tag equal to etag (weak comparison, as
// RFC 9110 asks for If-None-Match).
func etagMatches(header, etag string) bool {
	for t := range strings.SplitSeq(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == etag {
			return true
		}
	}
	return false
}

// serveTrackerJS serves the script's best encoding for the request, with open CORS since any page
// may load it. Range requests are not served (a 6 KB script gains nothing from them).
func serveTrackerJS(c *gin.Context) {
	v := negotiateScript(c.GetHeader("Accept-Encoding"))
	h := c.Writer.Header()
	h.Set("Content-Type", tracker.ContentType)
	h.Set("Cache-Control", scriptCacheControl)
	h.Set("Vary", "Accept-Encoding")
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Cross-Origin-Resource-Policy", "cross-origin")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("ETag", v.etag)
	if inm := c.GetHeader("If-None-Match"); inm != "" && etagMatches(inm, v.etag) {
		c.Status(http.StatusNotModified)
		return
	}
	if v.encoding != "" {
		h.Set("Content-Encoding", v.encoding)
	}
	h.Set("Content-Length", v.length)
	c.Status(http.StatusOK)
	if c.Request.Method != http.MethodHead {
		_, _ = c.Writer.Write(v.body)
	}
}
