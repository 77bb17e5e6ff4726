// Package health answers liveness and readiness. Liveness says the process serves HTTP; readiness
// says every backing service its components need (Needs) answers right now, so a load balancer
// stops routing to an instance that could only return 503s, and keeps routing to one whose
// components do not use the service that is down.
package health

import (
	"context"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
)

// Checker is one dependency probe. Check must honour ctx's deadline.
type Checker interface {
	Check(ctx context.Context) error
}

// CheckFunc adapts a function to Checker.
type CheckFunc func(ctx context.Context) error

// Check implements Checker.
func (f CheckFunc) Check(ctx context.Context) error { return f(ctx) }

// Readiness runs named checks in parallel, each bounded by Timeout.
type Readiness struct {
	Timeout time.Duration
	checks  map[string]Checker
}

// NewReadiness returns a Readiness with a 2 s per-check timeout: short enough that /readyz turns 503
// within seconds of a dependency going away, long enough for a cold TCP connect on a busy machine.
func NewReadiness() *Readiness {
	return &Readiness{Timeout: 2 * time.Second, checks: map[string]Checker{}}
}

// Add registers a check under name; a later Add with the same name replaces it.
func (r *Readiness) Add(name string, c Checker) { r.checks[name] = c }

// Result is one check's outcome.
type Result struct {
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
}

// Report is the /readyz body.
type Report struct {
	Status string            `json:"status"`
	Checks map[string]Result `json:"checks"`
}

// Run executes every check and reports whether all passed.
func (r *Readiness) Run(ctx context.Context) (Report, bool) {
	names := make([]string, 0, len(r.checks))
	for n := range r.checks {
		names = append(names, n)
	}
	sort.Strings(names)
	results := make([]Result, len(names))
	var wg sync.WaitGroup
	for i, n := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, r.Timeout)
			defer cancel()
			if err := r.checks[n].Check(cctx); err != nil {
				results[i] = Result{Status: "down", Error: err.Error()}
				return
			}
			results[i] = Result{Status: "up"}
		}()
	}
	wg.Wait()
	rep := Report{Status: "ready", Checks: make(map[string]Result, len(names))}
	ok := true
	for i, n := range names {
		rep.Checks[n] = results[i]
		if results[i].Status != "up" {
			ok = false
		}
	}
	if !ok {
		rep.Status = "unavailable"
	}
	return rep, ok
}

// Register mounts GET /healthz and GET /readyz.
func (r *Readiness) Register(e gin.IRouter) {
	e.GET("/healthz", func(c *gin.Context) {
		c.Header("Cache-Control", "no-store")
		c.JSON(http.StatusOK, gin.H{"status": "ok"})
	})
	e.GET("/readyz", func(c *gin.Context) {
		c.Header("Cache-Control", "no-store")
		rep, ok := r.Run(c.Request.Context())
		if !ok {
			c.JSON(http.StatusServiceUnavailable, rep)
			return
		}
		c.JSON(http.StatusOK, rep)
	})
}
