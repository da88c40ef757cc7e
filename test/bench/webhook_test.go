//go:build integration

package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// Load shape of BenchmarkWebhookLag.
const (
	eventRate     = 200
	eventDuration = 10 * time.Second
)

// BenchmarkWebhookLag measures the delay from an event to its delivery: `parley dev` with --webhook-url pointing
// at a receiver that verifies every signature, and 200 new conversations a second for 10 seconds, each one
// conversation.created event. The delay is the receiver's clock minus the event's timestamp (when the chat was
// answered). Run it with `make bench-webhooks`.
func BenchmarkWebhookLag(b *testing.B) {
	dir := b.TempDir()
	rcv := &lagReceiver{}
	srv := httptest.NewServer(rcv)
	b.Cleanup(srv.Close)
	dev := startDev(b, dir, "--webhook-url", srv.URL)
	base, key := dev.base, dev.key
	creds, err := os.ReadFile(filepath.Join(dir, "demo-credentials.json"))
	if err != nil {
		b.Fatal(err)
	}
	var c struct {
		WebhookSigningSecret string `json:"webhookSigningSecret"`
	}
	if err := json.Unmarshal(creds, &c); err != nil {
		b.Fatal(err)
	}
	if rcv.wh, err = standardwebhooks.NewWebhook(c.WebhookSigningSecret); err != nil {
		b.Fatal(err)
	}

	b.ResetTimer()
	sent := 0
	tick := time.NewTicker(time.Second / eventRate)
	defer tick.Stop()
	var wg sync.WaitGroup
	for end := time.Now().Add(eventDuration); time.Now().Before(end); <-tick.C {
		sent++
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, base+"/api/v1/chat",
				strings.NewReader(`{"message": "Do you ship to Canada?"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-API-Key", key)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Errorf("chat: %d", resp.StatusCode)
			}
		}()
	}
	wg.Wait()
	deadline := time.Now().Add(30 * time.Second)
	for rcv.count() < sent && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	b.StopTimer()

	lags := rcv.sorted()
	if len(lags) < sent {
		b.Fatalf("%d of %d events delivered", len(lags), sent)
	}
	p := func(q float64) time.Duration { return lags[int(q*float64(len(lags)-1))] }
	b.ReportMetric(float64(p(0.5).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(p(0.99).Microseconds())/1000, "p99-ms")
	b.Logf("%d events at %d/s: delay from event to delivery p50 %s, p99 %s, max %s; %d signatures failed",
		len(lags), eventRate, p(0.5), p(0.99), lags[len(lags)-1], rcv.failed)
	if rcv.failed > 0 {
		b.Errorf("%d deliveries did not verify", rcv.failed)
	}
}

// lagReceiver verifies deliveries and records how long after its event each arrived.
type lagReceiver struct {
	wh     *standardwebhooks.Webhook
	mu     sync.Mutex
	lags   map[string]time.Duration // by webhook-id: a retried event counts once
	failed int
}

func (r *lagReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	now := time.Now()
	body, _ := io.ReadAll(req.Body)
	var ev struct {
		Timestamp time.Time `json:"timestamp"`
	}
	err := r.wh.Verify(body, req.Header)
	if err == nil {
		err = json.Unmarshal(body, &ev)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.failed++
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if r.lags == nil {
		r.lags = map[string]time.Duration{}
	}
	if _, seen := r.lags[req.Header.Get("webhook-id")]; !seen {
		r.lags[req.Header.Get("webhook-id")] = now.Sub(ev.Timestamp)
	}
	w.WriteHeader(http.StatusNoContent)
}

func (r *lagReceiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.lags)
}

func (r *lagReceiver) sorted() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]time.Duration, 0, len(r.lags))
	for _, l := range r.lags {
		out = append(out, l)
	}
	slices.Sort(out)
	if len(out) == 0 {
		panic(fmt.Sprintf("no deliveries: %d failed", r.failed))
	}
	return out
}
