// Package live wakes the runtime's live streams (server-sent events) when a merchant's stream log grows. The log
// itself is in the store, so a wake-up carries nothing but the merchant: a stream that is woken, or that polls
// because the write happened on another replica, reads what it has not sent from the store, and misses nothing.
package live

import (
	"errors"
	"sync"
)

// ErrTooManyStreams refuses a stream past the replica's or the merchant's bound.
var ErrTooManyStreams = errors.New("too many open streams")

// Hub counts the open streams of one replica and wakes those of a merchant.
type Hub struct {
	maxStreams, maxPerMerchant int

	mu      sync.Mutex
	open    int
	waiters map[string]map[chan struct{}]struct{}
}

// NewHub returns a hub for at most maxStreams open streams, at most maxPerMerchant of one merchant.
func NewHub(maxStreams, maxPerMerchant int) *Hub {
	return &Hub{maxStreams: maxStreams, maxPerMerchant: maxPerMerchant, waiters: map[string]map[chan struct{}]struct{}{}}
}

// Subscribe opens a stream of the merchant: wake receives a value when the merchant's log may have grown, and
// done closes the stream. Past the bounds it returns ErrTooManyStreams.
func (h *Hub) Subscribe(merchantID string) (wake <-chan struct{}, done func(), err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	set := h.waiters[merchantID]
	if h.open >= h.maxStreams || len(set) >= h.maxPerMerchant {
		return nil, nil, ErrTooManyStreams
	}
	if set == nil {
		set = map[chan struct{}]struct{}{}
		h.waiters[merchantID] = set
	}
	ch := make(chan struct{}, 1)
	set[ch] = struct{}{}
	h.open++
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if _, ok := set[ch]; !ok {
			return
		}
		delete(set, ch)
		h.open--
		if len(set) == 0 {
			delete(h.waiters, merchantID)
		}
	}, nil
}

// Publish wakes the merchant's streams. It never blocks: a stream already woken stays woken once.
func (h *Hub) Publish(merchantID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.waiters[merchantID] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// Open returns the number of open streams.
func (h *Hub) Open() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.open
}
