package server

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/live"
	"github.com/parley-dev/parley/runtime/tenant"
)

// openStream opens a stream and returns a function that reads its next event's lines up to the blank line.
func openStream(t *testing.T, e *env, path string, headers map[string]string) (status int, next func() string) {
	t.Helper()
	return openStreamAt(t, e.url, path, headers)
}

// openStreamAt is openStream on the server at base.
func openStreamAt(t *testing.T, base, path string, headers map[string]string) (status int, next func() string) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = res.Body.Close() })
	sc := bufio.NewScanner(res.Body)
	return res.StatusCode, func() string {
		var lines []string
		for sc.Scan() {
			if sc.Text() == "" {
				if len(lines) > 0 && !strings.HasPrefix(lines[0], "retry:") && !strings.HasPrefix(lines[0], ":") {
					return strings.Join(lines, "\n")
				}
				lines = nil
				continue
			}
			lines = append(lines, sc.Text())
		}
		return ""
	}
}

// TestLiveStreams checks the visitor's and the team's streams: the team sees a new waiting conversation, the
// visitor the team's reply, a resumed stream only what came after its Last-Event-ID, and no visitor another's.
func TestLiveStreams(t *testing.T) {
	hub := live.NewHub(10, 10)
	e := newEnv(t, func(c *envConfig) {
		c.chat.Published, c.server.Live, c.server.StreamPoll = hub.Publish, hub, time.Hour // woken by the hub alone
	})
	e.addMerchant("acme", func(*tenant.Bundle) {})
	e.validate = false // streams are not JSON
	visitorHeaders := map[string]string{"X-API-Key": e.keys["acme-pk"], "Origin": "https://acme.example", "X-Visitor-ID": "v1"}
	r := e.chat(e.keys["acme-pk"], `{"message": "Do you ship to Norway?"}`, "Origin", "https://acme.example", "X-Visitor-ID", "v1")
	id := r.json(t)["conversation_id"].(string)

	status, team := openStream(t, e, "/api/v1/conversations/events", map[string]string{"Authorization": e.ownerOf("acme")})
	if status != 200 {
		t.Fatalf("the team's stream: %d", status)
	}
	e.chat(e.keys["acme-pk"], `{"conversation_id": "`+id+`", "message": "I want to speak to a person"}`, "Origin", "https://acme.example", "X-Visitor-ID", "v1")
	if ev := team(); !strings.Contains(ev, "event: status") || !strings.Contains(ev, `"status":"waiting"`) {
		t.Fatalf("the team's first event: %q", ev)
	}

	for _, tc := range []struct {
		name    string
		headers map[string]string
		want    int
	}{
		{"another visitor", map[string]string{"X-API-Key": e.keys["acme-pk"], "Origin": "https://acme.example", "X-Visitor-ID": "v2"}, 404},
		{"no visitor", map[string]string{"X-API-Key": e.keys["acme-pk"], "Origin": "https://acme.example"}, 404},
		{"a publishable key on the team's stream", map[string]string{"X-API-Key": e.keys["acme-pk"], "Origin": "https://acme.example"}, 403},
	} {
		path := "/api/v1/conversations/" + id + "/events"
		if strings.Contains(tc.name, "team") {
			path = "/api/v1/conversations/events"
		}
		if status, _ := openStream(t, e, path, tc.headers); status != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, status, tc.want)
		}
	}

	status, visitor := openStream(t, e, "/api/v1/conversations/"+id+"/events", visitorHeaders)
	if status != 200 {
		t.Fatalf("the visitor's stream: %d", status)
	}
	visitor() // waiting
	visitor() // the notice
	e.do(http.MethodPost, "/api/v1/conversations/"+id+"/messages", map[string]string{"Authorization": e.ownerOf("acme")},
		`{"text": "Hi, Anna here.", "author": "Anna"}`)
	if ev := visitor(); !strings.Contains(ev, "event: status") || !strings.Contains(ev, `"agent"`) {
		t.Errorf("the visitor's event after the take-over: %q", ev)
	}
	ev := visitor()
	if !strings.Contains(ev, `"author":"Anna"`) || !strings.Contains(ev, "Hi, Anna here.") {
		t.Fatalf("the team's message on the visitor's stream: %q", ev)
	}
	lastID := strings.TrimPrefix(strings.Split(ev, "\n")[0], "id: ")

	// A reload resumes after the last event it saw.
	e.do(http.MethodPost, "/api/v1/conversations/"+id+"/messages", map[string]string{"Authorization": e.ownerOf("acme")}, `{"text": "Anything else?"}`)
	resumed := map[string]string{"Last-Event-ID": lastID}
	for k, v := range visitorHeaders {
		resumed[k] = v
	}
	_, again := openStream(t, e, "/api/v1/conversations/"+id+"/events", resumed)
	if ev := again(); !strings.Contains(ev, "Anything else?") {
		t.Errorf("the resumed stream's first event: %q, want the message sent after %s", ev, lastID)
	}
	if status, _ := openStream(t, e, "/api/v1/conversations/"+id+"/events", map[string]string{"X-API-Key": e.keys["acme-pk"],
		"Origin": "https://acme.example", "X-Visitor-ID": "v1", "Last-Event-ID": "x"}); status != 400 {
		t.Errorf("a bad Last-Event-ID: %d, want 400", status)
	}
}
