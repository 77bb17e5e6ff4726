package cluster

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
)

// jsonDiff lists the paths at which two JSON documents differ (at most limit), each with both
// values, so that a difference reads as the field it is, not as two pages of JSON.
func jsonDiff(a, b string, limit int) []string {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return []string{fmt.Sprintf("single %q, cluster %q", clip(a), clip(b))}
	}
	var out []string
	var walk func(path string, x, y any)
	walk = func(path string, x, y any) {
		if len(out) >= limit {
			return
		}
		switch xv := x.(type) {
		case map[string]any:
			yv, ok := y.(map[string]any)
			if !ok {
				break
			}
			keys := map[string]bool{}
			for k := range xv {
				keys[k] = true
			}
			for k := range yv {
				keys[k] = true
			}
			var ks []string
			for k := range keys {
				ks = append(ks, k)
			}
			sort.Strings(ks)
			for _, k := range ks {
				walk(path+"."+k, xv[k], yv[k])
			}
			return
		case []any:
			yv, ok := y.([]any)
			if !ok || len(xv) != len(yv) {
				break
			}
			for i := range xv {
				walk(fmt.Sprintf("%s[%d]", path, i), xv[i], yv[i])
			}
			return
		}
		if !reflect.DeepEqual(x, y) {
			xs, _ := json.Marshal(x)
			ys, _ := json.Marshal(y)
			out = append(out, fmt.Sprintf("%s: single %s, cluster %s", path, clip(string(xs)), clip(string(ys))))
		}
	}
	walk("", x, y)
	return out
}
