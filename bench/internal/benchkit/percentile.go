package benchkit

import "time"

// Percentile is the nearest-rank p-th percentile (0 < p ≤ 100) of sorted, or 0 for none: a value
// that was measured, never one interpolated between two.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p/100+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
