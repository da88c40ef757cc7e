package server

import (
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parley-dev/parley/runtime/assistant"
	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
)

// Keys created in the dashboard work on the API like declared ones, until revoked: at once on the runtime that
// revoked them, within a second on the others; and not at all where the Merchant turned self-service off.
func TestSelfServiceKeys(t *testing.T) {
	e := newEnv(t)
	e.addKnowledge("alpha", "Returns", "You can return unworn items within 60 days for a full refund.")
	ctx := t.Context()
	svc := e.srv.chat
	ask := func(key string) int {
		return e.chat(key, `{"message": "How do returns work?"}`).status
	}
	raw, k, err := svc.CreateAPIKey(ctx, e.tenants, e.bundles["alpha"], tenant.KeySecret)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(raw, "sk_"+k.ID+"_") || strings.Contains(k.SHA256, raw) {
		t.Fatalf("the key %q is not what was stored: %+v", raw, k)
	}
	if status := ask(raw); status != http.StatusOK {
		t.Fatalf("a new self-service key: %d", status)
	}
	if keys, _ := e.store.ListAPIKeys(ctx, "alpha"); len(keys) != 1 || keys[0].LastUsedAt.IsZero() {
		t.Errorf("the key's last use is not recorded: %+v", keys)
	}
	if err := svc.RevokeAPIKey(ctx, e.bundles["beta"], k.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("beta revoking alpha's key: %v", err)
	}
	if status := ask(raw); status != http.StatusOK {
		t.Fatalf("after beta's attempt: %d", status)
	}

	// Another replica on the same store, which has the key in its cache.
	other, err := chat.New(chat.Config{Store: e.store, Responder: assistant.Retrieval{}, Now: e.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	replica, err := New(Config{Tenants: e.tenants, Chat: other, Registry: prometheus.NewRegistry(), Now: e.clock.Now,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	onReplica := func() int {
		req := httptest.NewRequest(http.MethodPost, "/api/v1/chat", strings.NewReader(`{"message": "How do returns work?"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-API-Key", raw)
		rec := httptest.NewRecorder()
		replica.ServeHTTP(rec, req)
		return rec.Code
	}
	if status := onReplica(); status != http.StatusOK {
		t.Fatalf("on the other replica: %d", status)
	}
	if err := svc.RevokeAPIKey(ctx, e.bundles["alpha"], k.ID); err != nil {
		t.Fatal(err)
	}
	if status := ask(raw); status != http.StatusUnauthorized {
		t.Errorf("a revoked key on the runtime that revoked it: %d", status)
	}
	e.clock.Advance(time.Second)
	if status := onReplica(); status != http.StatusUnauthorized {
		t.Errorf("a revoked key on another replica a second later: %d", status)
	}

	// Self-service turned off: new keys are refused, and so are the ones made before.
	raw2, _, err := svc.CreateAPIKey(ctx, e.tenants, e.bundles["alpha"], tenant.KeySecret)
	if err != nil {
		t.Fatal(err)
	}
	off := *e.bundles["alpha"]
	off.SelfServiceKeysDisabled = true
	e.publish(&off)
	if status := ask(raw2); status != http.StatusUnauthorized {
		t.Errorf("a self-service key where they are off: %d", status)
	}
	if _, _, err := svc.CreateAPIKey(ctx, e.tenants, &off, tenant.KeyPublishable); !errors.Is(err, chat.ErrSelfServiceKeysDisabled) {
		t.Errorf("creating a key where they are off: %v", err)
	}
	// Declared keys are untouched.
	if status := ask(e.keys["alpha-sk"]); status != http.StatusOK {
		t.Errorf("a declared key: %d", status)
	}
}
