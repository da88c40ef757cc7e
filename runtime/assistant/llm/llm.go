// Package llm answers visitors with a language model behind an OpenAI-compatible chat completions endpoint
// (OpenAI, Azure OpenAI, vLLM, Ollama, llama.cpp's server, LM Studio, OpenRouter), grounded in the knowledge
// items the offline index retrieves. When the model fails, times out or answers nothing, the offline answer is
// given instead: a visitor never waits on, or sees, a provider's outage.
package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"
	"unicode"

	"github.com/openai/openai-go/v3"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/parley-dev/parley/runtime/assistant"
)

// Config wires a Responder. Its BaseURL, Model and their settings are the default provider's, which answers the
// requests that name no provider; without a BaseURL those get the offline answer.
type Config struct {
	// BaseURL is the API's address, such as https://api.openai.com/v1.
	BaseURL string
	// Model is the model name sent with each request.
	Model string
	// APIKey is sent as a bearer token, or in an api-key header to Azure's classic endpoint; none is sent when
	// empty.
	APIKey string
	// AzureAPIVersion, when set, speaks to Azure OpenAI's classic deployments endpoint: BaseURL is the resource's
	// endpoint (https://NAME.openai.azure.com), Model the deployment's name.
	AzureAPIVersion string
	// Timeout bounds one answer, from the request to the last piece.
	Timeout time.Duration
	// FirstTokenTimeout bounds the wait for the answer's first text or reasoning, IdleTimeout the wait between
	// two pieces of it; zero bounds neither.
	FirstTokenTimeout, IdleTimeout time.Duration
	// Temperature is the sampling temperature.
	Temperature float64
	// OmitTemperature sends no temperature, for models that accept only their default (OpenAI's reasoning
	// models); without it, a model's refusal of the temperature is learned.
	OmitTemperature bool
	// MaxTokens caps the tokens of one answer.
	MaxTokens int
	// MaxCompletionTokens sends MaxTokens as max_completion_tokens, as OpenAI's reasoning models require;
	// without it, max_tokens is sent until the model refuses it.
	MaxCompletionTokens bool
	// ContextItems is how many retrieved knowledge items the prompt carries.
	ContextItems int
	// HistoryTokens bounds the conversation's earlier turns in the prompt, in estimated tokens.
	HistoryTokens int
	// ContextWindow is the model's context window in tokens, which the prompt and MaxTokens share; 0 cuts the
	// prompt no further than ContextItems and HistoryTokens do.
	ContextWindow int
	// Providers are further servers, which requests name.
	Providers []Provider
	// Offline answers when the model cannot, and answers greetings and thanks without asking it.
	Offline assistant.Responder
	// HTTPClient sends the requests; http.DefaultClient's transport when nil.
	HTTPClient *http.Client
	Logger     *slog.Logger
	Registry   prometheus.Registerer
}

// Responder answers with the model. It is safe for concurrent use.
type Responder struct {
	targets targets
	cfg     Config
	log     *slog.Logger
	offline *prometheus.CounterVec
	// cuts counts the prompts cut to fit the context window, by what was cut.
	cuts *prometheus.CounterVec
	// accepts is what each model accepts of the request's parameters.
	accepts *learned
	counter counter
}

var _ assistant.Responder = (*Responder)(nil)

// The reasons an answer came from the offline assistant, the values of the fallback counter's label.
const (
	reasonTimeout    = "timeout"
	reasonFirstToken = "first_token"
	reasonIdle       = "idle"
	reasonError      = "error"
	reasonEmpty      = "empty"
	// reasonUnknownModel is a bundle naming a provider or model the runtime does not declare: the operator
	// checks it, but a ChatRuntime's change may reach the runtime before the bundles that follow it.
	reasonUnknownModel = "unknown_model"
)

