package apierror

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"
)

// Write answers c with e and stops the handler chain. Error answers are never cached.
func Write(c *gin.Context, e *Error) {
	c.Header("Cache-Control", "no-store")
	c.AbortWithStatusJSON(e.Status(), e.Body())
}

// WriteHTTP is Write for a plain net/http handler (the server's guard, before any router).
func WriteHTTP(w http.ResponseWriter, e *Error) {
	b, _ := json.Marshal(e.Body())
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(e.Status())
	_, _ = w.Write(b)
}
