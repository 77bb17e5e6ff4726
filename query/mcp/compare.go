package mcp

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
	"sort"
)

// Change is one figure in two periods.
type Change struct {
	Current  json.Number `json:"current"`
	Previous json.Number `json:"previous"`
	// AbsoluteChange is current − previous, in the figure's unit (an integer for integers).
	AbsoluteChange json.Number `json:"absoluteChange"`
	// RelativeChange is (current − previous) / |previous|, rounded to 4 decimals.
	RelativeChange json.Number `json:"relativeChange"`
}

// MarshalJSON writes a missing value as null, in the order current, previous, changes.
func (c Change) MarshalJSON() ([]byte, error) {
	num := func(n json.Number) any {
		if n == "" {
			return nil
		}
		return n
	}
	return json.Marshal(struct {
		Current        any `json:"current"`
		Previous       any `json:"previous"`
		AbsoluteChange any `json:"absoluteChange"`
		RelativeChange any `json:"relativeChange"`
	}{num(c.Current), num(c.Previous), num(c.AbsoluteChange), num(c.RelativeChange)})
}

// compareValues mirrors the shape of two decoded JSON values (decoded with UseNumber): every number
// becomes a Change (so does a value null in both, such as a ratio without a base), objects are
// compared key by key over the union of their keys, other scalars (booleans, strings) become
// {current, previous}, and arrays are left out (lists such as usage by event name have no
// one-to-one pairing of entries).
func compareValues(cur, prev any) (any, bool) {
	cm, cIsMap := cur.(map[string]any)
	pm, pIsMap := prev.(map[string]any)
	if cIsMap || pIsMap {
		keys := map[string]bool{}
		for k := range cm {
			keys[k] = true
		}
		for k := range pm {
			keys[k] = true
		}
		out := make(map[string]any, len(keys))
		for k := range keys {
			if v, ok := compareValues(cm[k], pm[k]); ok {
				out[k] = v
			}
		}
		return out, true
	}
	cn, cIsNum := cur.(json.Number)
	pn, pIsNum := prev.(json.Number)
	if cIsNum || pIsNum || (cur == nil && prev == nil) {
		if (cur != nil && !cIsNum) || (prev != nil && !pIsNum) {
			return map[string]any{"current": cur, "previous": prev}, true
		}
		return numberChange(cn, pn), true
	}
	switch cur.(type) {
	case []any:
		return nil, false
	}
	if _, ok := prev.([]any); ok {
		return nil, false
	}
	return map[string]any{"current": cur, "previous": prev}, true
}

// numberChange computes the changes of two numbers, either of which may be missing. Integers (money
// in minor units, counts) are subtracted exactly; other numbers (ratios, shares) are rounded to 4
// decimals like the REST API's ratios.
func numberChange(cur, prev json.Number) Change {
	c := Change{Current: cur, Previous: prev}
	if cur == "" || prev == "" {
		return c
	}
	ci, cok := new(big.Int).SetString(string(cur), 10)
	pi, pok := new(big.Int).SetString(string(prev), 10)
	if cok && pok {
		c.AbsoluteChange = json.Number(new(big.Int).Sub(ci, pi).String())
	} else {
		cf, err1 := cur.Float64()
		pf, err2 := prev.Float64()
		if err1 != nil || err2 != nil {
			return c
		}
		c.AbsoluteChange = round4(cf - pf)
	}
	cf, _ := cur.Float64()
	pf, _ := prev.Float64()
	if pf != 0 {
		c.RelativeChange = round4((cf - pf) / math.Abs(pf))
	}
	return c
}

// round4 rounds half away from zero to 4 decimals and writes the shortest form (0.25, not 0.2500).
func round4(f float64) json.Number {
	r := math.Round(f*1e4) / 1e4
	if r == 0 {
		r = 0 // no "-0"
	}
	b, _ := json.Marshal(r)
	return json.Number(b)
}

// decodeNumbers decodes JSON keeping numbers exact.
func decodeNumbers(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	return v, err
}

// sortedUnion is the sorted union of two lists of currency codes.
func sortedUnion(a, b []string) []string {
	seen := map[string]bool{}
	out := []string{}
	for _, s := range append(append([]string{}, a...), b...) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}