// New builds a Responder from cfg.
func New(cfg Config) (*Responder, error) {
	providers := cfg.Providers
	if cfg.BaseURL != "" || cfg.Model != "" {
		providers = append([]Provider{cfg.defaultProvider()}, providers...)
	}
	switch {
	case len(providers) == 0:
		return nil, errors.New("llm: a provider is required")
	case cfg.Offline == nil || cfg.Logger == nil || cfg.Registry == nil:
		return nil, errors.New("llm: the offline responder, logger and registry are required")
	case cfg.ContextItems <= 0:
		return nil, errors.New("llm: the context items must be positive")
	}
	for _, p := range providers {
		if err := p.validate(); err != nil {
			return nil, err
		}
	}
	httpClient := cfg.HTTPClient
	if httpClient == nil {
		httpClient = &http.Client{}
	}
	r := &Responder{cfg: cfg, log: cfg.Logger, counter: newCounter(), targets: newTargets(providers, httpClient),
		accepts: newLearned(wire{})}
	for _, t := range r.targets.byName {
		r.accepts.learn(t.key, wire{completionTokens: t.model.MaxCompletionTokens, defaultTemperature: t.model.OmitTemperature})
	}
	r.offline = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "parley_runtime_assistant_offline_answers_total",
		Help: "Answers given by the offline assistant because the model failed, by reason (timeout, first_token, idle, error, empty, unknown_model).",
	}, []string{"reason"})
	r.cuts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "parley_runtime_assistant_prompt_cuts_total",
		Help: "Prompts cut to fit the model's context window, by what was cut (history, items).",
	}, []string{"part"})
	for _, c := range []prometheus.Collector{r.offline, r.cuts} {
		if err := cfg.Registry.Register(c); err != nil {
			return nil, fmt.Errorf("registering the assistant's metrics: %w", err)
		}
	}
	for _, reason := range []string{reasonTimeout, reasonFirstToken, reasonIdle, reasonError, reasonEmpty, reasonUnknownModel} {
		r.offline.WithLabelValues(reason)
	}
	for _, part := range []string{cutHistory, cutItems} {
		r.cuts.WithLabelValues(part)
	}
	return r, nil
}

// defaultProvider is the provider Config's own fields describe, named "".
func (cfg Config) defaultProvider() Provider {
	return Provider{BaseURL: cfg.BaseURL, APIKey: cfg.APIKey, AzureAPIVersion: cfg.AzureAPIVersion, Models: []Model{{
		Name: cfg.Model, Temperature: cfg.Temperature, OmitTemperature: cfg.OmitTemperature, MaxTokens: cfg.MaxTokens,
		MaxCompletionTokens: cfg.MaxCompletionTokens, ContextWindow: cfg.ContextWindow,
		Timeouts: Timeouts{FirstToken: cfg.FirstTokenTimeout, Idle: cfg.IdleTimeout, Overall: cfg.Timeout}}}}
}

// validate reports what of p a Responder cannot ask.
func (p Provider) validate() error {
	if p.BaseURL == "" || len(p.Models) == 0 {
		return fmt.Errorf("llm: provider %q needs a base URL and a model", p.Name)
	}
	for _, m := range p.Models {
		switch {
		case m.Name == "":
			return fmt.Errorf("llm: provider %q has a model without a name", p.Name)
		case m.Timeouts.Overall <= 0 || m.Timeouts.FirstToken < 0 || m.Timeouts.Idle < 0 || m.MaxTokens <= 0:
			return fmt.Errorf("llm: model %q of provider %q: the timeout and max tokens must be positive", m.Name, p.Name)
		case m.ContextWindow != 0 && m.ContextWindow <= m.MaxTokens:
			return fmt.Errorf("llm: model %q of provider %q: the context window must hold more than the answer's max tokens", m.Name, p.Name)
		}
	}
	return nil
}

