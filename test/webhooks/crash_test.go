//go:build integration

// Package webhooks tests webhook delivery across a crash of the runtime process: killed with SIGKILL while
// deliveries are pending or in flight, restarted, it still delivers every event. Run with `make test`.
package webhooks

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parley-dev/parley/internal/credentials"
	"github.com/parley-dev/parley/internal/testutil/apiclient"
	"github.com/parley-dev/parley/internal/testutil/bundletest"
	"github.com/parley-dev/parley/internal/testutil/hookreceiver"
	"github.com/parley-dev/parley/internal/testutil/runtimeproc"
	"github.com/parley-dev/parley/runtime/tenant"
	"github.com/parley-dev/parley/runtime/webhook"
)

func TestDeliveriesSurviveSIGKILL(t *testing.T) {
	dir := t.TempDir()
	bin := runtimeproc.Build(t)
	rcv := hookreceiver.Start(t)
	rcv.Hold(true)

	key, err := credentials.NewAPIKey(credentials.SecretPrefix)
	if err != nil {
		t.Fatal(err)
	}
	d, err := credentials.Describe(key)
	if err != nil {
		t.Fatal(err)
	}
	tenants := filepath.Join(dir, "tenants")
	bundletest.WriteFile(t, filepath.Join(tenants, "acme.json"), &tenant.Bundle{
		APIVersion: tenant.APIVersion, MerchantID: "acme", DisplayName: "Acme",
		Plan:    tenant.Plan{Name: "enterprise", RequestsPerSecond: 1000, Burst: 1000, APIAccess: true, Webhooks: true},
		APIKeys: []tenant.APIKey{{ID: d.ID, Type: tenant.KeySecret, SHA256: d.SHA256}},
		Webhooks: []tenant.Webhook{{ID: "crm", URL: rcv.URL, SigningSecrets: []string{rcv.Secret},
			Events: []tenant.Event{tenant.EventConversationCreated, tenant.EventLeadCreated}}},
	})
	args := []string{"--tenants-dir=" + tenants, "--sqlite-path=" + filepath.Join(dir, "parley.db"),
		"--webhook-allow-private", "--log-format=json", "--log-level=warn"}

	rt := runtimeproc.Start(t, bin, nil, args...)
	const chats = 20
	for i := range chats {
		resp := apiclient.Chat(t, rt.URL, key, fmt.Sprintf(`{"message": "I am visitor%d@example.com, do you ship to Oslo?"}`, i))
		if resp.Status != http.StatusOK {
			t.Fatalf("chat %d: %d %s", i, resp.Status, resp.Body)
		}
	}
	// Kill the runtime once its dispatcher has as many attempts as one merchant may have in flight, held by the
	// receiver.
	inFlight := webhook.DefaultWorkers / webhook.MerchantShare
	deadline := time.Now().Add(10 * time.Second)
	for rcv.Held() < inFlight && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := rcv.Held(); n < inFlight {
		t.Fatalf("%d attempts in flight, want %d", n, inFlight)
	}
	rt.Kill()
	if n := len(rcv.Received()); n != 0 {
		t.Fatalf("%d events acknowledged before the crash; the test wants them all pending", n)
	}

	rcv.Hold(false)
	runtimeproc.Start(t, bin, nil, args...) // the restarted runtime
	// Leases of the killed process run out after twice the 10-second timeout; then every event goes out.
	for id, n := range rcv.WaitFor(t, 2*chats, 60*time.Second) {
		if !strings.HasPrefix(id, "evt_") {
			t.Errorf("webhook-id %q", id)
		}
		if n > 1 {
			t.Logf("event %s delivered %d times (at least once, same webhook-id)", id, n)
		}
	}
	if n := rcv.Bad(); n > 0 {
		t.Errorf("%d deliveries did not verify", n)
	}
}
