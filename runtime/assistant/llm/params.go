package llm

import (
	"errors"
	"net/http"
	"strings"
	"sync"

	"github.com/openai/openai-go/v3"
)

// The names of the request parameters a model may refuse, as servers name them in their errors.
const (
	paramMaxTokens           = "max_tokens"
	paramMaxCompletionTokens = "max_completion_tokens"
	paramTemperature         = "temperature"
	paramStreamOptions       = "stream_options"
)

// wire is what a model accepts of the parameters a request may carry. Its zero value is what every compatible
// server reads; each field only ever turns true, learned from a refusal or set by the configuration, so that a
// request is corrected at most once per parameter.
type wire struct {
	// completionTokens sends max_completion_tokens instead of max_tokens: OpenAI's o-series and gpt-5 models,
	// and Azure deployments of them, refuse max_tokens.
	completionTokens bool
	// defaultTemperature sends no temperature: the same models accept only their default.
	defaultTemperature bool
	// noStreamUsage sends no stream_options: Azure API versions before 2024-10-21 refuse it.
	noStreamUsage bool
	// thinksUnopened is a model whose content starts inside a <think> block its chat template opened, learned
	// from its first lone </think>: its content is held back until the block closes.
	thinksUnopened bool
}

// params is the request for msgs under w.
func (w wire) params(model string, msgs []openai.ChatCompletionMessageParamUnion, temperature float64, maxTokens int) openai.ChatCompletionNewParams {
	p := openai.ChatCompletionNewParams{Model: model, Messages: msgs}
	if w.completionTokens {
		p.MaxCompletionTokens = openai.Int(int64(maxTokens))
	} else {
		p.MaxTokens = openai.Int(int64(maxTokens))
	}
	if !w.defaultTemperature {
		p.Temperature = openai.Float(temperature)
	}
	if !w.noStreamUsage {
		p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	}
	return p
}

// corrected is w changed to do without the parameter err refuses, and whether err is such a refusal that w can
// still answer. A refusal is a 400 naming the parameter: OpenAI's documented error names it in "param" (with
// the code unsupported_parameter or unsupported_value); Azure's older API versions only in the message
// ("Unrecognized request argument supplied: stream_options").
func corrected(w wire, err error) (wire, bool) {
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest {
		return w, false
	}
	next := w
	switch refusedParam(apiErr) {
	case paramMaxTokens:
		next.completionTokens = true
	case paramTemperature:
		next.defaultTemperature = true
	case paramStreamOptions:
		next.noStreamUsage = true
	}
	return next, next != w
}

// refusedParam is the parameter a 400 refuses, or "" when it names none the runtime can do without.
func refusedParam(e *openai.Error) string {
	if p := e.Param; p != "" {
		// "stream_options.include_usage" is a part of stream_options.
		p, _, _ = strings.Cut(p, ".")
		return p
	}
	msg := e.Message
	for _, p := range []string{paramMaxTokens, paramTemperature, paramStreamOptions} {
		if strings.Contains(msg, "'"+p+"'") || strings.Contains(msg, "supplied: "+p) {
			return p
		}
	}
	return ""
}

// learned remembers, per model, the parameters it accepts, so that a refusal is paid for once.
type learned struct {
	initial wire
	mu      sync.Mutex
	byModel map[string]wire
}

func newLearned(initial wire) *learned { return &learned{initial: initial, byModel: map[string]wire{}} }

// get is what model is known to accept.
func (l *learned) get(model string) wire {
	l.mu.Lock()
	defer l.mu.Unlock()
	if w, ok := l.byModel[model]; ok {
		return w
	}
	return l.initial
}

// learn records that model accepts w, adding to what was learned meanwhile by answers asked concurrently.
func (l *learned) learn(model string, w wire) {
	l.mu.Lock()
	defer l.mu.Unlock()
	old, ok := l.byModel[model]
	if !ok {
		old = l.initial
	}
	l.byModel[model] = wire{completionTokens: w.completionTokens || old.completionTokens,
		defaultTemperature: w.defaultTemperature || old.defaultTemperature, noStreamUsage: w.noStreamUsage || old.noStreamUsage,
		thinksUnopened: w.thinksUnopened || old.thinksUnopened}
}
