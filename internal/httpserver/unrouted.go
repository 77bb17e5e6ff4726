package httpserver

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// Unrouted makes a request that matches no route answer like every edge answers its errors: JSON
// {error, message}, never cached, 405 with Allow when the path exists for other methods, else 404.
// Without it gin answers in plain text, which a client parsing the error contract cannot read.
func Unrouted(engine *gin.Engine) {
	engine.HandleMethodNotAllowed = true
	engine.NoRoute(func(c *gin.Context) {
		unrouted(c, http.StatusNotFound, "not_found", "no endpoint "+c.Request.Method+" "+c.Request.URL.Path)
	})
	engine.NoMethod(func(c *gin.Context) {
		unrouted(c, http.StatusMethodNotAllowed, "method_not_allowed", c.Request.Method+" is not allowed on "+c.Request.URL.Path)
	})
}

func unrouted(c *gin.Context, status int, code, msg string) {
	c.Header("Cache-Control", "no-store")
	c.AbortWithStatusJSON(status, gin.H{"error": code, "message": msg})
}
