// Package tracker holds tracker.js, the browser script the ingest edge serves at /v1/tracker.js.
// What the script does, the collect contract it speaks and what the edge must answer are in
// README.md; testdata/collect-body.golden.json is a body as the script sends it.
package tracker

import _ "embed"

// Script is tracker.js as served: readable source without a build step, at most 5 KB gzipped.
//
//go:embed tracker.js
var Script []byte

// ContentType is the Content-Type to serve Script with.
const ContentType = "text/javascript; charset=utf-8"
