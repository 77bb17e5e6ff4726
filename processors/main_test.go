package processors

import (
	"testing"

	"go.uber.org/goleak"
)

// The loops start goroutines per consumer; every one must end when its context does.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
