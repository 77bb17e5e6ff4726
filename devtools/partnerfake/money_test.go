package partnerfake

import "testing"

func TestFormatAmount(t *testing.T) {
	cases := []struct {
		minor int64
		cur   string
		style AmountStyle
		want  string
	}{
		{999, "USD", AmountTrimmed, "9.99"},
		{1000, "USD", AmountTrimmed, "10.0"},
		{50, "EUR", AmountTrimmed, "0.5"},
		{5, "GBP", AmountTrimmed, "0.05"},
		{0, "USD", AmountTrimmed, "0.0"},
		{-1999, "USD", AmountTrimmed, "-19.99"},
		{1500, "JPY", AmountTrimmed, "1500.0"},
		{1000, "USD", AmountFixed, "10.00"},
		{-5, "USD", AmountFixed, "-0.05"},
		{1500, "JPY", AmountFixed, "1500"},
	}
	for _, c := range cases {
		if got := FormatAmount(c.minor, c.cur, c.style); got != c.want {
			t.Errorf("FormatAmount(%d, %s, %d) = %q, want %q", c.minor, c.cur, c.style, got, c.want)
		}
		if back, ok := ParseAmount(c.want, c.cur); !ok || back != c.minor {
			t.Errorf("ParseAmount(%q) = %d, %v", c.want, back, ok)
		}
	}
	if _, ok := ParseAmount("1.005", "USD"); ok {
		t.Error("ParseAmount accepted more decimals than the currency has")
	}
}

func TestPercentOf(t *testing.T) {
	cases := []struct{ minor, num, den, want int64 }{
		{999, 15, 100, 150},  // 149.85 -> 150
		{2999, 29, 1000, 87}, // 86.971 -> 87
		{-999, 15, 100, -150},
		{10, 15, 100, 2}, // 1.5 -> 2 (half away from zero)
		{-10, 15, 100, -2},
	}
	for _, c := range cases {
		if got := percentOf(c.minor, c.num, c.den); got != c.want {
			t.Errorf("percentOf(%d,%d,%d) = %d, want %d", c.minor, c.num, c.den, got, c.want)
		}
	}
}
