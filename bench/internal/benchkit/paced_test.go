package benchkit

import (
	"context"
	"testing"
	"time"
)

// Every acknowledged send is handed to seen until seen reports it; unacknowledged ones never are.
func TestPacedSeesEveryAcknowledgedSend(t *testing.T) {
	const n = 20
	acked := make([]bool, n)
	seenAt := make([]int, n) // the poll that saw i
	polls := 0
	err := Paced{N: n, Rate: 1000, Poll: time.Millisecond, Wait: time.Second}.Run(context.Background(),
		func(i int) bool { acked[i] = i%4 != 0; return acked[i] },
		func(_ context.Context, pending []int) ([]int, error) {
			polls++
			var done []int
			for _, i := range pending {
				if !acked[i] {
					t.Errorf("unacknowledged send %d was pending", i)
				}
				if seenAt[i] != 0 {
					t.Errorf("send %d pending after it was seen", i)
				}
				if i%2 == 1 || polls > 3 { // some are seen at once, the rest later
					seenAt[i] = polls
					done = append(done, i)
				}
			}
			return done, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if acked[i] != (seenAt[i] != 0) {
			t.Errorf("send %d: acknowledged %v, seen at poll %d", i, acked[i], seenAt[i])
		}
	}
}

// A send that is never seen is given up Wait after the last answer.
func TestPacedGivesUpAfterWait(t *testing.T) {
	start := time.Now()
	err := Paced{N: 2, Rate: 100, Poll: 5 * time.Millisecond, Wait: 50 * time.Millisecond}.Run(context.Background(),
		func(int) bool { return true },
		func(context.Context, []int) ([]int, error) { return nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 50*time.Millisecond || d > 5*time.Second {
		t.Fatalf("returned after %s", d)
	}
}
