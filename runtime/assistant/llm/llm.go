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
	"net/url"
	"strings"
	"time"
	"unicode"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/parley-dev/parley/runtime/assistant"
)

// Config wires a Responder.
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
	// Offline answers when the model cannot, and answers greetings and thanks without asking it.
	Offline assistant.Responder
	// HTTPClient sends the requests; http.DefaultClient's transport when nil.
	HTTPClient *http.Client
	Logger     *slog.Logger
	Registry   prometheus.Registerer
}

// Responder answers with the model. It is safe for concurrent use.
type Responder struct {
	client  openai.Client
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
	reasonTimeout = "timeout"
	reasonError   = "error"
	reasonEmpty   = "empty"
)

// New builds a Responder from cfg.
func New(cfg Config) (*Responder, error) {
	switch {
	case cfg.BaseURL == "" || cfg.Model == "":
		return nil, errors.New("llm: the base URL and the model are required")
	case cfg.Offline == nil || cfg.Logger == nil || cfg.Registry == nil:
		return nil, errors.New("llm: the offline responder, logger and registry are required")
	case cfg.Timeout <= 0 || cfg.MaxTokens <= 0 || cfg.ContextItems <= 0:
		return nil, errors.New("llm: the timeout, max tokens and context items must be positive")
	case cfg.ContextWindow != 0 && cfg.ContextWindow <= cfg.MaxTokens:
		return nil, errors.New("llm: the context window must hold more than the answer's max tokens")
	}
	httpClient := cfg.HTTPClient
	if httpClient == nil {
		httpClient = &http.Client{}
	}
	r := &Responder{cfg: cfg, log: cfg.Logger, counter: newCounter(),
		accepts: newLearned(wire{completionTokens: cfg.MaxCompletionTokens, defaultTemperature: cfg.OmitTemperature})}
	r.client = openai.NewClient(append(Endpoint(cfg.BaseURL, cfg.Model, cfg.APIKey, cfg.AzureAPIVersion), option.WithHTTPClient(httpClient), option.WithMaxRetries(0),
		option.WithMiddleware(streamOneShots))...)
	r.offline = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "parley_runtime_assistant_offline_answers_total",
		Help: "Answers given by the offline assistant because the model failed, by reason (timeout, error, empty).",
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
	for _, reason := range []string{reasonTimeout, reasonError, reasonEmpty} {
		r.offline.WithLabelValues(reason)
	}
	for _, part := range []string{cutHistory, cutItems} {
		r.cuts.WithLabelValues(part)
	}
	return r, nil
}

