package llm

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// Provider is a named server of models, which a request names (assistant.Request.Provider): a plan's own
// provider, beside the runtime's default one of Config.
type Provider struct {
	// Name is how requests name the provider.
	Name string
	// BaseURL, APIKey and AzureAPIVersion are as Config's.
	BaseURL, APIKey, AzureAPIVersion string
	// Models are the models requests may name; the first answers a request that names the provider alone.
	Models []Model
}

// Model is one model of a provider and how it is asked.
type Model struct {
	// Name is the model name sent with each request, or the Azure deployment's name.
	Name string
	// Temperature, OmitTemperature, MaxTokens, MaxCompletionTokens and ContextWindow are as Config's.
	Temperature         float64
	OmitTemperature     bool
	MaxTokens           int
	MaxCompletionTokens bool
	ContextWindow       int
	// Timeouts bound how long the model is waited for.
	Timeouts Timeouts
}

// Timeouts bound how long a model is waited for before the offline answer is given. A zero bound is none.
type Timeouts struct {
	// FirstToken bounds the wait for the answer's first text or reasoning: the server reading the prompt, or a
	// server that ignores streaming writing its whole answer.
	FirstToken time.Duration
	// Idle bounds the wait between two pieces of the answer once it started: a stalled server.
	Idle time.Duration
	// Overall bounds the whole answer.
	Overall time.Duration
}

// target is a model the Responder asks, with the client that reaches its server.
type target struct {
	// provider is the provider's name, "" for the default one.
	provider string
	baseURL  string
	azure    bool
	model    Model
	client   openai.Client
	// key names the model in what is learned of it: two providers may serve models of one name differently.
	key string
}

// newTarget builds the client of model m on provider p.
func newTarget(p Provider, m Model, httpClient *http.Client) *target {
	opts := append(Endpoint(p.BaseURL, m.Name, p.APIKey, p.AzureAPIVersion), option.WithHTTPClient(httpClient),
		option.WithMaxRetries(0), option.WithMiddleware(streamOneShots))
	return &target{provider: p.Name, baseURL: p.BaseURL, azure: p.AzureAPIVersion != "", model: m,
		client: openai.NewClient(opts...), key: p.Name + "/" + m.Name}
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

// ownKey is the option that sends a merchant's own key instead of the provider's, where the server takes it.
func (t *target) ownKey(key string) []option.RequestOption { return OwnKey(key, t.azure) }

// OwnKey is the option that sends a merchant's own key instead of the provider's, to Azure's classic endpoint
// (azure) in its api-key header: the chat client's and the embeddings client's. None when key is empty.
func OwnKey(key string, azure bool) []option.RequestOption {
	switch {
	case key == "":
		return nil
	case azure:
		return []option.RequestOption{option.WithHeader("api-key", key)}
	default:
		return []option.RequestOption{option.WithAPIKey(key)}
	}
}

// targets are the models a Responder asks, by provider and model name.
type targets struct {
	byName map[string]*target
	// first is each provider's first model, which answers a request that names the provider alone.
	first map[string]*target
}

func newTargets(providers []Provider, httpClient *http.Client) targets {
	ts := targets{byName: map[string]*target{}, first: map[string]*target{}}
	for _, p := range providers {
		for i, m := range p.Models {
			t := newTarget(p, m, httpClient)
			ts.byName[t.key] = t
			if i == 0 {
				ts.first[p.Name] = t
			}
		}
	}
	return ts
}

// get is the model named by provider and model ("" for the provider's first), and whether there is one.
func (ts targets) get(provider, model string) (*target, bool) {
	if model == "" {
		t, ok := ts.first[provider]
		return t, ok
	}
	t, ok := ts.byName[provider+"/"+model]
	return t, ok
}

// errFirstToken and errIdle end a request to a model too slow to start its answer, or stalled midway.
var (
	errFirstToken = errors.New("the model wrote nothing within its first-token timeout")
	errIdle       = errors.New("the model stopped writing for longer than its idle timeout")
)

// watchdog cancels a request whose model does not start its answer within the first-token timeout, or stops
// writing it for longer than the idle timeout. The HTTP client's own timeouts cannot tell the two apart, nor
// bound the gaps of a body read in pieces.
type watchdog struct {
	timer   *time.Timer
	idle    time.Duration
	started atomic.Bool
}

// watch returns ctx cancelled by the watchdog of t, and the function that stops it. A zero bound is none.
func watch(ctx context.Context, t Timeouts) (context.Context, *watchdog, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	w := &watchdog{idle: t.Idle}
	first := t.FirstToken
	if first <= 0 {
		first = time.Duration(1<<63 - 1)
	}
	w.timer = time.AfterFunc(first, func() {
		if w.started.Load() {
			cancel(errIdle)
		} else {
			cancel(errFirstToken)
		}
	})
	return ctx, w, func() { w.timer.Stop(); cancel(nil) }
}

// wrote tells the watchdog that the model wrote a piece of its answer.
func (w *watchdog) wrote() {
	w.started.Store(true)
	if w.idle <= 0 {
		w.timer.Stop()
		return
	}
	w.timer.Reset(w.idle)
}
