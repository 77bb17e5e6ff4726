package cli_test

import (
	"testing"

	"go.uber.org/goleak"
)

// A stopped `revtrack all` must leave no goroutine behind: shutdown closes every client.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
