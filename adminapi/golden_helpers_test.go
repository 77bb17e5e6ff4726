package adminapi_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// masked replaces the per-run values of a body (IDs, clocks) so that it can be compared with a
// golden file: every non-empty value of a key in placeholders, at any depth, becomes the key's
// placeholder ("" for the key in upper case). An empty or null value stays, since that is part of
// the contract.
func masked(t *testing.T, v any, placeholders map[string]string) []byte {
	t.Helper()
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				p, ok := placeholders[k]
				switch {
				case !ok:
					walk(x)
				case x != "" && x != nil:
					if p == "" {
						p = strings.ToUpper(k)
					}
					v[k] = p
				}
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(v)
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// maskedJSON is masked for a raw body.
func maskedJSON(t *testing.T, raw []byte, placeholders map[string]string) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return masked(t, v, placeholders)
}

// upperCase names keys whose placeholder is their own name in upper case.
func upperCase(keys ...string) map[string]string {
	out := make(map[string]string, len(keys))
	for _, k := range keys {
		out[k] = ""
	}
	return out
}
