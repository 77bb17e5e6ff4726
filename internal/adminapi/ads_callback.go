package adminapi

import (
	"errors"
	"html/template"
	"net/http"
	"regexp"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/internal/controlplane"
)

// errConsentDenied: Google sent the user back with an error (access_denied when they declined).
var errConsentDenied = errors.New("Google did not grant access")

// googleErrorRe bounds what of Google's error parameter is echoed back: its codes are lower-case
// words joined by underscores.
var googleErrorRe = regexp.MustCompile(`^[a-z_]{1,64}$`)

// callback is where Google sends the browser after consent (uploader.OAuthCallbackPath). It carries
// no key: the single-use state names the workspace and the user who started the connection, and
// the PKCE verifier stored with it is what the code is exchanged with. A browser gets a small page,
// a client asking for JSON gets JSON; either says connected or why not.
func (h adsHandlers) callback(c *gin.Context) {
	// The URL holds the authorization code: no page this one links to may see it.
	c.Header("Referrer-Policy", "no-referrer")
	state, code, gerr := c.Query("state"), c.Query("code"), c.Query("error")
	ctx := c.Request.Context()
	var conn controlplane.AdConnection
	var err error
	switch {
	case state == "":
		err = errors.Join(errBadRequest, errors.New("the state parameter is missing: start the connection again"))
	case gerr != "":
		// Take the state so it cannot be used again; the outcome is Google's refusal whatever it says.
		_, _ = h.Setup.Callback(ctx, state, "")
		if !googleErrorRe.MatchString(gerr) {
			gerr = "error"
		}
		err = errors.Join(errConsentDenied, errors.New("Google did not grant access ("+gerr+"): nothing was stored; start the connection again and allow every requested permission"))
	default:
		conn, err = h.Setup.Callback(ctx, state, code)
	}
	if err != nil {
		status, body := errorBody(err)
		if status >= http.StatusInternalServerError {
			h.Log.Warn("ads OAuth callback failed", "err", err)
		}
		h.respondCallback(c, status, body, callbackPage{Title: "Not connected", Message: body["message"].(string)})
		return
	}
	if conn.GrantedScopes == nil {
		conn.GrantedScopes = []string{}
	}
	h.respondCallback(c, http.StatusOK, gin.H{"connection": conn, "next": callbackNext},
		callbackPage{Title: "Connected", Connected: true, Message: "The advertising account is connected.", Next: callbackNext})
}

const callbackNext = "Select the conversion account: PUT /api/admin/ads/connection/account {conversionCustomerId, loginCustomerId?} " +
	"or `revtrack admin ads select-account`."

type callbackPage struct {
	Title, Message, Next string
	Connected            bool
}

var callbackTemplate = template.Must(template.New("callback").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="robots" content="noindex"><title>revtrack: {{.Title}}</title></head>
<body><h1>{{.Title}}</h1><p>{{.Message}}</p>{{if .Next}}<p>{{.Next}}</p>{{end}}<p>You can close this window.</p></body></html>
`))

// respondCallback writes JSON to a client that asks for it, the page otherwise.
func (h adsHandlers) respondCallback(c *gin.Context, status int, body gin.H, page callbackPage) {
	if c.NegotiateFormat(gin.MIMEHTML, gin.MIMEJSON) == gin.MIMEJSON {
		c.AbortWithStatusJSON(status, body)
		return
	}
	c.Header("Content-Type", "text/html; charset=utf-8")
	c.Header("Content-Security-Policy", "default-src 'none'")
	c.Status(status)
	if err := callbackTemplate.Execute(c.Writer, page); err != nil {
		h.Log.Warn("write ads OAuth callback page", "err", err)
	}
	c.Abort()
}
