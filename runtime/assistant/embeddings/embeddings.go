// Package embeddings turns text into vectors with an OpenAI-compatible /v1/embeddings endpoint: OpenAI, Azure
// OpenAI's classic deployments, Ollama, llama.cpp's server started with --embeddings, vLLM. It batches, retries
// with backoff, and learns what a server refuses (a batch too large for llama.cpp's physical batch, the
// dimensions parameter of a model that cannot shorten its vectors), as the chat client learns its parameters.
// It addresses servers as runtime/assistant/llm does (llm.Endpoint).
package embeddings

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/parley-dev/parley/runtime/assistant/llm"
)

// Config wires a Client.
type Config struct {
	// BaseURL is the API's address, such as https://api.openai.com/v1.
	BaseURL string
	// Model is the embedding model sent with each request (Azure: the deployment's name).
	Model string
	// APIKey is sent as a bearer token, or in an api-key header to Azure's classic endpoint; none when empty.
	APIKey string
	// AzureAPIVersion, when set, speaks to Azure OpenAI's classic deployments endpoint.
	AzureAPIVersion string
	// Dimensions asks the model for vectors of this length (OpenAI's text-embedding-3, Matryoshka models); 0
	// takes the model's own.
	Dimensions int
	// BatchSize is the most texts sent in one request; DefaultBatchSize when 0.
	BatchSize int
	// Timeout bounds one request; DefaultTimeout when 0.
	Timeout time.Duration
	// Attempts is how many times a request that failed for a passing reason (429, 5xx, the network) is sent;
	// DefaultAttempts when 0.
	Attempts int
	// HTTPClient sends the requests; a new client when nil.
	HTTPClient *http.Client
}

// Defaults of Config.
const (
	DefaultBatchSize = 64
	DefaultTimeout   = 30 * time.Second
	DefaultAttempts  = 4
	// MaxBatchSize is OpenAI's limit of inputs in one request.
	MaxBatchSize = 2048
)

// Client embeds texts. It is safe for concurrent use.
type Client struct {
	client openai.Client
	cfg    Config
	// backoff is the wait before the first retry, doubled for each next one; a variable of the client so that
	// tests need not wait seconds.
	backoff time.Duration

	mu sync.Mutex
	// batch is the largest batch the server accepts, learned from its refusals.
	batch int
	// noDimensions is a server that refused the dimensions parameter: the model's own length is taken.
	noDimensions bool
}

// New builds a Client from cfg.
func New(cfg Config) (*Client, error) {
	switch {
	case cfg.BaseURL == "" || cfg.Model == "":
		return nil, errors.New("embeddings: the base URL and the model are required")
	case cfg.Dimensions < 0 || cfg.BatchSize < 0 || cfg.BatchSize > MaxBatchSize || cfg.Timeout < 0 || cfg.Attempts < 0:
		return nil, fmt.Errorf("embeddings: the dimensions, timeout and attempts must not be negative, the batch size within 0 and %d", MaxBatchSize)
	}
	cfg.BatchSize = cmpOr(cfg.BatchSize, DefaultBatchSize)
	cfg.Timeout = cmpOr(cfg.Timeout, DefaultTimeout)
	cfg.Attempts = cmpOr(cfg.Attempts, DefaultAttempts)
	httpClient := cfg.HTTPClient
	if httpClient == nil {
		httpClient = &http.Client{}
	}
	c := &Client{cfg: cfg, batch: cfg.BatchSize, backoff: 500 * time.Millisecond}
	// Retries are this package's own: a refused batch is split, not sent again as it was.
	c.client = openai.NewClient(append(llm.Endpoint(cfg.BaseURL, cfg.Model, cfg.APIKey, cfg.AzureAPIVersion),
		option.WithHTTPClient(httpClient), option.WithMaxRetries(0), option.WithRequestTimeout(cfg.Timeout))...)
	return c, nil
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Model names the vectors the client makes: the model, and the length asked for when one is. Vectors of two
// names are not comparable, so a change of either re-embeds the knowledge.
func (c *Client) Model() string {
	if c.cfg.Dimensions == 0 {
		return c.cfg.Model
	}
	return c.cfg.Model + "@" + strconv.Itoa(c.cfg.Dimensions)
}

// BatchSize is the most texts one request carries now: the configured size, or less once the server refused it.
func (c *Client) BatchSize() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.batch
}

// Result is the vectors of a call's texts, in their order, each of unit length, and the tokens the server
// counted for them (estimated where it reports none).
type Result struct {
	Vectors [][]float32
	Tokens  int64
}

// ErrUnsupported is a server that serves no embeddings as it is started: llama.cpp's without --embeddings, or
// with --pooling none, whose per-token vectors the OpenAI endpoint does not serve. Retrying does not help.
var ErrUnsupported = errors.New("the server serves no embeddings as configured")

