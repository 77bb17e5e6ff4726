// Command gen writes tracker.min.js from tracker.js (`go generate ./ingest/tracker`). The output is
// committed, so a fresh clone builds without running it; TestMinifiedIsCurrent fails when the
// source changed and this was not run.
package main

import (
	"log"
	"os"

	"github.com/revtrack/revtrack/ingest/tracker/minify"
)

func main() {
	src, err := os.ReadFile("tracker.js")
	if err != nil {
		log.Fatal(err)
	}
	out, err := minify.Script(src)
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile("tracker.min.js", out, 0o644); err != nil {
		log.Fatal(err)
	}
}
