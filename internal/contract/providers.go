package contract

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// EnvProviderAPIKeyPrefix starts the variable that holds a --providers provider's key: the provider's name
// follows, upper-cased, with '-' as '_' (EnvProviderAPIKey). Keys are never flags, which the process list shows.
const EnvProviderAPIKeyPrefix = "PARLEY_PROVIDER_API_KEY_"

// EnvProviderAPIKey is the variable that holds the key of the provider named name.
func EnvProviderAPIKey(name string) string {
	return EnvProviderAPIKeyPrefix + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// RuntimeReadsEnv reports whether `parley runtime` reads the variable name: one of RuntimeEnv, or a provider's
// key.
func RuntimeReadsEnv(name string) bool {
	for _, e := range RuntimeEnv() {
		if e == name {
			return true
		}
	}
	return strings.HasPrefix(name, EnvProviderAPIKeyPrefix) && len(name) > len(EnvProviderAPIKeyPrefix)
}

// Timeouts bound how long the runtime waits on a model before it gives the offline answer. The defaults suit a
// small model on a CPU-only server, the slowest a platform runs (docs/operating.md, "Timeouts").
type Timeouts struct {
	// FirstToken bounds the wait for the answer's first text or reasoning: the server's reading of the prompt.
	FirstToken time.Duration
	// Idle bounds the wait between two pieces of the answer once it started: a stalled server.
	Idle time.Duration
	// Overall bounds the whole answer.
	Overall time.Duration
}

// The default timeouts of a model, and the most any may be.
const (
	// DefaultFirstTokenTimeout lets a CPU-only server read a prompt of five knowledge items and some history
	// (about 2,000 tokens) at 100 tokens a second or more, its model loaded.
	DefaultFirstTokenTimeout = 30 * time.Second
	// DefaultIdleTimeout is far longer than the gap between two tokens of a server still writing (a fraction of
	// a second), and short enough that a stalled one does not keep the visitor waiting long.
	DefaultIdleTimeout = 10 * time.Second
	// DefaultModelTimeout lets a 512-token answer come at 5 tokens a second, a small model on a few CPU cores,
	// after its first token.
	DefaultModelTimeout = 120 * time.Second
	// MaxModelTimeout bounds each timeout; the runtime keeps a chat request's response open as long
	// (runtime/server).
	MaxModelTimeout = 300 * time.Second
)

// validate reports the first timeout out of its range; flags names the flags or fields for the message.
func (t Timeouts) validate(what string) error {
	for _, d := range []time.Duration{t.FirstToken, t.Idle, t.Overall} {
		if d <= 0 || d > MaxModelTimeout {
			return fmt.Errorf("%s: every timeout must be positive and at most %s", what, MaxModelTimeout)
		}
	}
	return nil
}

// Provider is a named OpenAI-compatible chat completions server of --providers, which tenant bundles name (a
// Plan's spec.assistant.provider).
type Provider struct {
	// Name is how bundles name the provider, a DNS label.
	Name string `json:"name"`
	// BaseURL is the API's address, such as http://ollama.ai.svc:11434/v1.
	BaseURL string `json:"baseURL"`
	// AzureAPIVersion, when set, speaks to an Azure OpenAI classic endpoint; the models are its deployments.
	AzureAPIVersion string `json:"azureAPIVersion,omitempty"`
	// Models are the models bundles may name; the first answers a bundle that names the provider alone.
	Models []Model `json:"models"`
	// Embeddings, when set, is the provider's embedding model, which embeds the knowledge and questions of the
	// merchants it answers.
	Embeddings *Embeddings `json:"embeddings,omitempty"`
	// APIKey is read from $PARLEY_PROVIDER_API_KEY_<NAME> (EnvProviderAPIKey), never from the flag.
	APIKey string `json:"-"`
}

// Model is one model of a Provider and how it is asked. Unset fields take the defaults of the openai flags.
type Model struct {
	// Name is the model name sent with each request, or an Azure deployment's name.
	Name string `json:"name"`
	// Timeout, FirstTokenTimeout and IdleTimeout are the model's Timeouts, as Go durations ("30s").
	Timeout           Duration `json:"timeout,omitzero"`
	FirstTokenTimeout Duration `json:"firstTokenTimeout,omitzero"`
	IdleTimeout       Duration `json:"idleTimeout,omitzero"`
	// Temperature is the sampling temperature; DefaultOpenAITemperature when nil.
	Temperature *float64 `json:"temperature,omitempty"`
	// MaxTokens caps the tokens of one answer; DefaultOpenAIMaxTokens when 0.
	MaxTokens int `json:"maxTokens,omitempty"`
	// MaxCompletionTokens and OmitTemperature are as --openai-max-completion-tokens and --openai-omit-temperature.
	MaxCompletionTokens bool `json:"maxCompletionTokens,omitempty"`
	OmitTemperature     bool `json:"omitTemperature,omitempty"`
	// ContextWindow is the model's context window in tokens; 0 for none.
	ContextWindow int `json:"contextWindow,omitempty"`
}

// Timeouts are the model's timeouts, the defaults where unset.
func (m Model) Timeouts() Timeouts {
	or := func(d Duration, def time.Duration) time.Duration {
		if d.Duration == 0 {
			return def
		}
		return d.Duration
	}
	return Timeouts{FirstToken: or(m.FirstTokenTimeout, DefaultFirstTokenTimeout), Idle: or(m.IdleTimeout, DefaultIdleTimeout),
		Overall: or(m.Timeout, DefaultModelTimeout)}
}

// TemperatureOrDefault is the model's temperature, the default where unset.
func (m Model) TemperatureOrDefault() float64 {
	if m.Temperature == nil {
		return DefaultOpenAITemperature
	}
	return *m.Temperature
}

// MaxTokensOrDefault is the model's most tokens of one answer, the default where unset.
func (m Model) MaxTokensOrDefault() int {
	if m.MaxTokens == 0 {
		return DefaultOpenAIMaxTokens
	}
	return m.MaxTokens
}

// Duration is a time.Duration written as Go writes it ("1m30s") in --providers.
type Duration struct{ time.Duration }

// MarshalText writes d as Go does.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads a Go duration.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	d.Duration = v
	return nil
}

