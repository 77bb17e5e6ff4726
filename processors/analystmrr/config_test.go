package analystmrr

import (
	"testing"
	"time"
)

func TestConfigValidate(t *testing.T) {
	for _, c := range []struct {
		interval time.Duration
		ok       bool
	}{{DefaultConfig().Interval, true}, {0, true}, {time.Second, true}, {-time.Second, false}, {time.Millisecond, false}} {
		if err := (Config{Interval: c.interval}).Validate(); (err == nil) != c.ok {
			t.Errorf("interval %v: %v", c.interval, err)
		}
	}
	if DefaultConfig().Interval != 15*time.Minute {
		t.Errorf("default interval %v, documented as 15m", DefaultConfig().Interval)
	}
}
