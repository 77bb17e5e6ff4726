package httpserver

import (
	"github.com/gin-gonic/gin"

	"github.com/revtrack/revtrack/internal/httpserver/apierror"
)

// Unrouted makes a request that matches no route answer like every edge answers its errors: JSON
// {error, message}, never cached, 405 with Allow when the path exists for other methods, else 404.
// Without it gin answers in plain text, which a client parsing the error contract cannot read.
func Unrouted(engine *gin.Engine) {
	engine.HandleMethodNotAllowed = true
	engine.NoRoute(func(c *gin.Context) {
		apierror.Write(c, apierror.New(apierror.NotFound, "no endpoint "+c.Request.Method+" "+c.Request.URL.Path))
	})
	engine.NoMethod(func(c *gin.Context) {
		apierror.Write(c, apierror.New(apierror.MethodNotAllowed, c.Request.Method+" is not allowed on "+c.Request.URL.Path))
	})
}