// Embed returns the vectors of texts, sent in batches of BatchSize. It fails as a whole: vectors of some texts
// only are of no use to a caller that stores them with their item.
func (c *Client) Embed(ctx context.Context, texts []string) (Result, error) {
	return c.EmbedWithKey(ctx, texts, "")
}

// EmbedWithKey is Embed with apiKey sent instead of the client's own key when it is not empty: a merchant that
// brings its own key to the provider pays for its embeddings too.
func (c *Client) EmbedWithKey(ctx context.Context, texts []string, apiKey string) (Result, error) {
	opts := llm.OwnKey(apiKey, c.cfg.AzureAPIVersion != "")
	var out Result
	out.Vectors = make([][]float32, 0, len(texts))
	for len(out.Vectors) < len(texts) {
		rest := texts[len(out.Vectors):]
		batch := rest[:min(len(rest), c.BatchSize())]
		res, err := c.embedBatch(ctx, batch, opts)
		if errors.Is(err, errBatchTooLarge) && len(batch) > 1 {
			c.shrink(len(batch))
			continue
		}
		if err != nil {
			return Result{}, err
		}
		out.Vectors = append(out.Vectors, res.Vectors...)
		out.Tokens += res.Tokens
	}
	if err := sameLength(out.Vectors); err != nil {
		return Result{}, fmt.Errorf("embeddings from %s: %w", c.cfg.BaseURL, err)
	}
	return out, nil
}

// shrink halves the batch size below a batch of n the server refused.
func (c *Client) shrink(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.batch = min(c.batch, max(1, n/2))
}

// errBatchTooLarge is a batch the server cannot take at once.
var errBatchTooLarge = errors.New("the batch is too large for the server")

// embedBatch sends one batch, retrying passing failures with backoff, and once without dimensions when the
// server refuses them.
func (c *Client) embedBatch(ctx context.Context, texts []string, opts []option.RequestOption) (Result, error) {
	var last error
	for attempt := 0; attempt < c.cfg.Attempts; attempt++ {
		if attempt > 0 {
			if err := sleep(ctx, c.wait(attempt, last)); err != nil {
				return Result{}, fmt.Errorf("embeddings from %s: %w (after %w)", c.cfg.BaseURL, err, last)
			}
		}
		res, err := c.send(ctx, texts, opts)
		if err == nil {
			return res, nil
		}
		switch kind := classify(err); kind {
		case refusedDimensions:
			c.mu.Lock()
			retry := !c.noDimensions
			c.noDimensions = true
			c.mu.Unlock()
			if !retry {
				return Result{}, fmt.Errorf("embeddings from %s: %w", c.cfg.BaseURL, err)
			}
			attempt-- // not a failure of the server's: asked again at once
			continue
		case tooLarge:
			return Result{}, fmt.Errorf("%w: %w", errBatchTooLarge, err)
		case unsupported:
			return Result{}, fmt.Errorf("embeddings from %s: %w: %w", c.cfg.BaseURL, ErrUnsupported, err)
		case permanent:
			return Result{}, fmt.Errorf("embeddings from %s: %w", c.cfg.BaseURL, err)
		}
		if ctx.Err() != nil {
			return Result{}, fmt.Errorf("embeddings from %s: %w", c.cfg.BaseURL, err)
		}
		last = err
	}
	return Result{}, fmt.Errorf("embeddings from %s, %d attempts: %w", c.cfg.BaseURL, c.cfg.Attempts, last)
}

// send asks for the vectors of texts once, with the request options opts.
func (c *Client) send(ctx context.Context, texts []string, opts []option.RequestOption) (Result, error) {
	p := openai.EmbeddingNewParams{Model: c.cfg.Model, Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: texts},
		EncodingFormat: openai.EmbeddingNewParamsEncodingFormatFloat}
	c.mu.Lock()
	if c.cfg.Dimensions > 0 && !c.noDimensions {
		p.Dimensions = openai.Int(int64(c.cfg.Dimensions))
	}
	c.mu.Unlock()
	resp, err := c.client.Embeddings.New(ctx, p, opts...)
	if err != nil {
		return Result{}, err
	}
	return read(resp, texts)
}

// read takes the vectors of texts out of a response, in the order of their index: a server may answer a batch
// in another order.
func read(resp *openai.CreateEmbeddingResponse, texts []string) (Result, error) {
	if len(resp.Data) != len(texts) {
		return Result{}, fmt.Errorf("%w: %d vectors for %d texts", errMalformed, len(resp.Data), len(texts))
	}
	out := make([][]float32, len(texts))
	for _, e := range resp.Data {
		i := int(e.Index)
		if i < 0 || i >= len(out) || out[i] != nil {
			return Result{}, fmt.Errorf("%w: vector index %d", errMalformed, e.Index)
		}
		v, err := unit(e.Embedding)
		if err != nil {
			return Result{}, err
		}
		out[i] = v
	}
	tokens := resp.Usage.PromptTokens
	if tokens <= 0 {
		tokens = resp.Usage.TotalTokens
	}
	if tokens <= 0 {
		tokens = estimateTokens(texts)
	}
	return Result{Vectors: out, Tokens: min(tokens, maxReportedTokens)}, nil
}

