package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/parley-dev/parley/internal/testutil/fakellm"
	"github.com/parley-dev/parley/runtime/assistant"
	"github.com/parley-dev/parley/runtime/assistant/llm"
	"github.com/parley-dev/parley/runtime/tenant"
)

// withModel answers with a model behind provider, falling back to retrieval.
func withModel(t testing.TB, provider *fakellm.Provider) envOption {
	return func(c *envConfig) {
		r, err := llm.New(llm.Config{BaseURL: provider.URL(), Model: "m", Timeout: 5 * time.Second, MaxTokens: 100,
			ContextItems: 3, HistoryTokens: 500, Offline: assistant.Retrieval{}, Logger: slog.New(slog.DiscardHandler),
			Registry: prometheus.NewRegistry()})
		if err != nil {
			t.Fatal(err)
		}
		c.chat.Responder = r
	}
}

type sseEvent struct {
	name string
	data map[string]any
}

// openStream posts a chat message asking for server-sent events and returns the response, unread.
func (e *env) openStream(key, body string) *http.Response {
	e.t.Helper()
	req, err := http.NewRequestWithContext(e.t.Context(), http.MethodPost, e.url+"/api/v1/chat", strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("X-API-Key", key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	return res
}

// readEvents reads server-sent events until the stream ends.
func readEvents(t *testing.T, r io.Reader) []sseEvent {
	t.Helper()
	var events []sseEvent
	sc := bufio.NewScanner(r)
	var ev sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			ev.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev.data); err != nil {
				t.Fatalf("event data %q: %v", line, err)
			}
		case line == "":
			events = append(events, ev)
			ev = sseEvent{}
		}
	}
	return events
}

// streamed collects a stream's deltas and its final reply, checking the order of the events.
func streamed(t *testing.T, events []sseEvent) (deltas []string, reply map[string]any) {
	t.Helper()
	if len(events) < 3 || events[len(events)-1].name != "end" || events[len(events)-2].name != "sources" {
		t.Fatalf("events %+v", events)
	}
	for _, ev := range events[:len(events)-2] {
		if ev.name != "delta" {
			t.Fatalf("event %q before the sources", ev.name)
		}
		deltas = append(deltas, ev.data["text"].(string))
	}
	return deltas, events[len(events)-2].data
}

func TestStreamedAndPlainAnswersAgree(t *testing.T) {
	provider := fakellm.New(t, "Returns ", "are free ", "within 60 days [1].")
	e := newEnv(t, withModel(t, provider))
	id := e.addKnowledge("alpha", "Returns", "You can return unworn items within 60 days for a full refund.")

	plain := e.chat(e.keys["alpha-sk"], `{"message": "How long can I return things?"}`)
	if plain.status != http.StatusOK {
		t.Fatalf("%d %s", plain.status, plain.body)
	}
	res := e.openStream(e.keys["alpha-sk"], `{"message": "How long can I return things?"}`)
	defer func() { _ = res.Body.Close() }()
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	// The document's event stream is a string to kin-openapi; the events are checked below. No test here runs in
	// parallel, so registering the decoder races with no validation.
	openapi3filter.RegisterBodyDecoder(contentTypeEventStream, openapi3filter.PlainBodyDecoder)
	e.validateResponse(res.Request, res, body)
	deltas, reply := streamed(t, readEvents(t, bytes.NewReader(body)))
	if len(deltas) != 3 || strings.Join(deltas, "") != reply["answer"] {
		t.Errorf("deltas %q, answer %q", deltas, reply["answer"])
	}
	want := plain.json(t)
	if reply["answer"] != want["answer"] || reply["answered"] != true || reply["conversation_id"] == want["conversation_id"] {
		t.Errorf("streamed %v, plain %v", reply, want)
	}
	sources := reply["sources"].([]any)
	if len(sources) != 1 || sources[0].(map[string]any)["knowledge_id"] != id {
		t.Errorf("sources %v", sources)
	}
	conv := e.do(http.MethodGet, "/api/v1/conversations/"+reply["conversation_id"].(string),
		map[string]string{"Authorization": e.ownerOf("alpha")}, "")
	if conv.status != http.StatusOK || !strings.Contains(string(conv.body), "within 60 days [1].") {
		t.Errorf("stored conversation: %d %s", conv.status, conv.body)
	}
}

