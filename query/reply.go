package query

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sync"

	"github.com/gin-gonic/gin"
)

// ErrorReply is what this edge answers for an error: the status, the {error, message} body and its
// extras. Callers that answer in another form than HTTP use it to word their failures: the MCP tools
// name the status, code and message of the REST reply in their tool errors (docs/MCP.md).
type ErrorReply struct {
	Status  int
	Code    string // the body's "error"
	Message string // the body's "message"
	// CustomerIDs are the matching customers of a 409 ambiguous_customer.
	CustomerIDs []string
	// RetryAfter is the Retry-After header, in seconds ("" without one).
	RetryAfter string
}

// ReplyOf is the reply of writeError (api.go) for err. It runs writeError itself, on a context of
// its own, so that the edge's error table stays the one place where errors become statuses, codes
// and messages, whoever asks.
func ReplyOf(err error) ErrorReply {
	w := &replyRecorder{header: http.Header{}}
	writeError(gin.CreateTestContextOnly(w, replyEngine()), err)
	r := ErrorReply{Status: w.status, RetryAfter: w.header.Get("Retry-After")}
	var body struct {
		Error       string   `json:"error"`
		Message     string   `json:"message"`
		CustomerIDs []string `json:"customerIds"`
	}
	if json.Unmarshal(w.body.Bytes(), &body) == nil {
		r.Code, r.Message, r.CustomerIDs = body.Error, body.Message, body.CustomerIDs
	}
	return r
}

// replyEngine only hosts the contexts of ReplyOf: no route is registered on it.
var replyEngine = sync.OnceValue(func() *gin.Engine { return gin.New() })

// replyRecorder is an http.ResponseWriter that keeps the reply in memory.
type replyRecorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *replyRecorder) Header() http.Header { return w.header }

func (w *replyRecorder) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *replyRecorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.body.Write(b)
}
