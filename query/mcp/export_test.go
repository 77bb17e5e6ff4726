package mcp

import "encoding/json"

// CompareSummaries lets the black-box tests compute compare_periods' answer from two REST bodies.
func CompareSummaries(cur, prev []byte) ([]byte, error) {
	out, err := compareSummaries(cur, prev)
	if err != nil {
		return nil, err
	}
	return json.Marshal(out)
}
