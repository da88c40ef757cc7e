// Package fakellm is a language model provider for tests: a real HTTP server speaking the OpenAI chat
// completions wire protocol, which records what it is sent and can be made to fail as providers do.
package fakellm

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Provider is an OpenAI-compatible chat completions server speaking the real wire protocol: server-sent events
// of chat.completion.chunk objects, then a usage chunk when asked for it, then [DONE].
type Provider struct {
	srv *httptest.Server

	mu sync.Mutex
	// Answer is sent in pieces, one chunk each.
	Answer []string
	// Status, when not 200, is answered with an OpenAI error body.
	Status int
	// Delay is waited before the first byte.
	Delay time.Duration
	// PieceDelay is waited before each piece of the answer.
	PieceDelay time.Duration
	// Stall is waited after the first piece of the answer, as a server does that stops writing midway.
	Stall time.Duration
	// Garbage, when set, is sent as the body instead of a well-formed answer.
	Garbage string
	// Finish is the answer's finish_reason: "stop" when empty, or "length" or "content_filter" for one cut short.
	Finish   string
	requests []Recorded
	// abandoned is closed when a client first closes its request before its answer ended.
	abandoned     chan struct{}
	abandonedOnce sync.Once
}

// Usage is the usage every answer reports.
const (
	PromptTokens     = 100
	CompletionTokens = 20
)

// Recorded is a request the provider received.
type Recorded struct {
	// Auth is the Authorization header.
	Auth string
	// Path is the request's path and query: /v1/chat/completions, or Azure OpenAI's classic
	// /openai/deployments/{deployment}/chat/completions?api-version=....
	Path string
	// APIKey is the api-key header, Azure OpenAI's.
	APIKey string
	Body   Request
	// Params are the names of the request's top-level parameters, such as max_tokens or temperature.
	Params []string
}

// Request is the part of a chat completions request the tests check.
type Request struct {
	Model       string  `json:"model"`
	Stream      bool    `json:"stream"`
	Temperature float64 `json:"temperature"`
	MaxTokens   int     `json:"max_tokens"`
	Messages    []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

// New starts a provider that answers with the pieces of answer, until the test ends.
func New(t testing.TB, answer ...string) *Provider {
	t.Helper()
	f := Start(answer...)
	t.Cleanup(f.Close)
	return f
}

// Start starts a provider that answers with the pieces of answer, for a TestMain that starts it before its
// tests, until Close.
func Start(answer ...string) *Provider {
	f := &Provider{Answer: answer, Status: http.StatusOK, abandoned: make(chan struct{})}
	f.srv = httptest.NewServer(f)
	return f
}

// Close stops the provider.
func (f *Provider) Close() { f.srv.Close() }

// URL is the base URL to configure, like https://api.openai.com/v1.
func (f *Provider) URL() string { return f.srv.URL + "/v1" }

// AzureEndpoint is the endpoint to configure for Azure OpenAI's classic deployments, like
// https://NAME.openai.azure.com.
func (f *Provider) AzureEndpoint() string { return f.srv.URL }

// Set changes the provider's behaviour under its lock.
func (f *Provider) Set(fn func(f *Provider)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

// Abandoned is closed once a client closed its connection while its answer was being written, as a provider sees
// a caller that stopped reading: the answer's remaining tokens are never generated.
func (f *Provider) Abandoned() <-chan struct{} { return f.abandoned }

// Requests returns the requests received so far.
func (f *Provider) Requests() []Recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Recorded(nil), f.requests...)
}

// Last returns the latest request received, failing the test when there is none.
func (f *Provider) Last(t testing.TB) Recorded {
	t.Helper()
	reqs := f.Requests()
	if len(reqs) == 0 {
		t.Fatal("the provider received no request")
	}
	return reqs[len(reqs)-1]
}

// ServeHTTP answers POST /v1/chat/completions (and Azure's classic path), so that the provider can also be
// mounted beside other handlers on one server (fakeopenai).
func (f *Provider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	azure := strings.HasPrefix(r.URL.Path, "/openai/deployments/") && strings.HasSuffix(r.URL.Path, "/chat/completions") &&
		r.URL.Query().Get("api-version") != ""
	if r.Method != http.MethodPost || (r.URL.Path != "/v1/chat/completions" && !azure) {
		http.NotFound(w, r)
		return
	}
	var body Request
	raw, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(raw, &body); err != nil {
		http.Error(w, `{"error":{"message":"bad json","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	var params map[string]json.RawMessage
	_ = json.Unmarshal(raw, &params) // an object: it decoded into body
	f.mu.Lock()
	f.requests = append(f.requests, Recorded{Auth: r.Header.Get("Authorization"), Path: r.URL.RequestURI(),
		APIKey: r.Header.Get("api-key"), Body: body, Params: slices.Sorted(maps.Keys(params))})
	answer, status, delay, pieceDelay, stall, garbage, finish := f.Answer, f.Status, f.Delay, f.PieceDelay, f.Stall, f.Garbage, f.Finish
	f.mu.Unlock()

	select {
	case <-time.After(delay):
	case <-r.Context().Done():
		return
	}
	if status != http.StatusOK {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, `{"error":{"message":"The server had an error","type":"server_error","code":null}}`)
		return
	}
	if garbage != "" {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, garbage)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	flusher := w.(http.Flusher)
	send := func(v any) {
		b, _ := json.Marshal(v)
		_, _ = fmt.Fprintf(w, "data: %s\n\n", b)
		flusher.Flush()
	}
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": body.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}, "usage": nil}
	}
	send(chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	for i, piece := range answer {
		wait := pieceDelay
		if i == 1 {
			wait += stall
		}
		select {
		case <-time.After(wait):
		case <-r.Context().Done():
			f.abandonedOnce.Do(func() { close(f.abandoned) })
			return
		}
		send(chunk(map[string]any{"content": piece}, nil))
	}
	if finish == "" {
		finish = "stop"
	}
	send(chunk(map[string]any{}, finish))
	if body.StreamOptions.IncludeUsage {
		send(map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": body.Model,
			"choices": []any{}, "usage": map[string]any{"prompt_tokens": PromptTokens, "completion_tokens": CompletionTokens,
				"total_tokens": PromptTokens + CompletionTokens}})
	}
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
	flusher.Flush()
}
