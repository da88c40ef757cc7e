// Package webhooks tests webhook delivery across a crash of the runtime process: killed with SIGKILL while
// deliveries are pending or in flight, restarted, it still delivers every event. Run with `make test`.
package webhooks

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/parley-dev/parley/internal/credentials"
	"github.com/parley-dev/parley/internal/testutil/runtimeproc"
	"github.com/parley-dev/parley/runtime/tenant"
)

// receiver verifies every delivery; while hang is set it holds each request past the runtime's timeout, so that
// attempts are in flight when the runtime dies.
type receiver struct {
	t       *testing.T
	wh      *standardwebhooks.Webhook
	mu      sync.Mutex
	hang    bool
	ids     map[string]int // webhook-id -> deliveries received
	release chan struct{}
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	if err := r.wh.Verify(body, req.Header); err != nil {
		r.t.Errorf("delivery does not verify: %v", err)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	hang := r.hang
	r.mu.Unlock()
	if hang {
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

func (r *receiver) received() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]int, len(r.ids))
	for k, v := range r.ids {
		out[k] = v
	}
	return out
}

func TestDeliveriesSurviveSIGKILL(t *testing.T) {
	dir := t.TempDir()
	bin := runtimeproc.Build(t)
	secret, err := credentials.NewSigningSecret()
	if err != nil {
		t.Fatal(err)
	}
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	rcv := &receiver{t: t, wh: wh, hang: true, ids: map[string]int{}, release: make(chan struct{})}
	srv := httptest.NewServer(rcv)
	t.Cleanup(func() { close(rcv.release); srv.Close() })

	key, err := credentials.NewAPIKey(credentials.SecretPrefix)
	if err != nil {
		t.Fatal(err)
	}
	d, err := credentials.Describe(key)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := tenant.Marshal(&tenant.Bundle{
		APIVersion: tenant.APIVersion, MerchantID: "acme", DisplayName: "Acme",
		Plan:    tenant.Plan{Name: "enterprise", RequestsPerSecond: 1000, Burst: 1000, APIAccess: true, Webhooks: true},
		APIKeys: []tenant.APIKey{{ID: d.ID, Type: tenant.KeySecret, SHA256: d.SHA256}},
		Webhooks: []tenant.Webhook{{ID: "crm", URL: srv.URL, SigningSecrets: []string{secret},
			Events: []tenant.Event{tenant.EventConversationCreated, tenant.EventLeadCreated}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	tenants := filepath.Join(dir, "tenants")
	if err := os.MkdirAll(tenants, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tenants, "acme.json"), doc, 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"--tenants-dir=" + tenants, "--sqlite-path=" + filepath.Join(dir, "parley.db"),
		"--webhook-allow-private", "--log-format=json", "--log-level=warn"}

	rt := runtimeproc.Start(t, bin, nil, args...)
	const chats = 20
	for i := range chats {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, rt.URL+"/api/v1/chat",
			strings.NewReader(fmt.Sprintf(`{"message": "I am visitor%d@example.com, do you ship to Oslo?"}`, i)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-API-Key", key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("chat %d: %d %v", i, resp.StatusCode, body)
		}
	}
	// Let the dispatcher claim deliveries and start attempts that the receiver holds, then kill it mid-flight.
	time.Sleep(500 * time.Millisecond)
	rt.Kill()
	if n := len(rcv.received()); n != 0 {
		t.Fatalf("%d events acknowledged before the crash; the test wants them all pending", n)
	}

	rcv.mu.Lock()
	rcv.hang = false
	rcv.mu.Unlock()
	rt = runtimeproc.Start(t, bin, nil, args...)
	// Leases of the killed process run out after twice the 10-second timeout; then every event goes out.
	deadline := time.Now().Add(60 * time.Second)
	for {
		got := rcv.received()
		if len(got) == 2*chats {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d events delivered after the restart\n%s", len(got), 2*chats, rt.Logs())
		}
		time.Sleep(100 * time.Millisecond)
	}
	for id, n := range rcv.received() {
		if !strings.HasPrefix(id, "evt_") {
			t.Errorf("webhook-id %q", id)
		}
		if n > 1 {
			t.Logf("event %s delivered %d times (at least once, same webhook-id)", id, n)
		}
	}
}