// TestACutAnswerSaysSo: an answer the model's token limit or its provider's content filter ended is given as far
// as it goes, streamed or not, with the reason, and not counted as answered.
func TestACutAnswerSaysSo(t *testing.T) {
	for _, finish := range []string{"length", "content_filter"} {
		t.Run(finish, func(t *testing.T) {
			provider := fakellm.New(t, "Returns ", "are free ", "within 60")
			provider.Set(func(p *fakellm.Provider) { p.Finish = finish })
			e := newEnv(t, withModel(t, provider))
			e.addKnowledge("alpha", "Returns", "You can return unworn items within 60 days for a full refund.")
			plain := e.chat(e.keys["alpha-sk"], `{"message": "How long can I return things?"}`)
			if got := plain.json(t); plain.status != http.StatusOK || got["answer"] != "Returns are free within 60" ||
				got["answered"] != false || got["finish_reason"] != finish {
				t.Errorf("%d %s", plain.status, plain.body)
			}
			res := e.openStream(e.keys["alpha-sk"], `{"message": "How long can I return things?"}`)
			defer func() { _ = res.Body.Close() }()
			body, err := io.ReadAll(res.Body)
			if err != nil {
				t.Fatal(err)
			}
			openapi3filter.RegisterBodyDecoder(contentTypeEventStream, openapi3filter.PlainBodyDecoder)
			e.validateResponse(res.Request, res, body)
			if _, reply := streamed(t, readEvents(t, bytes.NewReader(body))); reply["answered"] != false || reply["finish_reason"] != finish {
				t.Errorf("streamed %v", reply)
			}
		})
	}
}

func TestAnOfflineAnswerStreamsWhole(t *testing.T) {
	e := newEnv(t)
	e.addKnowledge("alpha", "Returns", "You can return unworn items within 60 days for a full refund.")
	res := e.openStream(e.keys["alpha-sk"], `{"message": "How long can I return things?"}`)
	defer func() { _ = res.Body.Close() }()
	deltas, reply := streamed(t, readEvents(t, res.Body))
	if len(deltas) != 1 || deltas[0] != reply["answer"] || !strings.Contains(deltas[0], "60 days") {
		t.Errorf("deltas %q, reply %v", deltas, reply)
	}
}

func TestAStreamRefusedBeforeItStartsIsAJSONError(t *testing.T) {
	e := newEnv(t)
	e.addMerchant("full", func(b *tenant.Bundle) { b.Plan.MonthlyConversations = 1 })
	if r := e.chat(e.keys["full-sk"], `{"message": "hi"}`); r.status != http.StatusOK {
		t.Fatalf("%d %s", r.status, r.body)
	}
	res := e.openStream(e.keys["full-sk"], `{"message": "hi"}`)
	defer func() { _ = res.Body.Close() }()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(body), `"code":"conversation_quota_exceeded"`) {
		t.Errorf("%d %s", res.StatusCode, body)
	}
	res = e.openStream(e.keys["alpha-sk"], `{"message": ""}`)
	defer func() { _ = res.Body.Close() }()
	if res.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("an empty message: %d", res.StatusCode)
	}
}

// TestAVisitorWhoLeavesMidStreamStopsTheModel: the visitor closes the connection after the first piece; the
// provider sees its request closed before the answer ends, and the conversation holds the question with the part
// of the answer written, its tokens counted against the merchant.
func TestAVisitorWhoLeavesMidStreamStopsTheModel(t *testing.T) {
	provider := fakellm.New(t, "Returns ", "are free ", "within ", "60 days [1].")
	provider.Set(func(p *fakellm.Provider) { p.PieceDelay = 500 * time.Millisecond })
	e := newEnv(t, withModel(t, provider))
	e.addKnowledge("alpha", "Returns", "You can return unworn items within 60 days for a full refund.")

	res := e.openStream(e.keys["alpha-sk"], `{"message": "How long can I return things?", "conversation_id": "conv-leaving"}`)
	first, err := bufio.NewReader(res.Body).ReadString('\n')
	if err != nil || first != "event: delta\n" {
		t.Fatalf("first line %q, %v", first, err)
	}
	_ = res.Body.Close()

	select {
	case <-provider.Abandoned():
	case <-time.After(10 * time.Second): // a bound on a stalled peer: the whole answer takes 2 s
		t.Fatal("the model went on writing the answer after the visitor left")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, msgs, err := e.store.GetConversation(t.Context(), "alpha", "conv-leaving")
		if err == nil {
			if len(msgs) != 2 || msgs[0].Text != "How long can I return things?" || !strings.HasPrefix(msgs[1].Text, "Returns ") ||
				msgs[1].Text == "Returns are free within 60 days [1]." {
				t.Fatalf("stored %+v; want the question and the part of the answer written", msgs)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the conversation was not stored: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if used, err := e.store.TokensThisMonth(t.Context(), "alpha", time.Now()); err != nil || used <= 0 {
		t.Errorf("tokens counted for the interrupted answer: %d, %v; want some", used, err)
	}
}
