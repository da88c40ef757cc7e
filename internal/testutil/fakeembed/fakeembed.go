// Package fakeembed is an embedding model provider for tests: a real HTTP server speaking OpenAI's /v1/embeddings
// wire protocol, with the quirks of the servers people run (a batch limit, no usage, vectors out of order or not
// of unit length, a refused dimensions parameter), and a deterministic, multilingual model.
//
// The model: a text's vector is the sum of one pseudo-random direction per concept it names, scaled to length 1.
// A word's concept is itself, or what Concepts maps it to, so that "Geschenkgutschein" and "gift card" are the
// same concept and land in the same region however the texts around them differ, as a multilingual model's
// translations do. A concept's direction comes from a hash of its name: the same on every run and every machine.
package fakeembed

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode"
)

// DefaultDimensions is the length of the fake model's vectors when a request asks for none.
const DefaultDimensions = 256

// Provider is an OpenAI-compatible embeddings server.
type Provider struct {
	srv *httptest.Server

	mu sync.Mutex
	// Concepts maps a lower-case word (or a phrase of words joined by spaces) to its concept: its translations
	// map to the same one. A word not in it is its own concept.
	Concepts map[string]string
	// Ignore are words that carry no meaning, left out of a text's vector (as a model's attention leaves them).
	Ignore map[string]bool
	// MaxBatch, when positive, refuses a request of more inputs with BatchRefusal.
	MaxBatch int
	// BatchRefusal is the status and error message a too large batch gets: llama.cpp's by default.
	BatchRefusal Refusal
	// RefuseDimensions answers a request with dimensions with vLLM's refusal for a model without Matryoshka.
	RefuseDimensions bool
	// NoUsage reports no usage, as older servers do.
	NoUsage bool
	// Reversed answers the vectors in reverse order of their index.
	Reversed bool
	// Unnormalised scales the vectors to length 3, as servers that do not normalise answer.
	Unnormalised bool
	// Failures are answered, one per request, before the server answers normally.
	Failures []Refusal
	requests []Recorded

	// directions caches the concepts' directions by concept and length: drawing one takes as long as embedding
	// a short text, and a benchmark embeds a million items over one vocabulary.
	dirMu      sync.Mutex
	directions map[directionKey][]float64
}

type directionKey struct {
	concept string
	dims    int
}

// Refusal is an error answer: a status and OpenAI's error body with message, and a Retry-After in
// milliseconds when positive.
type Refusal struct {
	Status       int
	Message      string
	RetryAfterMS int
}

// LlamaCppBatchRefusal is llama.cpp's answer to a batch larger than its physical batch (-ub).
var LlamaCppBatchRefusal = Refusal{Status: http.StatusInternalServerError,
	Message: "input is too large to process. increase the physical batch size"}

// Recorded is a request the provider received.
type Recorded struct {
	Path, Auth, APIKey string
	Model              string
	Input              []string
	Dimensions         int
	EncodingFormat     string
}

// New starts a provider, closed when the test ends.
func New(t testing.TB) *Provider {
	t.Helper()
	p := Start()
	t.Cleanup(p.Close)
	return p
}

// Start starts a provider for a TestMain that starts it before its tests, until Close.
func Start() *Provider {
	p := &Provider{BatchRefusal: LlamaCppBatchRefusal, directions: map[directionKey][]float64{}}
	p.srv = httptest.NewServer(p)
	return p
}

// Close stops the provider.
func (p *Provider) Close() { p.srv.Close() }

// URL is the base URL to configure, ending in /v1.
func (p *Provider) URL() string { return p.srv.URL + "/v1" }

// Server is the root address, for Azure's classic endpoint.
func (p *Provider) Server() string { return p.srv.URL }

// Requests returns the requests received so far.
func (p *Provider) Requests() []Recorded {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.requests)
}

// Inputs returns every text the provider was asked to embed, in order.
func (p *Provider) Inputs() []string {
	var out []string
	for _, r := range p.Requests() {
		out = append(out, r.Input...)
	}
	return out
}

// Set changes the provider's behaviour under its lock.
func (p *Provider) Set(f func(p *Provider)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f(p)
}

type request struct {
	Model          string          `json:"model"`
	Input          json.RawMessage `json:"input"`
	Dimensions     int             `json:"dimensions"`
	EncodingFormat string          `json:"encoding_format"`
}

// Embed returns the vectors the provider answers for texts with dims values, without a request: for a store
// seeded as if the provider had embedded its knowledge.
func (p *Provider) Embed(texts []string, dims int) [][]float32 {
	p.mu.Lock()
	concepts, ignore := p.Concepts, p.Ignore
	p.mu.Unlock()
	out := make([][]float32, len(texts))
	for i, text := range texts {
		v := vector(text, concepts, ignore, dims, p.direction)
		out[i] = make([]float32, dims)
		for j, x := range v {
			out[i][j] = float32(x)
		}
	}
	return out
}