// Endpoint are the options that address an OpenAI-compatible server at baseURL for model and give it apiKey:
// the chat client's and the embeddings client's. They are explicit, so that no OPENAI_* variable of the
// environment changes where the key goes. A non-empty azureAPIVersion speaks to Azure OpenAI's classic
// deployments endpoint, baseURL being the resource's endpoint and model the deployment's name.
func Endpoint(baseURL, model, apiKey, azureAPIVersion string) []option.RequestOption {
	if azureAPIVersion == "" {
		return []option.RequestOption{option.WithBaseURL(baseURL), option.WithAPIKey(apiKey)}
	}
	// Azure's classic endpoint names the deployment in the path and the API version in the query, and takes the
	// key in its own header; the model in the body is ignored.
	opts := []option.RequestOption{option.WithAPIKey(""), option.WithQuery("api-version", azureAPIVersion),
		option.WithBaseURL(strings.TrimSuffix(baseURL, "/") + "/openai/deployments/" + url.PathEscape(model))}
	if apiKey != "" {
		opts = append(opts, option.WithHeader("api-key", apiKey))
	}
	return opts
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
	var hits []assistant.Hit
	if req.Index.Len() > 0 {
		hits = req.Index.SearchWith(retrievalQuery(req), req.QueryVector, r.cfg.ContextItems)
	}
	reply, err := r.ask(ctx, req, hits)
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
	case errors.Is(err, context.DeadlineExceeded):
		reason = reasonTimeout
	}
	r.offline.WithLabelValues(reason).Inc()
	// err carries the status and the provider's URL, never the key: openai-go's errors omit the request headers.
	r.log.WarnContext(ctx, "the model did not answer; giving the offline answer", "reason", reason, "model", r.cfg.Model,
		"error", err.Error())
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
func (r *Responder) ask(ctx context.Context, req assistant.Request, hits []assistant.Hit) (assistant.Reply, error) {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	msgs, hits := r.fit(ctx, req, hits)
	w := r.accepts.get(r.cfg.Model)
	for {
		reply, err := r.stream(ctx, req, hits, msgs, w)
		next, ok := corrected(w, err)
		if !ok {
			return reply, err
		}
		r.log.InfoContext(ctx, "the model refused a parameter; asking without it from now on", "model", r.cfg.Model,
			"error", err.Error())
		r.accepts.learn(r.cfg.Model, next)
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
func (r *Responder) fit(ctx context.Context, req assistant.Request, hits []assistant.Hit) ([]openai.ChatCompletionMessageParamUnion, []assistant.Hit) {
	history := recent(req.History, r.cfg.HistoryTokens)
	msgs := prompt(req, hits, history)
	if r.cfg.ContextWindow == 0 {
		return msgs, hits
	}
	budget := int64(r.cfg.ContextWindow - r.cfg.MaxTokens)
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
		r.log.DebugContext(ctx, "the prompt was cut to fit the context window", "model", r.cfg.Model,
			"window", r.cfg.ContextWindow, "items", len(hits), "turns", len(history))
	}
	return msgs, hits
}

// stream asks the model once with the parameters w and reads its answer into a reply. The model's reasoning,
// in reasoning_content (vLLM, DeepSeek), reasoning (Ollama, OpenRouter) or <think> blocks of its content
// (llama.cpp, vLLM without a reasoning parser), is counted but never passed on, stored or read as the answer.
func (r *Responder) stream(ctx context.Context, req assistant.Request, hits []assistant.Hit, msgs []openai.ChatCompletionMessageParamUnion, w wire) (assistant.Reply, error) {
	stream := r.client.Chat.Completions.NewStreaming(ctx, w.params(r.cfg.Model, msgs, r.cfg.Temperature, r.cfg.MaxTokens))
	defer func() { _ = stream.Close() }()
	var completion strings.Builder
	var usage assistant.Usage
	think, cite := thoughts{inside: w.thinksUnopened}, newCiter(len(hits))
	reported, sent, lone, finish, limit := false, 0, 0, "", r.cfg.MaxTokens*maxAnswerBytesPerToken
	for stream.Next() {
		chunk := stream.Current()
		if chunk.JSON.Usage.Valid() {
			reported = true
			usage = assistant.Usage{PromptTokens: reportedTokens(chunk.Usage.PromptTokens),
				CompletionTokens: reportedTokens(chunk.Usage.CompletionTokens)}
		}
		for _, c := range chunk.Choices {
			if c.Index != 0 {
				continue
			}
			completion.WriteString(reasoning(c.Delta))
			completion.WriteString(c.Delta.Content)
			think.add(c.Delta.Content)
			if c.FinishReason != "" && finish == "" {
				think.end()
				finish = c.FinishReason
			}
		}
		if completion.Len() > limit {
			return assistant.Reply{}, fmt.Errorf("the chat completion from %s is longer than %d bytes, %d tokens' worth", r.cfg.BaseURL, limit, r.cfg.MaxTokens)
		}
		if think.lone != lone {
			// What was passed on was a thought: the answer starts again. The stored reply, which the widget shows
			// once it ends, has none of it; the model is learned below, so that it happens once.
			lone, sent, cite = think.lone, 0, newCiter(len(hits))
		}
		sent = pass(req.Delta, cite.text(strings.TrimLeftFunc(think.answer(), unicode.IsSpace), false), sent)
	}
	if think.lone > 0 && !w.thinksUnopened {
		r.log.InfoContext(ctx, "the model's thoughts start without <think>; holding its answers back until </think> from now on",
			"model", r.cfg.Model)
		w.thinksUnopened = true
		r.accepts.learn(r.cfg.Model, w)
	}
	if err := stream.Err(); err != nil {
		// With the caller's cancellation, what was written, and what it cost: the provider bills the prompt whole
		// and the completion's tokens so far, and a stream cut short reports no usage of its own.
		text := cite.text(strings.TrimLeftFunc(think.answer(), unicode.IsSpace), true)
		partial := assistant.Reply{Text: text, Sources: cited(cite, hits), Kind: assistant.KindAnswer, Answered: text != "",
			Usage: assistant.Usage{PromptTokens: int64(promptTokens(msgs)), CompletionTokens: int64(tokens(text))}}
		return partial, fmt.Errorf("the chat completion from %s: %w", r.cfg.BaseURL, err)
	}
	if finish == "" {
		return assistant.Reply{}, fmt.Errorf("the chat completion from %s: %w", r.cfg.BaseURL, errCutShort)
	}
	answer := strings.TrimSpace(cite.text(strings.TrimLeftFunc(think.answer(), unicode.IsSpace), true))
	if answer == "" {
		return assistant.Reply{}, errEmpty
	}
	reply := readAnswer(req, answer, cite, hits)
	if reply.Kind == assistant.KindAnswer && (finish == assistant.CutLength || finish == assistant.CutContentFilter) {
		reply.Cut, reply.Answered = finish, false
	}
	reply.Usage = usage
	if !reported {
		reply.Usage = r.counter.usage(msgs, completion.String())
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