// Providers is the value of --providers: a JSON array of Provider.
type Providers []Provider

// String writes the providers as the flag takes them.
func (p *Providers) String() string {
	if p == nil || len(*p) == 0 {
		return ""
	}
	b, _ := json.Marshal(*p) // plain values: never fails
	return string(b)
}

// Set reads the providers from JSON, refusing fields it does not know.
func (p *Providers) Set(s string) error {
	var out Providers
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		return fmt.Errorf("not a JSON array of providers: %w", err)
	}
	*p = out
	return nil
}

// providerName is a provider's name: a DNS label, which EnvProviderAPIKey turns into a variable's name.
var providerName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// Validate reports the first provider the runtime cannot run with.
func (p Providers) Validate() error {
	names := map[string]bool{}
	for _, v := range p {
		what := fmt.Sprintf("--%s provider %q", FlagProviders, v.Name)
		u, err := url.Parse(v.BaseURL)
		switch {
		case len(v.Name) > 40 || !providerName.MatchString(v.Name):
			return fmt.Errorf("%s: the name must be a DNS label of at most 40 characters", what)
		case names[v.Name]:
			return fmt.Errorf("%s is listed twice", what)
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			return fmt.Errorf("%s: baseURL must be an absolute http or https URL", what)
		case v.AzureAPIVersion != "" && !isAzureAPIVersion(v.AzureAPIVersion):
			return fmt.Errorf("%s: azureAPIVersion must be a date such as 2024-10-21, with -preview for a preview version", what)
		case len(v.Models) == 0:
			return fmt.Errorf("%s has no models", what)
		}
		if e := v.Embeddings; e != nil {
			if e.Model == "" {
				return fmt.Errorf("%s: embeddings.model is required", what)
			}
			withDefault := *e
			withDefault.BatchSize = cmp.Or(e.BatchSize, DefaultEmbeddingsBatchSize)
			if err := withDefault.validate(what+": embeddings.dimensions", what+": embeddings.batchSize"); err != nil {
				return err
			}
		}
		names[v.Name] = true
		models := map[string]bool{}
		for _, m := range v.Models {
			what := fmt.Sprintf("%s model %q", what, m.Name)
			t := m.TemperatureOrDefault()
			switch {
			case m.Name == "":
				return fmt.Errorf("%s: a model has no name", what)
			case models[m.Name]:
				return fmt.Errorf("%s is listed twice", what)
			case t < 0 || t > 2:
				return fmt.Errorf("%s: temperature must be between 0 and 2", what)
			case m.MaxTokens < 0:
				return fmt.Errorf("%s: maxTokens must be positive", what)
			case m.ContextWindow < 0 || m.ContextWindow > 0 && m.ContextWindow <= m.MaxTokensOrDefault():
				return fmt.Errorf("%s: contextWindow must be 0 or more than maxTokens", what)
			}
			if err := m.Timeouts().validate(what); err != nil {
				return err
			}
			models[m.Name] = true
		}
	}
	return nil
}
