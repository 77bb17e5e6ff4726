// Package console serves the web console (docs/CONSOLE.md): the single-page app that `vite build`
// writes to console/dist, embedded in the binary so that one binary serves it. The query component
// mounts it at `/`; every API route keeps its path and answers as before.
//
// A fresh clone builds before the front end is: dist/ holds only a committed .gitkeep then, and `/`
// answers a short page saying to run `make build`.
package console

import (
	"bytes"
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/internal/httpserver/apierror"
)

//go:embed all:dist
var dist embed.FS

// Security headers of every console response (docs/SECURITY.md, issue 15's contract): no inline
// script or style, nothing framed, no referrer leaking a one-time link's path.
const csp = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// Register mounts the console on the engine's unrouted requests: it answers GET and HEAD of any
// path outside the APIs (/api/, /v1/) with a file of the build or, for a screen's path, index.html
// (the app routes itself); anything else stays a 404 not_found in the API's error shape.
func Register(engine *gin.Engine) {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // the embed pattern guarantees the folder
	}
	engine.NoRoute(Handler(sub))
}

// Handler serves the build in fsys (the contents of dist/).
func Handler(fsys fs.FS) gin.HandlerFunc {
	index, _ := fs.ReadFile(fsys, "index.html")
	if len(index) == 0 {
		index = notBuilt
	}
	return func(c *gin.Context) {
		p := c.Request.URL.Path
		m := c.Request.Method
		if (m != http.MethodGet && m != http.MethodHead) || isAPI(p) {
			apierror.Write(c, apierror.New(apierror.NotFound, "no endpoint "+m+" "+p))
			return
		}
		h := c.Writer.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		name := strings.TrimPrefix(path.Clean(p), "/")
		if name != "" && name != "index.html" {
			if b, err := fs.ReadFile(fsys, name); err == nil {
				// Vite names what it writes under assets/ by content hash: a changed file is a new name.
				if strings.HasPrefix(name, "assets/") {
					h.Set("Cache-Control", "public, max-age=31536000, immutable")
				} else {
					h.Set("Cache-Control", "no-cache")
				}
				http.ServeContent(c.Writer, c.Request, name, time.Time{}, bytes.NewReader(b))
				return
			}
			// A missing asset is a 404, not the app: a stale page must not run HTML as script.
			if strings.HasPrefix(name, "assets/") || path.Ext(name) != "" {
				apierror.Write(c, apierror.New(apierror.NotFound, "no file "+p))
				return
			}
		}
		h.Set("Cache-Control", "no-cache")
		c.Data(http.StatusOK, "text/html; charset=utf-8", index)
	}
}

func isAPI(p string) bool {
	return strings.HasPrefix(p, "/api/") || p == "/api" || strings.HasPrefix(p, "/v1/")
}

// notBuilt is `/` in a binary built before the front end (go build on a fresh clone).
var notBuilt = []byte(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>revtrack</title></head>
<body><main><h1>The console is not built</h1><p>This binary was built before the web console. Run <code>make build</code>
(it builds console/ with npm, then the binary, which embeds it) and start it again. The APIs under <code>/api/</code>
work as they are.</p></main></body></html>
`)
