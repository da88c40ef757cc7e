package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/assistant"
)

// The error bodies servers answer a parameter they refuse with, as their documentation and issue trackers show.
const (
	// openAIRefusesMaxTokens is OpenAI's (and Azure's) answer to max_tokens sent to an o-series or gpt-5 model.
	openAIRefusesMaxTokens = `{"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.","type":"invalid_request_error","param":"max_tokens","code":"unsupported_parameter"}}`
	// openAIRefusesTemperature is their answer to a temperature other than 1 sent to the same models.
	openAIRefusesTemperature = `{"error":{"message":"Unsupported value: 'temperature' does not support 0.2 with this model. Only the default (1) value is supported.","type":"invalid_request_error","param":"temperature","code":"unsupported_value"}}`
	// azureRefusesStreamOptions is Azure OpenAI's answer to stream_options before API version 2024-10-21.
	azureRefusesStreamOptions = `{"error":{"message":"Unrecognized request argument supplied: stream_options","type":"invalid_request_error","param":null,"code":null}}`
)

// refusal is a parameter a server refuses, with its error body.
type refusal struct{ param, body string }

// profile is how one kind of server speaks the chat completions protocol.
type profile struct {
	name string
	// refuses are the parameters refused, in the order the server checks them: OpenAI reports one at a time.
	refuses []refusal
	// noUsage is a server that ignores stream_options and reports no usage (LM Studio, older Ollama).
	noUsage bool
	// oneShot is a server or gateway that ignores "stream": true and answers one chat.completion.
	oneShot bool
	// reasoningField is the delta field the model's reasoning is sent in; "" sends it in <think> blocks of the
	// content when thinks, or not at all.
	reasoningField string
	thinks         bool
	// unopened is a model whose chat template opens the <think> block in the prompt: it sends only </think>.
	unopened bool
	// finish is the answer's finish_reason when not "stop": length or content_filter, an answer cut short.
	finish string
	// azure is the api-version of an Azure OpenAI classic endpoint: the deployment in the path, the key in an
	// api-key header.
	azure string
}

// The answer and reasoning every profile's model gives. The reasoning mentions the refusal marker, as a thought
// weighing whether to refuse does.
var (
	profileAnswer    = []string{"Delivery to Canada ", "takes 5 to 8 ", "business days [1]."}
	profileReasoning = []string{"The visitor asks about Canada. If no item said it I would reply NO_", "ANSWER, but item 1 does."}
)

const profileUsagePrompt, profileUsageCompletion = 321, 45

// profiles are the servers people run, as their documentation and issue trackers describe them.
var profiles = []profile{
	{name: "OpenAI chat model"},
	{name: "OpenAI reasoning model", refuses: []refusal{{paramMaxTokens, openAIRefusesMaxTokens}, {paramTemperature, openAIRefusesTemperature}}},
	// Azure before 2024-10-21 refuses stream_options, so it cannot be asked for the usage.
	{name: "Azure OpenAI before 2024-10-21", refuses: []refusal{{paramStreamOptions, azureRefusesStreamOptions}}, noUsage: true,
		azure: "2024-06-01"},
	{name: "Azure OpenAI reasoning deployment", refuses: []refusal{{paramMaxTokens, openAIRefusesMaxTokens}, {paramTemperature, openAIRefusesTemperature}},
		azure: "2024-12-01-preview"},
	// Ollama thinks by default and sends its thoughts in "reasoning"; before 0.5 it sent no streamed usage.
	{name: "Ollama", noUsage: true, reasoningField: "reasoning"},
	// vLLM with a reasoning parser sends reasoning_content; without one, <think> blocks in the content.
	{name: "vLLM with a reasoning parser", reasoningField: "reasoning_content"},
	{name: "vLLM without a reasoning parser", thinks: true},
	// llama.cpp's server with --reasoning-format none streams the thoughts in the content.
	{name: "llama.cpp server", thinks: true},
	// DeepSeek-R1's distillations and QwQ: the template opens the block, the model closes it.
	{name: "llama.cpp server, template opening <think>", thinks: true, unopened: true},
	{name: "LM Studio", noUsage: true},
	{name: "gateway ignoring stream", oneShot: true, reasoningField: "reasoning_content"},
	{name: "gateway ignoring stream, template opening <think>", oneShot: true, thinks: true, unopened: true},
	// An answer cut by the token limit, or by Azure's content filter, is given but is no full answer.
	{name: "vLLM at its token limit", finish: assistant.CutLength},
	{name: "Azure OpenAI content filter", finish: assistant.CutContentFilter, azure: "2024-10-21"},
}

