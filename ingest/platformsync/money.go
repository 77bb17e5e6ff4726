package platformsync

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/revtrack/revtrack/schemas"
)

// ParseMinor converts a decimal amount string ("9.99", "-10.0", "1500") into integer minor units
// of currency, exactly: no floats, and an error when the string has more decimals than the
// currency (other than trailing zeros) or is not a plain decimal.
func ParseMinor(amount, currency string) (int64, error) {
	exp := schemas.MinorExponent(currency)
	s := strings.TrimSpace(amount)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	intPart, frac, _ := strings.Cut(s, ".")
	frac = strings.TrimRight(frac, "0")
	if intPart == "" || len(frac) > exp || strings.Trim(intPart+frac, "0123456789") != "" {
		return 0, fmt.Errorf("amount %q is not an exact %s amount", clip(amount), clip(currency))
	}
	frac += strings.Repeat("0", exp-len(frac))
	v, err := strconv.ParseInt(intPart+frac, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("amount %q is out of range", clip(amount))
	}
	if neg {
		v = -v
	}
	return v, nil
}
