package schemas

import "strings"

// MinorExponent is the ISO 4217 minor-unit exponent of a currency code: amounts travel and are
// stored as integers of the minor unit (docs/METRICS.md 1.1). Codes not listed, and non-ISO codes
// such as GBX, use 2. This is ISO 4217's table, not CLDR's (golang.org/x/text/currency rounds IQD
// and others to CLDR's display digits, which are not the units the platform bills in). The sync,
// reporting and the ads upload all read it from here.
func MinorExponent(code string) int {
	switch strings.ToUpper(code) {
	case "BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "UYI", "VND", "VUV", "XAF", "XOF", "XPF":
		return 0
	case "BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND":
		return 3
	case "CLF", "UYW":
		return 4
	}
	return 2
}
