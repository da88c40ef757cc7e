package embeddings

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parley-dev/parley/internal/testutil/fakeembed"
)

// newClient is a client of p with cfg's settings, its backoff shortened so that retries take no seconds.
func newClient(t *testing.T, cfg Config) *Client {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.backoff = time.Millisecond
	return c
}

func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("passage number %d about tents", i)
	}
	return out
}

// checkVectors checks that res holds the fake's vector of each text, in order, of unit length.
func checkVectors(t *testing.T, res Result, in []string, dims int) {
	t.Helper()
	if len(res.Vectors) != len(in) {
		t.Fatalf("%d vectors for %d texts", len(res.Vectors), len(in))
	}
	for i, v := range res.Vectors {
		want := fakeembed.Vector(in[i], nil, nil, dims)
		var norm, dot float64
		for j := range v {
			norm += float64(v[j]) * float64(v[j])
			dot += float64(v[j]) * want[j]
		}
		if math.Abs(norm-1) > 1e-4 || math.Abs(dot-1) > 1e-4 || len(v) != dims {
			t.Fatalf("vector %d: length %d, norm² %g, cosine with the text's own %g", i, len(v), norm, dot)
		}
	}
}

// TestProfiles embeds with the servers people run, as their documentation and issue trackers describe them.
func TestProfiles(t *testing.T) {
	for _, tc := range []struct {
		name string
		// setup makes the fake the server; cfg completes the client's configuration.
		setup func(p *fakeembed.Provider)
		cfg   func(p *fakeembed.Provider) Config
		// dims is the length of the vectors returned; requests, how many requests 10 texts take.
		dims, requests int
		check          func(t *testing.T, p *fakeembed.Provider)
	}{{
		name:  "OpenAI text-embedding-3 with dimensions",
		setup: func(*fakeembed.Provider) {},
		cfg: func(p *fakeembed.Provider) Config {
			return Config{BaseURL: p.URL(), Model: "text-embedding-3-small", APIKey: "sk-test", Dimensions: 128, BatchSize: 4}
		},
		dims: 128, requests: 3,
		check: func(t *testing.T, p *fakeembed.Provider) {
			r := p.Requests()[0]
			if r.Auth != "Bearer sk-test" || r.Dimensions != 128 || r.Path != "/v1/embeddings" || r.EncodingFormat != "float" {
				t.Errorf("request %+v: want a bearer key, dimensions 128, /v1/embeddings, float", r)
			}
		},
	}, {
		name:  "Azure OpenAI classic deployment",
		setup: func(*fakeembed.Provider) {},
		cfg: func(p *fakeembed.Provider) Config {
			return Config{BaseURL: p.Server(), Model: "embed-deploy", APIKey: "azure-key", AzureAPIVersion: "2024-10-21"}
		},
		dims: fakeembed.DefaultDimensions, requests: 1,
		check: func(t *testing.T, p *fakeembed.Provider) {
			r := p.Requests()[0]
			if r.Path != "/openai/deployments/embed-deploy/embeddings?api-version=2024-10-21" || r.APIKey != "azure-key" || r.Auth != "" {
				t.Errorf("request %+v: want the deployment's path, the api-key header and no bearer", r)
			}
		},
	}, {
		// Ollama concatenates a batch's inputs into its context and refuses past it; it reports no usage before 0.5.
		name: "Ollama, batch past its context",
		setup: func(p *fakeembed.Provider) {
			p.MaxBatch, p.NoUsage = 3, true
			p.BatchRefusal = fakeembed.Refusal{Status: http.StatusBadRequest, Message: "input length exceeds the context length"}
		},
		cfg: func(p *fakeembed.Provider) Config {
			return Config{BaseURL: p.URL(), Model: "nomic-embed-text", BatchSize: 10}
		},
		// 10 refused, 5 refused, then five batches of 2.
		dims: fakeembed.DefaultDimensions, requests: 7,
		check: func(t *testing.T, p *fakeembed.Provider) {
			for _, r := range p.Requests()[2:] {
				if len(r.Input) > 3 {
					t.Errorf("a batch of %d after the server refused 5", len(r.Input))
				}
			}
		},
	}, {
		name:  "llama.cpp server, physical batch smaller than the batch",
		setup: func(p *fakeembed.Provider) { p.MaxBatch = 4 },
		cfg:   func(p *fakeembed.Provider) Config { return Config{BaseURL: p.URL(), Model: "bge-m3", BatchSize: 8} },
		// 8 refused, then 4+4, then the last 2.
		dims: fakeembed.DefaultDimensions, requests: 4,
	}, {
		name:  "vLLM, a model without Matryoshka refuses dimensions",
		setup: func(p *fakeembed.Provider) { p.RefuseDimensions, p.Reversed, p.Unnormalised = true, true, true },
		cfg: func(p *fakeembed.Provider) Config {
			return Config{BaseURL: p.URL(), Model: "intfloat/multilingual-e5-large", Dimensions: 64}
		},
		dims: fakeembed.DefaultDimensions, requests: 2,
		check: func(t *testing.T, p *fakeembed.Provider) {
			if rs := p.Requests(); rs[1].Dimensions != 0 {
				t.Errorf("asked again with dimensions %d after the refusal", rs[1].Dimensions)
			}
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			p := fakeembed.New(t)
			tc.setup(p)
			c := newClient(t, tc.cfg(p))
			in := texts(10)
			res, err := c.Embed(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			checkVectors(t, res, in, tc.dims)
			if res.Tokens <= 0 {
				t.Errorf("tokens %d, want a count or an estimate", res.Tokens)
			}
			if got := len(p.Requests()); got != tc.requests {
				t.Errorf("%d requests, want %d", got, tc.requests)
			}
			if tc.check != nil {
				tc.check(t, p)
			}
		})
	}
}

func TestRetriesPassingFailures(t *testing.T) {
	p := fakeembed.New(t)
	p.Failures = []fakeembed.Refusal{{Status: http.StatusTooManyRequests, Message: "Rate limit reached", RetryAfterMS: 5},
		{Status: http.StatusBadGateway, Message: "upstream"}}
	c := newClient(t, Config{BaseURL: p.URL(), Model: "m"})
	in := texts(2)
	res, err := c.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, res, in, fakeembed.DefaultDimensions)
	if got := len(p.Requests()); got != 3 {
		t.Errorf("%d requests, want 3", got)
	}
}

