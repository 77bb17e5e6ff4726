package benchkit

import (
	"testing"
	"time"
)

// The benchmarks' messages read as they did before the wording moved here.
func TestWithin(t *testing.T) {
	for d, want := range map[time.Duration]string{time.Minute: "a minute", 2 * time.Minute: "2 minutes", 90 * time.Second: "90s", 45 * time.Second: "45s"} {
		if got := within(d); got != want {
			t.Errorf("within(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestCappedKeepsTheStart(t *testing.T) {
	c := NewCapped(8)
	for _, s := range []string{"first ", "second ", "third"} {
		if n, err := c.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v: a capped log must not fail its writer", s, n, err)
		}
	}
	if got := c.String(); got != "first se" {
		t.Fatalf("kept %q", got)
	}
}

func TestStopWithoutStart(t *testing.T) {
	var p Process
	if err := p.Stop(time.Second); err != nil {
		t.Fatal(err)
	}
}
