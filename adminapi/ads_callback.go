package adminapi

import (
	"errors"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/controlplane/authn"
	"github.com/revtrack/revtrack/internal/httpserver/apierror"
	"github.com/revtrack/revtrack/uploader"
)

// The browser's leg of a connection the admin API started. The browser carries no key: the
// single-use begin link (from POST /ads/connection) binds the first browser that opens it to the
// flow with a cookie, and the callback and the confirmation of a replacement work only with that
// cookie. The setup checks again, at each step, that the key that started the flow is still valid
// and admin-scoped and that the workspace's subscription is active (docs/ADS_UPLOAD.md "Connection").

// flowCookie holds the flow's browser-binding nonce (only its digest is stored server-side).
const flowCookie = "revtrack_ads_oauth"

// googleErrorRe bounds what of Google's error parameter is echoed back: its codes are lower-case
// words joined by underscores.
var googleErrorRe = regexp.MustCompile(`^[a-z_]{1,64}$`)

// adsForbidden is a refusal of the flow's browser or starting key as this edge's error table knows
// it (403 forbidden), with the setup's reason as its message.
type adsForbidden struct{ reason string }

func (e adsForbidden) Error() string        { return e.reason }
func (e adsForbidden) Is(target error) bool { return target == authn.ErrForbiddenScope }

// flowError maps the setup's refusals of the browser's leg onto the error table.
func flowError(err error) error {
	var fe *uploader.ForbiddenError
	if errors.As(err, &fe) {
		return adsForbidden{reason: fe.Reason}
	}
	return err
}

// begin is the link POST /ads/connection answers: it binds this browser to the flow (the cookie)
// and sends it to Google's consent page.
func (h adsHandlers) begin(c *gin.Context) {
	c.Header("Referrer-Policy", "no-referrer")
	b, err := h.Setup.Begin(c.Request.Context(), c.Query("flow"))
	if err != nil {
		h.flowFailed(c, err)
		return
	}
	h.setFlowCookie(c, b.Binding, time.Until(b.ExpiresAt))
	c.Redirect(http.StatusFound, b.AuthURL)
}

// callback is where Google sends the browser after consent (uploader.OAuthCallbackPath). The
// state names the flow, the cookie proves this browser began it, and the PKCE verifier stored with
// the state is what the code is exchanged with. A browser gets a small page, a client asking for
// JSON gets JSON; either says connected, why not, or (202) that a replacement by another Google
// account waits for confirmation.
func (h adsHandlers) callback(c *gin.Context) {
	// The URL holds the authorization code: no page this one links to may see it.
	c.Header("Referrer-Policy", "no-referrer")
	state, code, gerr := c.Query("state"), c.Query("code"), c.Query("error")
	binding, _ := c.Cookie(flowCookie)
	ctx := c.Request.Context()
	var res uploader.CallbackResult
	var err error
	switch {
	case state == "":
		err = invalidParam("the state parameter is missing: start the connection again")
	case gerr != "":
		// Use the state up (when this browser owns it) so it cannot serve again; the outcome is
		// Google's refusal whatever it says.
		_, _ = h.Setup.BrowserCallback(ctx, state, "", binding)
		if !googleErrorRe.MatchString(gerr) {
			gerr = "error"
		}
		// Google's error (access_denied when the user declined) is the answer's code whatever it says.
		err = apierror.New(apierror.AccessDenied, "Google did not grant access ("+gerr+"): nothing was stored; start the connection again and allow every requested permission")
	default:
		res, err = h.Setup.BrowserCallback(ctx, state, code, binding)
	}
	switch {
	case err != nil:
		h.flowFailed(c, err)
	case res.Pending != nil:
		h.replacementPage(c, res.Pending)
	default:
		h.clearFlowCookie(c)
		conn := res.Connection
		if conn.GrantedScopes == nil {
			conn.GrantedScopes = []string{}
		}
		h.respondCallback(c, http.StatusOK, gin.H{"connection": conn, "next": callbackNext},
			callbackPage{Title: "Connected", Connected: true, Message: "The advertising account is connected as " + accountName(conn.GoogleAccountEmail, conn.GoogleAccountID) + ".", Next: callbackNext})
	}
}

const callbackNext = "Select the conversion account: PUT /api/admin/ads/connection/account {conversionCustomerId, loginCustomerId?} " +
	"or `revtrack admin ads select-account`."