// Respond answers req with the model over the retrieved items, or with the offline assistant when the message is
// small talk or the model fails. A question a curated item answers (assistant.CuratedReply) gets the item's text
// as the merchant wrote it, without asking the model. Only the caller's own cancellation is returned as an error.
func (r *Responder) Respond(ctx context.Context, req assistant.Request) (assistant.Reply, error) {
	if assistant.IsSmallTalk(req.Message) {
		return r.cfg.Offline.Respond(ctx, req)
	}
	if reply, ok := assistant.CuratedReply(req); ok {
		return reply, nil
	}
	t, ok := r.targets.get(req.Provider, req.Model)
	if !ok {
		if req.Provider == "" && req.Model == "" {
			return r.cfg.Offline.Respond(ctx, req) // the runtime's default answers offline
		}
		r.offline.WithLabelValues(reasonUnknownModel).Inc()
		r.log.WarnContext(ctx, "the merchant's bundle names a model this runtime does not declare; giving the offline answer",
			"provider", req.Provider, "model", req.Model)
		return r.cfg.Offline.Respond(ctx, req)
	}
	var hits []assistant.Hit
	if req.Index.Len() > 0 {
		hits = req.Index.SearchWith(retrievalQuery(req), req.QueryVector, r.cfg.ContextItems)
	}
	reply, err := r.ask(ctx, req, t, hits)
	if err == nil {
		if reply.Answered && len(hits) > 0 {
			reply.Confidence = hits[0].Confidence // how well the items the model was given match the question
		}
		if reply.Kind == assistant.KindFallback {
			reply.Sources = r.suggestions(ctx, req)
		}
		return reply, nil
	}
	if ctx.Err() != nil {
		// The caller went away: the partial answer and its tokens, estimated, for the caller to store and count.
		return assistant.Reply{}, &assistant.InterruptedError{Partial: reply, Err: ctx.Err()}
	}
	reason := reasonError
	switch {
	case errors.Is(err, errEmpty):
		reason = reasonEmpty
	case errors.Is(err, errFirstToken):
		reason = reasonFirstToken
	case errors.Is(err, errIdle):
		reason = reasonIdle
	case errors.Is(err, context.DeadlineExceeded):
		reason = reasonTimeout
	}
	r.offline.WithLabelValues(reason).Inc()
	// err carries the status and the provider's URL, never the key: openai-go's errors omit the request headers.
	r.log.WarnContext(ctx, "the model did not answer; giving the offline answer", "reason", reason, "provider", t.provider,
		"model", t.model.Name, "error", err.Error())
	return r.cfg.Offline.Respond(ctx, req)
}

// suggestions are the items a refusal links instead of an answer, as the offline assistant's own fallback does:
// those it would cite for the question, or suggest when it has no answer either. The model refuses when the
// retrieved items do not say enough, and a near item is then still worth a click; an off-topic question gets no
// links, as the offline assistant gives none.
func (r *Responder) suggestions(ctx context.Context, req assistant.Request) []assistant.Source {
	req.Delta = nil // only its sources are used: none of its text may reach the visitor
	offline, err := r.cfg.Offline.Respond(ctx, req)
	if err != nil || (offline.Kind != assistant.KindAnswer && offline.Kind != assistant.KindFallback) {
		return nil
	}
	return offline.Sources
}

// errEmpty is a reply with no text.
var errEmpty = errors.New("the model's answer is empty")

// errCutShort is a stream that ended before its answer did: no choice finished (finish_reason), although the
// connection closed cleanly.
var errCutShort = errors.New("the model's answer ended without a finish_reason")

// maxAnswerBytesPerToken bounds the text read from the model at MaxTokens times this many bytes: a token is about
// four bytes of English, up to a few more in other scripts, so a longer answer is a provider gone wrong, and is
// not read on to the timeout (nor passed on to the visitor).
const maxAnswerBytesPerToken = 16

// maxReportedTokens bounds each count of a reported usage, above any model's context window: a provider's
// negative or absurd count would otherwise make the exchange's tokens invalid, or overflow the month's total.
const maxReportedTokens = 1 << 24

// reportedTokens is a provider's token count within 0 and maxReportedTokens.
func reportedTokens(n int64) int64 { return min(max(n, 0), maxReportedTokens) }

// ask streams the model's answer to req and reads it into a reply. A request the model refuses for a parameter
// it does not accept is asked again without it, and the model's answer remembered.
func (r *Responder) ask(ctx context.Context, req assistant.Request, t *target, hits []assistant.Hit) (assistant.Reply, error) {
	ctx, cancel := context.WithTimeout(ctx, t.model.Timeouts.Overall)
	defer cancel()
	msgs, hits := r.fit(ctx, req, t, hits)
	w := r.accepts.get(t.key)
	for {
		reply, err := r.stream(ctx, req, t, hits, msgs, w)
		next, ok := corrected(w, err)
		if !ok {
			return reply, err
		}
		r.log.InfoContext(ctx, "the model refused a parameter; asking without it from now on", "provider", t.provider,
			"model", t.model.Name, "error", err.Error())
		r.accepts.learn(t.key, next)
		w = next
	}
}

