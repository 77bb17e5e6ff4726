package adminapi

import (
	"html/template"
	"strings"

	"github.com/gin-gonic/gin"
)

// callbackPage is what a browser sees of the OAuth flow: connected, why not, or the confirmation of
// a replacement by another Google account.
type callbackPage struct {
	Title, Message, Next string
	// Console is the console's Ads screen on this service: the browser went there from it.
	Console     string
	Connected   bool
	Replacement *replacementForm
}

// replacementForm names the live and the new Google account and posts the decision with the held
// grant's ID and CSRF token (the flow's cookie goes along).
type replacementForm struct {
	Current, New, ID, CSRF, Action, Expires string
}

var callbackTemplate = template.Must(template.New("callback").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="robots" content="noindex"><title>revtrack: {{.Title}}</title></head>
<body><h1>{{.Title}}</h1>{{with .Replacement}}
<p>The workspace's advertising connection was made by <strong>{{.Current}}</strong>. You signed in to Google as <strong>{{.New}}</strong>.</p>
<p>Replacing it makes every upload use the new account's access; its mappings and conversion account stay. Nothing changes until you choose. This choice expires at {{.Expires}}.</p>
<form method="post" action="{{.Action}}"><input type="hidden" name="pending" value="{{.ID}}"><input type="hidden" name="csrfToken" value="{{.CSRF}}">
<button type="submit" name="decision" value="replace">Replace with {{.New}}</button>
<button type="submit" name="decision" value="keep">Keep {{.Current}}</button></form>
{{else}}<p>{{.Message}}</p>{{if .Next}}<p>{{.Next}}</p>{{end}}{{if .Console}}<p><a href="{{.Console}}">Back to the console</a></p>{{end}}<p>You can close this window.</p>{{end}}</body></html>
`))

// respondCallback writes JSON to a client that asks for it, the page otherwise.
func (h adsHandlers) respondCallback(c *gin.Context, status int, body gin.H, page callbackPage) {
	if c.NegotiateFormat(gin.MIMEHTML, gin.MIMEJSON) == gin.MIMEJSON {
		c.AbortWithStatusJSON(status, body)
		return
	}
	c.Header("Content-Type", "text/html; charset=utf-8")
	// The confirmation form posts to this service only; nothing else may load or run.
	c.Header("Content-Security-Policy", "default-src 'none'; form-action 'self'; frame-ancestors 'none'")
	c.Status(status)
	// The console started most flows (its Connect button): a link back to its Ads screen, on the
	// host the flow runs on (the service's base URL, which serves the console too), under the same
	// path prefix as the flow.
	_, cookiePath := h.Setup.FlowLocation()
	page.Console = strings.TrimSuffix(cookiePath, "api/admin/ads/oauth/") + "#/ads"
	if err := callbackTemplate.Execute(c.Writer, page); err != nil {
		h.Log.Warn("write ads OAuth page", "err", err)
	}
	c.Abort()
}
