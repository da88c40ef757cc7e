package chat_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/ids"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/storetest"
)

// sweepUnderChat measures what the retention sweep costs chat: it stores a merchant's 500,000 old
// conversations of two messages (1,000,000 messages), measures the p99 of the chat path's write (a new
// conversation, chat.RecordExchange) from 4 callers each writing every 5 ms for 5 s with nothing else running,
// then again while chat.SweepExpired deletes the old conversations as the runtime's sweeper does (its default
// batches and pauses), and reports both p99s, their ratio and the sweep's time. Run it once (-benchtime 1x).
// open must return a new, empty store, closed when b ends.
func sweepUnderChat(b *testing.B, open func(b *testing.B) store.Store) {
	const (
		merchant      = "m1"
		conversations = 500_000
		callers       = 4
		every         = 5 * time.Millisecond
		quiet         = 5 * time.Second
	)
	s := open(b)
	ctx := b.Context()
	now := time.Now().UTC().Truncate(time.Millisecond)
	old := now.Add(-400 * 24 * time.Hour)
	started := time.Now()
	const batch = 5000
	for first := 0; first < conversations; first += batch {
		err := s.Write(ctx, func(tx store.Tx) error {
			for i := first; i < min(first+batch, conversations); i++ {
				ex := storetest.Exchange(merchant, fmt.Sprintf("old_%06d", i), old.Add(time.Duration(i)*time.Millisecond),
					"Do you deliver to the Netherlands, and how long does a parcel take in winter?",
					"We ship to the Netherlands with DHL; parcels usually arrive within three working days.")
				ex.NewConversation = true
				if _, err := tx.UpsertConversation(ctx, ex); err != nil {
					return err
				}
				if err := tx.InsertMessages(ctx, ex); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("stored %d old conversations (%d messages) in %s", conversations, 2*conversations, time.Since(started).Round(time.Second))

	// chatLoad writes new conversations from the callers until ctx ends and returns the latencies.
	chatLoad := func(ctx context.Context) []time.Duration {
		var mu sync.Mutex
		var all []time.Duration
		var wg sync.WaitGroup
		for range callers {
			wg.Go(func() {
				t := time.NewTicker(every)
				defer t.Stop()
				var mine []time.Duration
				for ctx.Err() == nil {
					ex := storetest.Exchange(merchant, ids.New("conv_"), time.Now().UTC(), "Can I pay with PayPal?", "Yes, PayPal is accepted.")
					ex.NewConversation = true
					began := time.Now()
					if _, err := chat.RecordExchange(context.WithoutCancel(ctx), s, ex); err != nil {
						b.Error(err)
						return
					}
					mine = append(mine, time.Since(began))
					select {
					case <-ctx.Done():
					case <-t.C:
					}
				}
				mu.Lock()
				all = append(all, mine...)
				mu.Unlock()
			})
		}
		wg.Wait()
		return all
	}
	p99 := func(d []time.Duration) time.Duration {
		slices.Sort(d)
		return d[len(d)*99/100]
	}

	b.ResetTimer()
	for range b.N {
		qctx, cancel := context.WithTimeout(ctx, quiet)
		quietP99 := p99(chatLoad(qctx))
		cancel()

		sctx, stop := context.WithCancel(ctx)
		var during []time.Duration
		done := make(chan struct{})
		go func() {
			defer close(done)
			during = chatLoad(sctx)
		}()
		began := time.Now()
		swept, err := chat.SweepExpired(ctx, s, merchant, chat.Retention{Conversations: 90 * 24 * time.Hour}, now, chat.SweepConfig{})
		took := time.Since(began)
		stop()
		<-done
		if err != nil {
			b.Fatal(err)
		}
		if swept.Records[store.ExpiringConversations] != conversations {
			b.Fatalf("swept %v, want %d conversations", swept.Records, conversations)
		}
		duringP99 := p99(during)
		b.ReportMetric(float64(quietP99.Microseconds())/1000, "quiet-p99-ms")
		b.ReportMetric(float64(duringP99.Microseconds())/1000, "sweep-p99-ms")
		b.ReportMetric(float64(duringP99)/float64(quietP99), "p99-ratio")
		b.ReportMetric(took.Seconds(), "sweep-s")
		b.ReportMetric(float64(swept.Rows), "rows")
		b.Logf("quiet p99 %s; during the sweep p99 %s (%d writes); the sweep deleted %d rows in %s",
			quietP99, duringP99, len(during), swept.Rows, took.Round(time.Millisecond))
	}
}