// The parts of a prompt cut to fit the context window, the values of the cut counter's label.
const (
	cutHistory = "history"
	cutItems   = "items"
)

// fit builds the prompt for req over hits within the context window, less the answer's tokens: the oldest turns
// go first, then the least relevant items, down to one. Ollama's OpenAI endpoint, for one, serves a small window
// whatever the model takes and cuts a longer prompt silently, losing the rules at its start; a prompt that does
// not fit even so is sent as it is, for the server to refuse or cut. It returns the prompt and the items it
// numbers.
func (r *Responder) fit(ctx context.Context, req assistant.Request, t *target, hits []assistant.Hit) ([]openai.ChatCompletionMessageParamUnion, []assistant.Hit) {
	history := recent(req.History, r.cfg.HistoryTokens)
	msgs := prompt(req, hits, history)
	if t.model.ContextWindow == 0 {
		return msgs, hits
	}
	budget := int64(t.model.ContextWindow - t.model.MaxTokens)
	cut := map[string]bool{}
	for r.counter.usage(msgs, "").PromptTokens > budget {
		switch {
		case len(history) > 0:
			history, cut[cutHistory] = history[1:], true
		case len(hits) > 1:
			hits, cut[cutItems] = hits[:len(hits)-1], true
		default:
			return msgs, hits
		}
		msgs = prompt(req, hits, history)
	}
	for part := range cut {
		r.cuts.WithLabelValues(part).Inc()
	}
	if len(cut) > 0 {
		r.log.DebugContext(ctx, "the prompt was cut to fit the context window", "provider", t.provider, "model", t.model.Name,
			"window", t.model.ContextWindow, "items", len(hits), "turns", len(history))
	}
	return msgs, hits
}

// completion is what one streamed chat completion returned so far.
type completion struct {
	// text is the content and reasoning as they came, which the tokens are counted from when the provider
	// reports no usage.
	text  strings.Builder
	think thoughts
	// usage is the provider's report, valid when reported.
	usage    assistant.Usage
	reported bool
	// finish is the first choice's finish_reason, empty until it came.
	finish string
}

// complete asks the model once with the parameters w and reads its streamed completion, calling each (if not nil)
// after every chunk. The model's reasoning, in reasoning_content (vLLM, DeepSeek), reasoning (Ollama,
// OpenRouter) or <think> blocks of its content (llama.cpp, vLLM without a reasoning parser), is counted but kept
// out of the answer. A watchdog ends the request when the model is slow to start or stalls (t's timeouts). With
// an error it returns what came before it, or no completion at all for one too long to be read on.
func (r *Responder) complete(ctx context.Context, t *target, key string, msgs []openai.ChatCompletionMessageParamUnion, w wire, each func(*completion)) (*completion, error) {
	m := t.model
	ctx, dog, stop := watch(ctx, m.Timeouts)
	defer stop()
	stream := t.client.Chat.Completions.NewStreaming(ctx, w.params(m.Name, msgs, m.Temperature, m.MaxTokens), t.ownKey(key)...)
	defer func() { _ = stream.Close() }()
	c := &completion{think: thoughts{inside: w.thinksUnopened}}
	limit := m.MaxTokens * maxAnswerBytesPerToken
	for stream.Next() {
		chunk := stream.Current()
		if chunk.JSON.Usage.Valid() {
			c.reported = true
			c.usage = assistant.Usage{PromptTokens: reportedTokens(chunk.Usage.PromptTokens),
				CompletionTokens: reportedTokens(chunk.Usage.CompletionTokens)}
		}
		for _, choice := range chunk.Choices {
			if choice.Index != 0 {
				continue
			}
			thought := reasoning(choice.Delta)
			if thought != "" || choice.Delta.Content != "" {
				dog.wrote()
			}
			c.text.WriteString(thought)
			c.text.WriteString(choice.Delta.Content)
			c.think.add(choice.Delta.Content)
			if choice.FinishReason != "" && c.finish == "" {
				c.think.end()
				c.finish = choice.FinishReason
			}
		}
		if c.text.Len() > limit {
			return nil, fmt.Errorf("the chat completion from %s is longer than %d bytes, %d tokens' worth", t.baseURL, limit, m.MaxTokens)
		}
		if each != nil {
			each(c)
		}
	}
	if err := stream.Err(); err != nil {
		if cause := context.Cause(ctx); errors.Is(cause, errFirstToken) || errors.Is(cause, errIdle) {
			err = cause // the watchdog's, not the cancellation it caused
		}
		return c, fmt.Errorf("the chat completion from %s: %w", t.baseURL, err)
	}
	if c.finish == "" {
		return c, fmt.Errorf("the chat completion from %s: %w", t.baseURL, errCutShort)
	}
	return c, nil
}

