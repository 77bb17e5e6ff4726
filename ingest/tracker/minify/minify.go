// Package minify turns tracker.js into what the edge serves (tracker.min.js). It runs at build time
// only, through `go generate ./ingest/tracker` and the test that keeps the committed output equal to
// it, so the server binary does not carry the minifier.
package minify

import (
	"errors"
	"strings"

	"github.com/evanw/esbuild/pkg/api"
)

// Script minifies the tracker's source: whitespace, syntax and identifiers. The language level is
// left as written (no target: nothing is lowered, so the output runs wherever the source does), and
// there is no bundle or module wrapper (the source is already one self-contained IIFE). The
// source's banner comment goes too: the script carries no third party's code whose licence must
// travel with it.
func Script(src []byte) ([]byte, error) {
	res := api.Transform(string(src), api.TransformOptions{
		Loader:            api.LoaderJS,
		MinifyWhitespace:  true,
		MinifySyntax:      true,
		MinifyIdentifiers: true,
		LegalComments:     api.LegalCommentsNone,
		Charset:           api.CharsetUTF8,
	})
	if len(res.Errors) > 0 {
		var msgs []string
		for _, m := range res.Errors {
			msgs = append(msgs, m.Text)
		}
		return nil, errors.New("minify tracker.js: " + strings.Join(msgs, "; "))
	}
	return res.Code, nil
}
