package benchkit

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Paced is an open-loop load with a poll for its effects: N sends at Rate per second, each on its
// own goroutine so that a slow answer does not delay the schedule, and every Poll a check of the
// acknowledged sends whose effect has not been seen yet. It stops when every acknowledged send was
// seen, or Wait after the last answer (what is still pending then counts as lost).
type Paced struct {
	N, Rate    int
	Poll, Wait time.Duration
}

// Run sends i = 0..N-1 with send, which reports whether the send was acknowledged, and passes the
// indices acknowledged and not yet seen to seen, which returns those whose effect it saw. send's
// writes for i happen before seen is given i, and seen runs on one goroutine at a time, so the
// callers' per-index state needs no lock of its own.
func (p Paced) Run(ctx context.Context, send func(i int) bool, seen func(ctx context.Context, pending []int) ([]int, error)) error {
	var (
		mu      sync.Mutex
		wg      sync.WaitGroup
		pending []int
	)
	sendDone := make(chan struct{})
	go func() {
		defer close(sendDone)
		tick := time.NewTicker(time.Second / time.Duration(max(1, p.Rate)))
		defer tick.Stop()
		for i := range p.N {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if send(i) {
					mu.Lock()
					pending = append(pending, i)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
	}()

	var deadline time.Time
	sending := true
	for {
		select {
		case <-ctx.Done():
			if sendDone != nil {
				<-sendDone
			}
			return ctx.Err()
		case <-sendDone:
			sending, sendDone = false, nil
			deadline = time.Now().Add(p.Wait)
		case <-time.After(p.Poll):
		}
		mu.Lock()
		ids := slices.Clone(pending)
		mu.Unlock()
		done, err := seen(ctx, ids)
		if err != nil {
			if sendDone != nil {
				<-sendDone
			}
			return err
		}
		settled := make(map[int]bool, len(done))
		for _, i := range done {
			settled[i] = true
		}
		mu.Lock()
		pending = slices.DeleteFunc(pending, func(i int) bool { return settled[i] })
		left := len(pending)
		mu.Unlock()
		if !sending && (left == 0 || time.Now().After(deadline)) {
			return nil
		}
	}
}