// stream asks the model once with the parameters w and reads its answer into a reply, passing it on as it comes.
// The model's reasoning is never passed on, stored or read as the answer.
func (r *Responder) stream(ctx context.Context, req assistant.Request, t *target, hits []assistant.Hit, msgs []openai.ChatCompletionMessageParamUnion, w wire) (assistant.Reply, error) {
	cite, sent, lone := newCiter(len(hits)), 0, 0
	c, err := r.complete(ctx, t, req.APIKey, msgs, w, func(c *completion) {
		if c.think.lone != lone {
			// What was passed on was a thought: the answer starts again. The stored reply, which the widget shows
			// once it ends, has none of it; the model is learned below, so that it happens once.
			lone, sent, cite = c.think.lone, 0, newCiter(len(hits))
		}
		sent = pass(req.Delta, cite.text(strings.TrimLeftFunc(c.think.answer(), unicode.IsSpace), false), sent)
	})
	if c == nil {
		return assistant.Reply{}, err
	}
	if c.think.lone > 0 && !w.thinksUnopened {
		r.log.InfoContext(ctx, "the model's thoughts start without <think>; holding its answers back until </think> from now on",
			"provider", t.provider, "model", t.model.Name)
		w.thinksUnopened = true
		r.accepts.learn(t.key, w)
	}
	switch {
	case errors.Is(err, errCutShort):
		return assistant.Reply{}, err
	case err != nil:
		// With the caller's cancellation, what was written, and what it cost: the provider bills the prompt whole
		// and the completion's tokens so far, and a stream cut short reports no usage of its own.
		text := cite.text(strings.TrimLeftFunc(c.think.answer(), unicode.IsSpace), true)
		return assistant.Reply{Text: text, Sources: cited(cite, hits), Kind: assistant.KindAnswer, Answered: text != "",
			Usage: assistant.Usage{PromptTokens: int64(promptTokens(msgs)), CompletionTokens: int64(tokens(text))}}, err
	}
	answer := strings.TrimSpace(cite.text(strings.TrimLeftFunc(c.think.answer(), unicode.IsSpace), true))
	if answer == "" {
		return assistant.Reply{}, errEmpty
	}
	reply := readAnswer(req, answer, cite, hits)
	if reply.Kind == assistant.KindAnswer && (c.finish == assistant.CutLength || c.finish == assistant.CutContentFilter) {
		reply.Cut, reply.Answered = c.finish, false
	}
	reply.Usage = c.usage
	if !c.reported {
		reply.Usage = r.counter.usage(msgs, c.text.String())
	}
	return reply, nil
}

// reasoning is the reasoning a delta carries apart from its content: reasoning_content as vLLM's reasoning
// parsers and DeepSeek send it, or reasoning as Ollama and OpenRouter do.
func reasoning(d openai.ChatCompletionChunkChoiceDelta) string {
	for _, name := range []string{"reasoning_content", "reasoning"} {
		// An extra field is never Valid, which only fields of the schema are; its raw JSON is what was sent.
		var s string
		if raw := d.JSON.ExtraFields[name].Raw(); raw != "" && json.Unmarshal([]byte(raw), &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

// pass gives req.Delta the text written since the first sent bytes, and returns how much has been sent. While the
// text could still become the refusal (NO_ANSWER), it is held back: the visitor sees the fallback instead.
func pass(delta func(string), text string, sent int) int {
	if delta == nil || len(text) == sent {
		return sent
	}
	if start := strings.TrimSpace(text); strings.HasPrefix(noAnswer, start) || strings.HasPrefix(start, noAnswer) {
		return sent
	}
	delta(text[sent:])
	return len(text)
}
