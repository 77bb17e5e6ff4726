package controlplane

import (
	"errors"
	"testing"
)

func TestNormalizeOrigin(t *testing.T) {
	ok := map[string]string{
		"https://app.example.com":      "https://app.example.com",
		"https://App.Example.com:443":  "https://app.example.com",
		"https://app.example.com:8443": "https://app.example.com:8443",
		"https://app.example.com/":     "https://app.example.com",
		"http://localhost:3000":        "http://localhost:3000",
		"http://127.0.0.1:5173":        "http://127.0.0.1:5173",
		"https://[::1]:8443":           "https://[::1]:8443",
	}
	for in, want := range ok {
		got, err := NormalizeOrigin(in)
		if err != nil || got != want {
			t.Errorf("%q: got %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "app.example.com", "http://app.example.com", "https://*.example.com",
		"https://app.example.com/path", "https://app.example.com?x=1", "https://u:p@app.example.com", "ftp://app.example.com",
		"javascript:alert(1)", "http://localhost.evil.com:3000"} {
		if _, err := NormalizeOrigin(in); !errors.Is(err, ErrInvalid) {
			t.Errorf("%q accepted", in)
		}
	}
}

func FuzzNormalizeOrigin(f *testing.F) {
	for _, s := range []string{"https://a.example", "http://localhost:1", "https://a.example:443/", "%", "https://[::1]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := NormalizeOrigin(s)
		if err != nil {
			return
		}
		// A normalized origin is a fixed point: browsers send exactly this form.
		if again, err := NormalizeOrigin(n); err != nil || again != n {
			t.Fatalf("%q -> %q -> %q, %v", s, n, again, err)
		}
	})
}
