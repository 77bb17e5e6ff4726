package kafkax

import (
	"strings"
	"testing"
	"time"
)

func TestDefaultInstanceIDIsLegalAndNamesHostPortAndCommand(t *testing.T) {
	a, b := DefaultInstanceID("process", 8080), DefaultInstanceID("process", 8081)
	if a == b {
		t.Fatalf("two ports on one host share the instance ID %q", a)
	}
	if a != DefaultInstanceID("process", 8080) {
		t.Fatal("the instance ID is not stable across calls")
	}
	if !strings.HasSuffix(a, "_8080_process") {
		t.Fatalf("instance ID %q", a)
	}
	if err := validInstanceID(memberID(a, "land-server-events")); err != nil {
		t.Fatalf("derived ID %q: %v", a, err)
	}
}

func TestInstanceIDValidation(t *testing.T) {
	c := DefaultConfig()
	for _, bad := range []string{"host:8080", "a/b", "é", strings.Repeat("x", maxInstanceID+1)} {
		c.InstanceID = bad
		if c.Validate() == nil {
			t.Errorf("instance ID %q accepted", bad)
		}
	}
	for _, good := range []string{"", "web-1.example_8080_all", "revtrack-process-0"} {
		c.InstanceID = good
		if err := c.Validate(); err != nil {
			t.Errorf("instance ID %q refused: %v", good, err)
		}
	}
	c.InstanceID = ""
	c.SessionTimeout = 500 * time.Millisecond
	if c.Validate() == nil {
		t.Error("a session timeout under 1s accepted")
	}
}

func TestSanitizeKeepsOnlyKafkaLegalCharacters(t *testing.T) {
	if got := sanitize("my host:1/é"); got != "my-host-1--" {
		t.Fatalf("sanitize = %q", got)
	}
}
