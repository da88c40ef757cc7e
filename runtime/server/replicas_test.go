package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parley-dev/parley/runtime/chat"
)

// Two replicas share a store: knowledge written through one is what the other answers from within a second.
func TestKnowledgeReachesOtherReplicas(t *testing.T) {
	var cfg envConfig
	e := newEnv(t, func(c *envConfig) { cfg = *c })
	other := cfg.server
	other.Registry = prometheus.NewRegistry()
	var err error
	if other.Chat, err = chat.New(cfg.chat); err != nil { // a replica has its own indexes
		t.Fatal(err)
	}
	replica, err := New(other)
	if err != nil {
		t.Fatal(err)
	}
	ask := func() string {
		req := httptest.NewRequest(http.MethodPost, "/api/v1/chat", strings.NewReader(`{"message": "Do you rent kayaks?"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-API-Key", e.keys["alpha-sk"])
		rec := httptest.NewRecorder()
		replica.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
		return rec.Body.String()
	}
	if body := ask(); strings.Contains(body, "45 dollars") {
		t.Fatalf("answered before the knowledge existed: %s", body)
	}
	e.addKnowledge("alpha", "Kayak rentals", "We rent kayaks from May to September for 45 dollars a day, paddles included.")
	written := time.Now()
	for !strings.Contains(ask(), "45 dollars") {
		if time.Since(written) > time.Second {
			t.Fatal("the other replica did not answer from the new knowledge within a second")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
