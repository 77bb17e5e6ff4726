package partnerfake

import (
	"strconv"
	"strings"
)

// currencyInfo holds what the generator needs per currency. Amounts are integer minor units so no
// float ever touches money; usdMilli (value of one major unit in thousandths of a USD) is used only
// to count revenue towards the revenue-share threshold, never exposed by the API (it has no FX).
type currencyInfo struct {
	exp      int      // minor-unit exponent (2 for USD, 0 for JPY)
	usdMilli int64    // 1 major unit in USD/1000, for the revenue-share threshold only
	tiers    [3]int64 // monthly list prices of the three paid plans, minor units
	oneTime  [3]int64 // one-time charge price points, minor units
}

var currencies = map[string]currencyInfo{
	"USD": {2, 1000, [3]int64{999, 2999, 7999}, [3]int64{4900, 9900, 19900}},
	"EUR": {2, 1080, [3]int64{900, 2700, 7500}, [3]int64{4500, 9000, 18500}},
	"GBP": {2, 1270, [3]int64{799, 2499, 6499}, [3]int64{3900, 7900, 15900}},
	"CAD": {2, 730, [3]int64{1299, 3999, 9999}, [3]int64{6500, 12900, 25900}},
	"AUD": {2, 660, [3]int64{1499, 4499, 11999}, [3]int64{7500, 14900, 29900}},
	"JPY": {0, 7, [3]int64{1500, 4500, 12000}, [3]int64{7500, 15000, 30000}},
}

// currencyFor returns the table entry, falling back to USD price points with two decimals for a code
// the table does not know (the API's Currency enum has ~170 values).
func currencyFor(code string) currencyInfo {
	if c, ok := currencies[code]; ok {
		return c
	}
	return currencies["USD"]
}

// MinorUnitExponent is the number of decimals of a currency's minor unit as the generator uses it.
func MinorUnitExponent(code string) int { return currencyFor(code).exp }

// AmountStyle selects how Money.amount (a Decimal serialised as a string) is printed.
type AmountStyle uint8

const (
	// AmountTrimmed prints like a Ruby BigDecimal: trailing zeros dropped, at least one decimal
	// ("10.0", "9.99", "0.5", "1500.0"). The platform's GraphQL stack is Ruby; clients must parse
	// any decimal string, so this is the default and the stricter test of a client.
	AmountTrimmed AmountStyle = iota
	// AmountFixed prints exactly the currency's minor-unit decimals ("10.00", "1500").
	AmountFixed
)

// FormatAmount prints minor units of a currency as a decimal string without going through floats.
func FormatAmount(minor int64, currency string, style AmountStyle) string {
	exp := MinorUnitExponent(currency)
	neg := minor < 0
	u := uint64(minor)
	if neg {
		u = uint64(-minor)
	}
	digits := strconv.FormatUint(u, 10)
	if len(digits) <= exp {
		digits = strings.Repeat("0", exp-len(digits)+1) + digits
	}
	intPart, frac := digits[:len(digits)-exp], digits[len(digits)-exp:]
	if style == AmountTrimmed {
		frac = strings.TrimRight(frac, "0")
		if frac == "" {
			frac = "0"
		}
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	b.WriteString(intPart)
	if frac != "" {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	return b.String()
}

// ParseAmount turns a decimal string back into minor units of the currency; it fails on more
// decimals than the currency has (which would mean the amount is not exact).
func ParseAmount(s, currency string) (int64, bool) {
	exp := MinorUnitExponent(currency)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	intPart, frac, _ := strings.Cut(s, ".")
	frac = strings.TrimRight(frac, "0")
	if intPart == "" || len(frac) > exp {
		return 0, false
	}
	frac += strings.Repeat("0", exp-len(frac))
	v, err := strconv.ParseInt(intPart+frac, 10, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

// percentOf returns round-half-away-from-zero(minor * num / den) in integer arithmetic, used for the
// revenue share (15/100) and the processing fee (29/1000).
func percentOf(minor, num, den int64) int64 {
	p := minor * num
	if p >= 0 {
		return (p + den/2) / den
	}
	return -((-p + den/2) / den)
}

// Fee rates. The revenue share is 0% below the threshold and 15% above (apps keep 100% of the first
// USD 1M, 85% after); the processing fee is 2.9% of gross on charges and refunds.
const (
	revenueShareNum, revenueShareDen   = 15, 100
	processingFeeNum, processingFeeDen = 29, 1000
)
