package reporting

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/revtrack/revtrack/schemas"
)

// formatAmount writes minor units as a decimal with the currency's exponent and its code:
// 4900 USD → "49.00 USD", 500 JPY → "500 JPY".
func formatAmount(cents int64, currency string) string {
	exp := schemas.MinorExponent(currency)
	neg := cents < 0
	if neg {
		cents = -cents
	}
	s := strconv.FormatInt(cents, 10)
	if exp > 0 {
		if len(s) <= exp {
			s = strings.Repeat("0", exp-len(s)+1) + s
		}
		s = s[:len(s)-exp] + "." + s[len(s)-exp:]
	}
	if neg {
		s = "-" + s
	}
	return s + " " + currency
}

// roundHalfUp divides a ≥ 0 by b > 0, rounding halves up: floor((2a + b) / (2b)) (METRICS 1.4).
func roundHalfUp(a, b int64) int64 {
	if b <= 0 {
		return 0
	}
	return (2*a + b) / (2 * b)
}

// Ratio is a fraction rounded half up to 4 decimal places (METRICS 1.4), kept as an integer count
// of ten-thousandths so that the JSON number is exact. A nil *Ratio marshals as null.
type Ratio int64

// ratio is round4(a / b) for a ≥ 0, b > 0; nil when b = 0.
func ratio(a, b int64) *Ratio {
	if b <= 0 {
		return nil
	}
	r := Ratio(roundHalfUp(a*10000, b))
	return &r
}

// Float is the ratio as a number (for tests and comparisons).
func (r Ratio) Float() float64 { return float64(r) / 10000 }

// MarshalJSON writes the ratio with at most four decimals and at least one ("1.0", "0.8942").
func (r Ratio) MarshalJSON() ([]byte, error) {
	whole, frac := int64(r)/10000, int64(r)%10000
	s := strconv.FormatInt(whole, 10) + "." + strings.TrimRight(leftPad(strconv.FormatInt(frac, 10), 4), "0")
	if strings.HasSuffix(s, ".") {
		s += "0"
	}
	return json.RawMessage(s), nil
}

func leftPad(s string, n int) string {
	if len(s) >= n {
		return s
	}
	return strings.Repeat("0", n-len(s)) + s
}
