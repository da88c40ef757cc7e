//go:build integration

package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/live"
	"github.com/parley-dev/parley/runtime/tenant"
)

// Two replicas share one PostgreSQL: a visitor's stream open on one receives the team's reply posted to the
// other, which wakes only its own streams, so the message comes through the store's log; and the visitor's stream
// reconnected to the first replica after a drop resumes with nothing lost.
func TestStreamsAcrossReplicas(t *testing.T) {
	var cfg envConfig
	hubA := live.NewHub(100, 100)
	e := newEnv(t, onPostgres(t), func(c *envConfig) {
		c.chat.Published, c.server.Live, c.server.StreamPoll = hubA.Publish, hubA, 100*time.Millisecond
		cfg = *c
	})
	e.addMerchant("acme", func(*tenant.Bundle) {})
	hubB := live.NewHub(100, 100)
	other := cfg.server
	other.Registry, other.Live, other.StreamPoll = prometheus.NewRegistry(), hubB, 100*time.Millisecond
	chatB := cfg.chat
	chatB.Published = hubB.Publish
	var err error
	if other.Chat, err = chat.New(chatB); err != nil {
		t.Fatal(err)
	}
	replicaB, err := New(other)
	if err != nil {
		t.Fatal(err)
	}
	b := httptest.NewServer(replicaB)
	t.Cleanup(b.Close)

	visitor := map[string]string{"X-API-Key": e.keys["acme-pk"], "Origin": "https://acme.example", "X-Visitor-ID": "v1"}
	r := e.chat(e.keys["acme-pk"], `{"message": "Kann ich mit einem Mitarbeiter sprechen?"}`, "Origin", "https://acme.example", "X-Visitor-ID", "v1")
	id := r.json(t)["conversation_id"].(string)
	status, onB := openStreamAt(t, b.URL, "/api/v1/conversations/"+id+"/events", visitor)
	if status != http.StatusOK {
		t.Fatalf("the visitor's stream on replica B: %d", status)
	}
	onB() // waiting
	onB() // the notice

	owner := map[string]string{"Authorization": e.ownerOf("acme")}
	sent := time.Now()
	e.do(http.MethodPost, "/api/v1/conversations/"+id+"/messages", owner, `{"text": "Hallo, hier ist Anna.", "author": "Anna"}`)
	onB() // agent
	ev := onB()
	if !strings.Contains(ev, "Hallo, hier ist Anna.") {
		t.Fatalf("replica B's stream after the reply on A: %q", ev)
	}
	t.Logf("delivered across replicas in %v", time.Since(sent))
	lastID := strings.TrimPrefix(strings.Split(ev, "\n")[0], "id: ")

	// The visitor's network drops; a reply is posted meanwhile on B; the stream reconnects to A.
	e2 := map[string]string{"Last-Event-ID": lastID}
	for k, v := range visitor {
		e2[k] = v
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, b.URL+"/api/v1/conversations/"+id+"/messages",
		strings.NewReader(`{"text": "Sind Sie noch da?", "author": "Anna"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", owner["Authorization"])
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != http.StatusCreated {
		t.Fatalf("the reply on B: %v %v", res, err)
	}
	_ = res.Body.Close()
	_, onA := openStreamAt(t, e.url, "/api/v1/conversations/"+id+"/events", e2)
	if ev := onA(); !strings.Contains(ev, "Sind Sie noch da?") {
		t.Errorf("the resumed stream on A: %q, want the reply posted on B while it was away", ev)
	}
}