// direction is the concept's direction of dims values, drawn once.
func (p *Provider) direction(concept string, dims int) []float64 {
	k := directionKey{concept, dims}
	p.dirMu.Lock()
	d, ok := p.directions[k]
	p.dirMu.Unlock()
	if !ok {
		d = direction(concept, dims)
		p.dirMu.Lock()
		p.directions[k] = d
		p.dirMu.Unlock()
	}
	return d
}

// ServeHTTP answers POST .../embeddings, so that the provider can also be mounted beside other handlers on one
// server (fakeopenai).
func (p *Provider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/embeddings") {
		http.NotFound(w, r)
		return
	}
	var req request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		refuse(w, Refusal{Status: http.StatusBadRequest, Message: "invalid JSON: " + err.Error()})
		return
	}
	var input []string
	if err := json.Unmarshal(req.Input, &input); err != nil {
		var one string
		if err := json.Unmarshal(req.Input, &one); err != nil {
			refuse(w, Refusal{Status: http.StatusBadRequest, Message: "input must be a string or an array of strings"})
			return
		}
		input = []string{one}
	}
	p.mu.Lock()
	p.requests = append(p.requests, Recorded{Path: r.URL.RequestURI(), Auth: r.Header.Get("Authorization"),
		APIKey: r.Header.Get("api-key"), Model: req.Model, Input: input, Dimensions: req.Dimensions,
		EncodingFormat: req.EncodingFormat})
	var failure *Refusal
	if len(p.Failures) > 0 {
		failure = &p.Failures[0]
		p.Failures = p.Failures[1:]
	}
	maxBatch, batchRefusal, refuseDims := p.MaxBatch, p.BatchRefusal, p.RefuseDimensions
	noUsage, reversed, unnormalised := p.NoUsage, p.Reversed, p.Unnormalised
	concepts, ignore := p.Concepts, p.Ignore
	p.mu.Unlock()
	switch {
	case failure != nil:
		refuse(w, *failure)
		return
	case maxBatch > 0 && len(input) > maxBatch:
		refuse(w, batchRefusal)
		return
	case refuseDims && req.Dimensions > 0:
		refuse(w, Refusal{Status: http.StatusBadRequest,
			Message: fmt.Sprintf("Model \"%s\" does not support matryoshka representation, changing output dimensions will lead to poor results.", req.Model)})
		return
	}
	dims := DefaultDimensions
	if req.Dimensions > 0 {
		dims = req.Dimensions
	}
	type datum struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float64 `json:"embedding"`
	}
	data := make([]datum, len(input))
	tokens := 0
	for i, text := range input {
		v := vector(text, concepts, ignore, dims, p.direction)
		if unnormalised {
			for j := range v {
				v[j] *= 3
			}
		}
		data[i] = datum{Object: "embedding", Index: i, Embedding: v}
		tokens += len(strings.Fields(text))
	}
	if reversed {
		slices.Reverse(data)
	}
	body := map[string]any{"object": "list", "model": req.Model, "data": data}
	if !noUsage {
		body["usage"] = map[string]int{"prompt_tokens": tokens, "total_tokens": tokens}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(body)
}

func refuse(w http.ResponseWriter, r Refusal) {
	w.Header().Set("Content-Type", "application/json")
	if r.RetryAfterMS > 0 {
		w.Header().Set("retry-after-ms", fmt.Sprint(r.RetryAfterMS))
	}
	w.WriteHeader(r.Status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": r.Message, "type": "invalid_request_error"}})
}

// Vector is the fake model's vector of text with dims values: the sum of its concepts' directions, of length 1
// (or zero for a text without a concept).
func Vector(text string, concepts map[string]string, ignore map[string]bool, dims int) []float64 {
	return vector(text, concepts, ignore, dims, direction)
}

// vector is Vector with the concepts' directions from direction.
func vector(text string, concepts map[string]string, ignore map[string]bool, dims int, direction func(string, int) []float64) []float64 {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	v := make([]float64, dims)
	for i := 0; i < len(words); i++ {
		concept, n := conceptAt(words[i:], concepts)
		i += n - 1
		if ignore[concept] {
			continue
		}
		d := direction(concept, dims)
		for j := range v {
			v[j] += d[j]
		}
	}
	var sum float64
	for _, x := range v {
		sum += x * x
	}
	if sum == 0 {
		v[0] = 1 // a text of no concept still has a direction, as a real model's does
		return v
	}
	for j := range v {
		v[j] /= math.Sqrt(sum)
	}
	return v
}

// conceptAt is the concept the words start with, a phrase of up to three words when Concepts lists it, and how
// many words it takes.
func conceptAt(words []string, concepts map[string]string) (string, int) {
	for n := min(3, len(words)); n > 1; n-- {
		if c, ok := concepts[strings.Join(words[:n], " ")]; ok {
			return c, n
		}
	}
	if c, ok := concepts[words[0]]; ok {
		return c, 1
	}
	return words[0], 1
}

// direction is a concept's pseudo-random direction, seeded by a hash of its name.
func direction(concept string, dims int) []float64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(concept))
	r := rand.New(rand.NewPCG(h.Sum64(), 47)) //nolint:gosec // deterministic on purpose
	d := make([]float64, dims)
	for i := range d {
		d[i] = r.NormFloat64()
	}
	return d
}
