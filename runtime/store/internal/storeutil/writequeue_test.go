package storeutil

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestWaiting: a write counts as waiting from its call until a writer takes it, its caller gives up or the queue
// closes.
func TestWaiting(t *testing.T) {
	q := NewWriteQueue[int]()
	awaitWaiting := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); q.Waiting() != n; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("Waiting() = %d, want %d", q.Waiting(), n)
			}
		}
	}
	errs := make(chan error, 3)
	ctx, cancel := context.WithCancel(t.Context())
	go func() { errs <- q.Write(ctx, func(int) error { return nil }) }()
	go func() { errs <- q.Write(t.Context(), func(int) error { return nil }) }()
	awaitWaiting(2)

	w := <-q.Requests()
	awaitWaiting(1)
	w.Finish(nil)
	if err := <-errs; err != nil {
		t.Fatalf("the taken write: %v", err)
	}

	cancel()
	q.Close()
	awaitWaiting(0)
	if err := <-errs; !errors.Is(err, context.Canceled) && !errors.Is(err, ErrClosed) {
		t.Errorf("a write given up: %v, want context.Canceled or ErrClosed", err)
	}
}