func TestFailures(t *testing.T) {
	for _, tc := range []struct {
		name     string
		failures []fakeembed.Refusal
		// requests is how many are sent before giving up; unsupported, whether the error says the server serves
		// no embeddings.
		requests    int
		unsupported bool
	}{
		{"llama.cpp without --embeddings", []fakeembed.Refusal{{Status: http.StatusNotImplemented,
			Message: "This server does not support embeddings. Start it with `--embeddings`"}}, 1, true},
		{"llama.cpp with --pooling none", []fakeembed.Refusal{{Status: http.StatusBadRequest,
			Message: "Pooling type 'none' is not OAI compatible. Please use a different pooling type"}}, 1, true},
		{"an unknown model", []fakeembed.Refusal{{Status: http.StatusNotFound, Message: "model \"x\" not found"}}, 1, false},
		{"a bad key", []fakeembed.Refusal{{Status: http.StatusUnauthorized, Message: "Incorrect API key provided"}}, 1, false},
		{"down for longer than the attempts", []fakeembed.Refusal{{Status: 503}, {Status: 503}, {Status: 503}, {Status: 503}}, 4, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := fakeembed.New(t)
			p.Failures = tc.failures
			c := newClient(t, Config{BaseURL: p.URL(), Model: "m", APIKey: "sk-secret-key"})
			_, err := c.Embed(context.Background(), texts(3))
			if err == nil {
				t.Fatal("no error")
			}
			if got := errors.Is(err, ErrUnsupported); got != tc.unsupported {
				t.Errorf("unsupported %v, want %v: %v", got, tc.unsupported, err)
			}
			if strings.Contains(err.Error(), "sk-secret-key") {
				t.Errorf("the error holds the key: %v", err)
			}
			if got := len(p.Requests()); got != tc.requests {
				t.Errorf("%d requests, want %d", got, tc.requests)
			}
		})
	}
}

func TestCancelledWhileWaiting(t *testing.T) {
	p := fakeembed.New(t)
	p.Failures = []fakeembed.Refusal{{Status: http.StatusTooManyRequests, RetryAfterMS: 60_000}}
	c := newClient(t, Config{BaseURL: p.URL(), Model: "m"})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := c.Embed(ctx, texts(1)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want the context's deadline", err)
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	for _, cfg := range []Config{
		{Model: "m"}, {BaseURL: "http://x"}, {BaseURL: "http://x", Model: "m", BatchSize: MaxBatchSize + 1},
		{BaseURL: "http://x", Model: "m", Dimensions: -1},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
}

func TestModelNamesTheLength(t *testing.T) {
	a, _ := New(Config{BaseURL: "http://x", Model: "text-embedding-3-small"})
	b, _ := New(Config{BaseURL: "http://x", Model: "text-embedding-3-small", Dimensions: 256})
	if a.Model() != "text-embedding-3-small" || b.Model() != "text-embedding-3-small@256" {
		t.Errorf("names %q and %q", a.Model(), b.Model())
	}
}