// thought is the reasoning as the content carries it, or "".
func (p profile) thought() string {
	switch {
	case !p.thinks:
		return ""
	case p.unopened:
		return strings.Join(profileReasoning, "") + "\n</think>\n\n"
	}
	return "<think>\n" + strings.Join(profileReasoning, "") + "\n</think>\n\n"
}

// completionTokens are the tokens of all the model sends, reasoning included, as o200k_base counts them.
func (p profile) completionTokens() int64 {
	sent := strings.Join(profileAnswer, "")
	if p.reasoningField != "" {
		sent = strings.Join(profileReasoning, "") + sent
	}
	return newCounter().count(sent)
}

// profileServer is a chat completions server behaving as p, recording the parameters of each request.
type profileServer struct {
	p   profile
	srv *httptest.Server

	mu       sync.Mutex
	requests []map[string]any
}

func newProfileServer(t *testing.T, p profile) *profileServer {
	t.Helper()
	s := &profileServer{p: p}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// url is the base URL to configure: Azure's classic endpoint is the resource's, the others end in /v1.
func (s *profileServer) url() string {
	if s.p.azure != "" {
		return s.srv.URL
	}
	return s.srv.URL + "/v1"
}

// azureUnauthorized is Azure OpenAI's answer to a request without its api-key header.
const azureUnauthorized = `{"error":{"code":"401","message":"Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource."}}`

// authorized reports whether r reaches the server the way it takes requests, answering it when not.
func (s *profileServer) authorized(w http.ResponseWriter, r *http.Request) bool {
	if s.p.azure == "" {
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer "+testKey {
			http.Error(w, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`, http.StatusUnauthorized)
			return false
		}
		return true
	}
	switch {
	case r.URL.Path != "/openai/deployments/test-model/chat/completions" || r.URL.Query().Get("api-version") != s.p.azure:
		http.Error(w, `{"error":{"code":"404","message":"Resource not found"}}`, http.StatusNotFound)
		return false
	case r.Header.Get("api-key") != testKey || r.Header.Get("Authorization") != "":
		http.Error(w, azureUnauthorized, http.StatusUnauthorized)
		return false
	}
	return true
}

func (s *profileServer) received() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]any(nil), s.requests...)
}

func (s *profileServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	if !s.authorized(w, r) {
		return
	}
	var body map[string]any
	raw, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(raw, &body); err != nil {
		http.Error(w, `{"error":{"message":"bad json","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, body)
	s.mu.Unlock()
	for _, ref := range s.p.refuses {
		if _, sent := body[ref.param]; sent {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, ref.body)
			return
		}
	}
	usage := map[string]any{"prompt_tokens": profileUsagePrompt, "completion_tokens": profileUsageCompletion,
		"total_tokens": profileUsagePrompt + profileUsageCompletion}
	if s.p.oneShot {
		msg := map[string]any{"role": "assistant", "content": s.p.thought() + strings.Join(profileAnswer, "")}
		if s.p.reasoningField != "" {
			msg[s.p.reasoningField] = strings.Join(profileReasoning, "")
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "chatcmpl-1", "object": "chat.completion", "created": 1,
			"model": body["model"], "choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": "stop"}},
			"usage": usage})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	send := func(delta map[string]any, finish any, usage any) {
		b, _ := json.Marshal(map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
			"model": body["model"], "choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
			"usage": usage})
		_, _ = fmt.Fprintf(w, "data: %s\n\n", b)
	}
	send(map[string]any{"role": "assistant", "content": ""}, nil, nil)
	switch {
	case s.p.reasoningField != "":
		for _, piece := range profileReasoning {
			send(map[string]any{s.p.reasoningField: piece}, nil, nil)
		}
	case s.p.thinks:
		// The tags split across chunks, as a model's tokens split them.
		thought := s.p.thought()
		for i := 0; i < len(thought); i += 5 {
			send(map[string]any{"content": thought[i:min(i+5, len(thought))]}, nil, nil)
		}
	}
	for _, piece := range profileAnswer {
		send(map[string]any{"content": piece}, nil, nil)
	}
	finish := "stop"
	if s.p.finish != "" {
		finish = s.p.finish
	}
	send(map[string]any{}, finish, nil)
	if opts, ok := body["stream_options"].(map[string]any); ok && opts["include_usage"] == true && !s.p.noUsage {
		b, _ := json.Marshal(map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
			"model": body["model"], "choices": []any{}, "usage": usage})
		_, _ = fmt.Fprintf(w, "data: %s\n\n", b)
	}
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
}

