// Package hookreceiver is a merchant's webhook endpoint for tests: a real HTTP server with its own signing secret
// that verifies every delivery with the Standard Webhooks library and counts the events by webhook-id. While
// holding, it keeps deliveries open until the sender gives up, so that attempts are in flight when a runtime dies.
package hookreceiver

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/parley-dev/parley/internal/credentials"
)

// Receiver is a running endpoint.
type Receiver struct {
	// URL is where it receives deliveries.
	URL string
	// Secret is the signing secret ("whsec_...") deliveries must be signed with.
	Secret  string
	wh      *standardwebhooks.Webhook
	holding atomic.Bool
	held    atomic.Int32
	release chan struct{}
	mu      sync.Mutex
	ids     map[string]int
	bad     int
}

// Start starts a receiver with a new signing secret, stopped when t ends.
func Start(t testing.TB) *Receiver {
	t.Helper()
	secret, err := credentials.NewSigningSecret()
	if err != nil {
		t.Fatal(err)
	}
	r := &Receiver{Secret: secret, ids: map[string]int{}, release: make(chan struct{})}
	if r.wh, err = standardwebhooks.NewWebhook(secret); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(r)
	r.URL = srv.URL
	t.Cleanup(func() { close(r.release); srv.Close() })
	return r
}

// ServeHTTP answers 400 to a delivery that does not verify, holds it while Hold is on (then 503), and otherwise
// counts it and answers 204.
func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	if err := r.wh.Verify(body, req.Header); err != nil {
		r.mu.Lock()
		r.bad++
		r.mu.Unlock()
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if r.holding.Load() {
		r.held.Add(1)
		select {
		case <-r.release:
		case <-req.Context().Done():
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	r.mu.Lock()
	r.ids[req.Header.Get("webhook-id")]++
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// Hold makes the receiver hold new deliveries (on) or take them (off).
func (r *Receiver) Hold(on bool) { r.holding.Store(on) }

// Held is how many deliveries it has held so far.
func (r *Receiver) Held() int { return int(r.held.Load()) }

// Received returns how many times each event (by webhook-id) was taken.
func (r *Receiver) Received() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]int, len(r.ids))
	for k, v := range r.ids {
		out[k] = v
	}
	return out
}

// Bad is how many deliveries did not verify.
func (r *Receiver) Bad() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bad
}

// WaitFor waits until n distinct events were taken, failing t after timeout, and returns them.
func (r *Receiver) WaitFor(t testing.TB, n int, timeout time.Duration) map[string]int {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		got := r.Received()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d events received", len(got), n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