// maxReportedTokens bounds a server's count of a request's tokens: an absurd one would overflow the month's.
const maxReportedTokens = 1 << 24

// errMalformed is a response that is not a valid answer to the request.
var errMalformed = errors.New("malformed embeddings response")

// unit is v as float32 scaled to length 1: servers differ in whether they normalise (llama.cpp's OpenAI endpoint
// does, vLLM depends on the model), and the index compares directions.
func unit(v []float64) ([]float32, error) {
	var sum float64
	for _, x := range v {
		sum += x * x
	}
	if len(v) == 0 || sum == 0 || math.IsNaN(sum) || math.IsInf(sum, 0) {
		return nil, fmt.Errorf("%w: a vector of %d values and length %g", errMalformed, len(v), math.Sqrt(sum))
	}
	norm := math.Sqrt(sum)
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x / norm)
	}
	return out, nil
}

// sameLength checks that all vectors are as long as the first.
func sameLength(vs [][]float32) error {
	for _, v := range vs {
		if len(v) != len(vs[0]) {
			return fmt.Errorf("%w: vectors of %d and %d values", errMalformed, len(vs[0]), len(v))
		}
	}
	return nil
}

// estimateTokens is about four bytes a token, for servers that report no usage.
func estimateTokens(texts []string) int64 {
	var n int64
	for _, t := range texts {
		n += int64(len(t)+3) / 4
	}
	return n
}

// The kinds of failure, as classify reads them.
const (
	passing = iota
	permanent
	tooLarge
	refusedDimensions
	unsupported
)

// classify says what to do about a failed request. Servers name their refusals in their messages:
//   - llama.cpp: 501 "This server does not support embeddings. Start it with `--embeddings`"; 400 "Pooling type
//     'none' is not OAI compatible"; 500 "input is too large to process. increase the physical batch size".
//   - Ollama: 400 "input length exceeds the context length" for a batch whose texts it concatenates past the
//     context (its batch quirk), 413 from proxies in front of it.
//   - vLLM: 400 "Model ... does not support matryoshka representation" for dimensions; OpenAI: 400 with param
//     "dimensions" for models before text-embedding-3.
func classify(err error) int {
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) {
		if errors.Is(err, errMalformed) {
			return permanent
		}
		return passing // the network, a timeout
	}
	msg := strings.ToLower(apiErr.Message + " " + apiErr.RawJSON())
	switch {
	case apiErr.StatusCode == http.StatusNotImplemented || strings.Contains(msg, "--embeddings") ||
		strings.Contains(msg, "not oai compatible"):
		return unsupported
	case apiErr.StatusCode == http.StatusRequestEntityTooLarge || strings.Contains(msg, "too large") ||
		strings.Contains(msg, "exceeds the context length") || strings.Contains(msg, "batch size"):
		return tooLarge
	case apiErr.StatusCode == http.StatusBadRequest && (apiErr.Param == "dimensions" || strings.Contains(msg, "matryoshka") ||
		strings.Contains(msg, "dimensions")):
		return refusedDimensions
	case apiErr.StatusCode == http.StatusTooManyRequests || apiErr.StatusCode == http.StatusRequestTimeout ||
		apiErr.StatusCode >= 500:
		return passing
	}
	return permanent
}

// maxBackoff bounds one wait between attempts.
const maxBackoff = 30 * time.Second

// wait is how long to wait before attempt (1 for the first retry): what the server asked for in Retry-After or
// retry-after-ms, or the backoff doubled per attempt, with a jitter of up to a quarter, so that the replicas'
// retries spread out.
func (c *Client) wait(attempt int, err error) time.Duration {
	var apiErr *openai.Error
	if errors.As(err, &apiErr) && apiErr.Response != nil {
		if d, ok := retryAfter(apiErr.Response.Header); ok {
			return min(d, maxBackoff)
		}
	}
	d := min(c.backoff<<(attempt-1), maxBackoff)
	return d + time.Duration(rand.Int64N(int64(d)/4+1)) //nolint:gosec // jitter, not a secret
}

// retryAfter reads the wait a server asks for: retry-after-ms (OpenAI, Azure) or Retry-After in seconds.
func retryAfter(h http.Header) (time.Duration, bool) {
	if ms, err := strconv.ParseFloat(h.Get("retry-after-ms"), 64); err == nil && ms >= 0 {
		return time.Duration(ms * float64(time.Millisecond)), true
	}
	if s, err := strconv.ParseFloat(h.Get("Retry-After"), 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second)), true
	}
	return 0, false
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
