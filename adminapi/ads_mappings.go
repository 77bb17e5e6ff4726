package adminapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/controlplane"
	"github.com/revtrack/revtrack/controlplane/authn"
	"github.com/revtrack/revtrack/uploader"
)

// bindStrict decodes a JSON body refusing unknown fields: a misspelt field of a mapping (or a
// field that never changes, like a mapping's source) must not be silently ignored.
func bindStrict(c *gin.Context, v any) error {
	body, err := io.ReadAll(io.LimitReader(c.Request.Body, 1<<20))
	if err != nil {
		return invalidBody("request body could not be read")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		msg := "request body is not valid JSON for this operation: " + err.Error()
		if strings.Contains(err.Error(), `unknown field "sourceId"`) || strings.Contains(err.Error(), `unknown field "milestone"`) {
			// A field of the mapping that cannot be changed, not a misspelt one.
			return invalidParam(msg + "; the tracking source and milestone of a mapping never change: create another mapping")
		}
		return invalidBody(msg)
	}
	return nil
}

func (h adsHandlers) listMappings(c *gin.Context) {
	ms, err := h.Setup.ListMappings(c.Request.Context(), authn.From(c).Workspace.ID)
	if err != nil {
		h.fail(c, err)
		return
	}
	if ms == nil {
		ms = []controlplane.AdMapping{}
	}
	c.JSON(http.StatusOK, gin.H{"mappings": ms})
}

// createMapping adds an enabled mapping (Validation only on unless the body turns it off). It
// uploads no past event.
func (h adsHandlers) createMapping(c *gin.Context) {
	var in uploader.MappingInput
	if err := bindStrict(c, &in); err != nil {
		h.fail(c, err)
		return
	}
	caller := authn.From(c)
	m, err := h.Setup.CreateMapping(c.Request.Context(), caller.Actor(), caller.Workspace.ID, in)
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, gin.H{"mapping": m})
}

func (h adsHandlers) getMapping(c *gin.Context) {
	m, err := h.Setup.GetMapping(c.Request.Context(), authn.From(c).Workspace.ID, c.Param("id"))
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"mapping": m})
}

// mappingPatch is a PATCH body: the mapping's editable fields, enabled, and Validation only.
type mappingPatch struct {
	uploader.MappingUpdate
	// ValidationOnly turns Validation only on or off. Turning it off replays nothing: only events
	// queued afterwards upload live.
	ValidationOnly *bool `json:"validationOnly,omitempty"`
}

func (p mappingPatch) updatesFields() bool {
	u := p.MappingUpdate
	return u.ConversionActionID != nil || u.ConversionActionName != nil || u.FixedValueCents != nil || u.FixedCurrency != nil ||
		u.ClearFixedValue || u.ConsentConfirmed != nil || u.Enabled != nil
}

// patchMapping edits a mapping. The field changes (action, fixed value, consent, enabled) are one
// audited change and Validation only another, so that the audit log shows a validation-mode change
// as such; when both are sent the fields go first, and a refusal of them leaves Validation only
// untouched.
func (h adsHandlers) patchMapping(c *gin.Context) {
	var p mappingPatch
	if err := bindStrict(c, &p); err != nil {
		h.fail(c, err)
		return
	}
	caller := authn.From(c)
	ctx, id := c.Request.Context(), c.Param("id")
	var m controlplane.AdMapping
	var err error
	if p.updatesFields() {
		if m, err = h.Setup.UpdateMapping(ctx, caller.Actor(), caller.Workspace.ID, id, p.MappingUpdate); err != nil {
			h.fail(c, err)
			return
		}
	}
	switch {
	case p.ValidationOnly != nil:
		m, err = h.Setup.SetValidationOnly(ctx, caller.Actor(), caller.Workspace.ID, id, *p.ValidationOnly)
	case !p.updatesFields():
		err = invalidParam("nothing to change: send conversionActionId, conversionActionName, fixedValueCents " +
			"with fixedCurrency, clearFixedValue, consentConfirmed, enabled or validationOnly")
	}
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"mapping": m})
}