// replacementPage answers a held replacement: 202 with the two accounts and what confirms it.
func (h adsHandlers) replacementPage(c *gin.Context, p *uploader.ReplacementPending) {
	base, _ := h.Setup.FlowLocation()
	confirmURL := base + uploader.OAuthConfirmPath
	// The cookie now also guards the confirmation: keep it as long as the held grant.
	binding, _ := c.Cookie(flowCookie)
	h.setFlowCookie(c, binding, time.Until(p.ExpiresAt))
	body := gin.H{"replacement": p, "confirmUrl": confirmURL, "csrfToken": p.CSRFToken,
		"next": "POST " + confirmURL + " {pending, csrfToken, decision: replace|keep} from this browser (its cookie), before " +
			p.ExpiresAt.Format(time.RFC3339)}
	page := callbackPage{Title: "Replace the connected Google account?", Replacement: &replacementForm{
		Current: accountName(p.CurrentAccount.Email, p.CurrentAccount.ID), New: accountName(p.NewAccount.Email, p.NewAccount.ID),
		ID: p.ID, CSRF: p.CSRFToken, Action: confirmURL, Expires: p.ExpiresAt.Format(time.RFC3339)}}
	h.respondCallback(c, http.StatusAccepted, body, page)
}

// confirmRequest settles a held replacement; a browser posts the page's form, a client JSON.
type confirmRequest struct {
	Pending   string `form:"pending" json:"pending"`
	CSRFToken string `form:"csrfToken" json:"csrfToken"`
	Decision  string `form:"decision" json:"decision"`
}

// confirm settles a replacement the callback held: "replace" stores the held grant of the new Google
// account, "keep" drops it. Only the browser holding the flow's cookie, with the page's CSRF token.
func (h adsHandlers) confirm(c *gin.Context) {
	c.Header("Referrer-Policy", "no-referrer")
	var req confirmRequest
	if err := c.ShouldBind(&req); err != nil || (req.Decision != "replace" && req.Decision != "keep") {
		h.flowFailed(c, invalidParam(`decision must be "replace" or "keep", with pending and csrfToken from the confirmation page`))
		return
	}
	binding, _ := c.Cookie(flowCookie)
	conn, err := h.Setup.ConfirmReplacement(c.Request.Context(), req.Pending, binding, req.CSRFToken, req.Decision == "replace")
	if err != nil {
		h.flowFailed(c, err)
		return
	}
	h.clearFlowCookie(c)
	if conn.GrantedScopes == nil {
		conn.GrantedScopes = []string{}
	}
	who := accountName(conn.GoogleAccountEmail, conn.GoogleAccountID)
	if req.Decision == "keep" {
		h.respondCallback(c, http.StatusOK, gin.H{"connection": conn, "replaced": false},
			callbackPage{Title: "Kept", Connected: true, Message: "Nothing was replaced: the advertising account stays connected as " + who + "."})
		return
	}
	h.respondCallback(c, http.StatusOK, gin.H{"connection": conn, "replaced": true, "next": callbackNext},
		callbackPage{Title: "Connected", Connected: true, Message: "The advertising account is now connected as " + who + ".", Next: callbackNext})
}

// flowFailed answers a failed step of the browser's leg with the error table's status and body.
func (h adsHandlers) flowFailed(c *gin.Context, err error) {
	status, body := errorBody(flowError(err))
	if status >= http.StatusInternalServerError {
		h.Log.Warn("ads OAuth flow failed", "path", c.FullPath(), "err", err)
	}
	h.respondCallback(c, status, body, callbackPage{Title: "Not connected", Message: body["message"].(string)})
}

// setFlowCookie gives the browser the flow's binding: HttpOnly (no script reads it), SameSite=Lax
// (sent on Google's top-level redirect back, not on cross-site posts), Secure unless the callback
// is on a loopback host (plain-HTTP local runs), limited to the flow's paths.
func (h adsHandlers) setFlowCookie(c *gin.Context, value string, maxAge time.Duration) {
	base, path := h.Setup.FlowLocation()
	http.SetCookie(c.Writer, &http.Cookie{Name: flowCookie, Value: value, Path: path, MaxAge: max(int(maxAge.Seconds()), 1),
		HttpOnly: true, Secure: !loopback(base), SameSite: http.SameSiteLaxMode})
}

func (h adsHandlers) clearFlowCookie(c *gin.Context) {
	base, path := h.Setup.FlowLocation()
	http.SetCookie(c.Writer, &http.Cookie{Name: flowCookie, Value: "", Path: path, MaxAge: -1, HttpOnly: true, Secure: !loopback(base),
		SameSite: http.SameSiteLaxMode})
}

// loopback reports whether rawURL's host is this machine (localhost or a loopback address).
func loopback(rawURL string) bool {
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// accountName is how a page names a Google account.
func accountName(email, id string) string {
	switch {
	case email != "":
		return email
	case id != "":
		return "the Google account " + id
	default:
		return "a Google account revtrack did not record (connected before accounts were recorded)"
	}
}
