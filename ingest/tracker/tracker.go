// Package tracker holds tracker.js, the browser script the ingest edge serves at /v1/tracker.js.
// What the script does, the collect contract it speaks and what the edge must answer are in
// README.md; testdata/collect-body.golden.json is a body as the script sends it.
package tracker

import _ "embed"

//go:generate go run ./gen

// Source is tracker.js as written: the readable script, which the tests read for its rules.
//
//go:embed tracker.js
var Source []byte

// Script is tracker.js as served: Source minified at build time (go generate, see gen/), committed
// as tracker.min.js so a fresh clone builds without the generator; TestMinifiedIsCurrent keeps it
// equal to the source's output. The edge compresses it once at start-up (ingest/script.go).
//
//go:embed tracker.min.js
var Script []byte

// ContentType is the Content-Type to serve Script with.
const ContentType = "text/javascript; charset=utf-8"
