package schemas

import "testing"

func TestMinorExponent(t *testing.T) {
	for code, want := range map[string]int{"USD": 2, "usd": 2, "EUR": 2, "GBP": 2, "GBX": 2, "JPY": 0, "KRW": 0, "ISK": 0,
		"IQD": 3, "KWD": 3, "BHD": 3, "CLF": 4, "UYW": 4, "": 2, "XYZ": 2} {
		if got := MinorExponent(code); got != want {
			t.Errorf("MinorExponent(%q) = %d, want %d", code, got, want)
		}
	}
}