// TestEveryServerProfileGivesTheModelsAnswer: for each kind of server, the visitor gets the model's answer, not
// the offline one, streamed and stored without any of its reasoning, with its tokens counted; a parameter the
// model refuses is learned from its first refusal and never sent again.
func TestEveryServerProfileGivesTheModelsAnswer(t *testing.T) {
	want := strings.Join(profileAnswer, "")
	for _, p := range profiles {
		t.Run(p.name, func(t *testing.T) {
			s := newProfileServer(t, p)
			h := newResponder(t, s.url(), 5*time.Second, func(c *Config) { c.AzureAPIVersion = p.azure })
			for ask := range 2 {
				var streamed strings.Builder
				req := question("How long does delivery to Canada take?")
				req.Delta = func(piece string) { streamed.WriteString(piece) }
				reply, err := h.r.Respond(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				if reply.Kind != assistant.KindAnswer || reply.Answered != (p.finish == "") || reply.Cut != p.finish || reply.Text != want {
					t.Fatalf("ask %d: reply %+v, want the model's answer %q, cut %q", ask, reply, want, p.finish)
				}
				switch {
				case p.unopened && ask == 0:
					// Until its first lone </think>, the model's thought could not be told from an answer: the answer
					// is streamed again after it, and the stored reply replaces both.
					if !strings.HasSuffix(streamed.String(), want) {
						t.Errorf("ask %d: streamed %q, want it to end with %q", ask, streamed.String(), want)
					}
				case streamed.String() != want:
					t.Errorf("ask %d: streamed %q, want %q", ask, streamed.String(), want)
				}
				if len(reply.Sources) != 1 || reply.Sources[0].KnowledgeID != "kn_ship" {
					t.Errorf("ask %d: sources %+v", ask, reply.Sources)
				}
				switch {
				case p.noUsage && (reply.Usage.PromptTokens < 100 || reply.Usage.CompletionTokens != p.completionTokens()):
					t.Errorf("ask %d: usage %+v, want the tokens counted, %d of them the answer's and its reasoning's", ask, reply.Usage, p.completionTokens())
				case !p.noUsage && reply.Usage != (assistant.Usage{PromptTokens: profileUsagePrompt, CompletionTokens: profileUsageCompletion}):
					t.Errorf("ask %d: usage %+v, want the reported one", ask, reply.Usage)
				}
			}
			reqs := s.received()
			if len(reqs) != len(p.refuses)+2 {
				t.Fatalf("%d requests for 2 answers with %d refused parameters: a refusal is not learned once", len(reqs), len(p.refuses))
			}
			last := reqs[len(reqs)-1]
			for _, ref := range p.refuses {
				if _, sent := last[ref.param]; sent {
					t.Errorf("the refused %s is still sent: %v", ref.param, last)
				}
			}
			if _, ok := last[paramMaxTokens]; !ok && last[paramMaxCompletionTokens] != float64(300) {
				t.Errorf("no limit of the answer's tokens is sent: %v", last)
			}
			if n := h.logs.String(); strings.Contains(n, "offline") {
				t.Errorf("logs %s", n)
			}
		})
	}
}
