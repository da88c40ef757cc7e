package chat

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parley-dev/parley/runtime/assistant"
	"github.com/parley-dev/parley/runtime/assistant/embeddings"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
)

// Embedder turns texts into vectors: a model provider's embedding model (embeddings.Client).
type Embedder interface {
	// Model names the vectors it makes; vectors of another name are embedded again.
	Model() string
	// BatchSize is the most texts worth sending at once.
	BatchSize() int
	// EmbedWithKey embeds texts, sent with apiKey instead of the provider's own key when it is not empty.
	EmbedWithKey(ctx context.Context, texts []string, apiKey string) (embeddings.Result, error)
}

// Embedders are the embedding models by the name of the provider whose server serves them, "" for the default
// provider's.
type Embedders map[string]Embedder

// embedding is the embedding model a merchant's knowledge and questions go to, and the merchant's own key they
// are sent with ("" for the provider's).
type embedding struct {
	Embedder
	apiKey string
}

// embed embeds texts for the merchant, with its key.
func (e embedding) embed(ctx context.Context, texts []string) (embeddings.Result, error) {
	return e.EmbedWithKey(ctx, texts, e.apiKey)
}

// embeddingFor is the embedding model of the merchant's provider, the one the chat path sends its questions to
// (the bundle's provider, as assistant.Request.Provider names it), with the merchant's own key when it brings
// one (as assistant.Request.APIKey): its knowledge goes to no provider its plan did not choose, nor on another
// key than the one its answers are paid with. ok is false when that provider has no embedding model here.
func (es Embedders) embeddingFor(m *tenant.Bundle) (e embedding, ok bool) {
	e.Embedder, ok = es[m.Assistant.Provider]
	e.apiKey = m.Assistant.APIKey
	return e, ok
}

// model names the vectors the merchant's index takes in, "" when its provider has no embedding model.
func (es Embedders) model(m *tenant.Bundle) string {
	if e, ok := es.embeddingFor(m); ok {
		return e.Model()
	}
	return ""
}

// embeddingTexts are the texts an item's vectors are made of, one per passage of the index, and their hashes,
// by which stored vectors are known to be of the item as it is now.
func embeddingTexts(k store.Knowledge) (texts, hashes []string) {
	texts = assistant.EmbeddingTexts(assistant.Item{Title: k.Title, Content: k.Content, Questions: k.Questions})
	hashes = make([]string, len(texts))
	for i, t := range texts {
		sum := sha256.Sum256([]byte(t))
		hashes[i] = hex.EncodeToString(sum[:])
	}
	return texts, hashes
}

// currentVectors returns, by item, the stored vectors of model that are of each item's passages as they are now:
// one per passage, of its text. An item without them is answered from by its words until it is embedded again.
func currentVectors(items []store.Knowledge, stored []store.KnowledgeVector, model string) map[string][][]float32 {
	current := currentStored(items, stored, model)
	out := make(map[string][][]float32, len(current))
	for id, vs := range current {
		vectors := make([][]float32, len(vs))
		for i, v := range vs {
			vectors[i] = v.Vector
		}
		out[id] = vectors
	}
	return out
}

// currentStored returns, by item, those of stored (with or without their vectors) that are of model and of
// each item's passages as they are now.
func currentStored(items []store.Knowledge, stored []store.KnowledgeVector, model string) map[string][]store.KnowledgeVector {
	byItem := map[string][]store.KnowledgeVector{}
	for _, v := range stored {
		if v.Model == model {
			byItem[v.KnowledgeID] = append(byItem[v.KnowledgeID], v)
		}
	}
	out := make(map[string][]store.KnowledgeVector, len(byItem))
	for _, k := range items {
		vs := byItem[k.ID]
		if len(vs) == 0 {
			continue
		}
		if _, hashes := embeddingTexts(k); fresh(vs, hashes) {
			out[k.ID] = vs
		}
	}
	return out
}

// fresh reports whether vs, an item's vectors by passage, are of the passages whose texts have hashes.
func fresh(vs []store.KnowledgeVector, hashes []string) bool {
	if len(vs) != len(hashes) {
		return false
	}
	for i, v := range vs {
		if v.Passage != i || v.TextHash != hashes[i] {
			return false
		}
	}
	return true
}

// staleItems are the items of a merchant that have no current vectors of model, drafts aside (they are not
// answered from). Stored need not hold the vectors themselves (store.KnowledgeVectorStamps).
func staleItems(items []store.Knowledge, stored []store.KnowledgeVector, model string) []store.Knowledge {
	current := currentStored(items, stored, model)
	var out []store.Knowledge
	for _, k := range items {
		if _, ok := current[k.ID]; !ok && !k.Draft {
			out = append(out, k)
		}
	}
	return out
}

// KnowledgeEmbedderConfig wires a KnowledgeEmbedder.
type KnowledgeEmbedderConfig struct {
	Service *Service
	// Embedders embed each merchant's knowledge with its provider's model (Embedders.embeddingFor); the
	// merchants of a provider without one are left to their words.
	Embedders Embedders
	Tenants   Tenants
	// Merchants returns the served merchants' bundles, each merchant's knowledge looked at once when the
	// embedder starts: a new model, or items written while no replica embedded, are then embedded in the
	// background.
	Merchants func() []*tenant.Bundle
	// Workers is how many batches are embedded at once; DefaultEmbedWorkers when 0.
	Workers int
	// RetryWait is the wait before a merchant's failed batch is tried again, doubled for each failure after it
	// up to ten minutes; DefaultEmbedRetryWait when 0. A merchant another replica is embedding is tried again
	// likewise.
	RetryWait time.Duration
	// Holder names this replica in the merchants' embedding leases (its pod name and a random ID): one replica
	// embeds a merchant at a time.
	Holder string
	// SpentCheck is how often the merchants past their plan's monthly tokens are looked at again, to embed
	// their items once the month turns or the plan's ceiling rises; DefaultEmbedSpentCheck when 0.
	SpentCheck time.Duration
	Logger     *slog.Logger
	Registry   prometheus.Registerer
}

// Defaults and bounds of the KnowledgeEmbedder.
const (
	DefaultEmbedWorkers    = 2
	DefaultEmbedRetryWait  = 10 * time.Second
	DefaultEmbedSpentCheck = time.Minute
	// embedRetryMax bounds the wait before a merchant's failed batch is tried again.
	embedRetryMax = 10 * time.Minute
	// embedBatchTimeout bounds one batch: its requests, with their retries, and its write.
	embedBatchTimeout = 2 * time.Minute
	// embedLeaseTTL is how long a merchant's embedding lease lasts past its holder's last batch: longer than a
	// batch, so that a live holder keeps it from turn to turn, and short enough that another replica takes over
	// soon from one that died.
	embedLeaseTTL = 5 * time.Minute
)

// errEmbeddedElsewhere is a turn that found another replica embedding the merchant: it is tried again later, by
// when the other has embedded the items or given up its lease.
var errEmbeddedElsewhere = errors.New("another replica holds the merchant's embedding lease")

// KnowledgeEmbedder embeds the merchants' knowledge in the background, never on the chat's path: the items
// written or synced through this replica, and at start every merchant's that has no current vectors (a model
// changed, or items written while no replica embedded). Merchants take turns, one batch each, so that one
// merchant re-embedding thousands of items holds another's new item up by a batch at most. The tokens are counted
// against each merchant's monthly tokens; past its ceiling, its items are not embedded, and are answered from by
// their words, until the month turns or the plan's ceiling rises. Chat keeps answering from the index it has
// meanwhile, words alone for the items not embedded yet. Replicas embed a merchant one at a time, under a lease in
// the store.
type KnowledgeEmbedder struct {
	cfg     KnowledgeEmbedderConfig
	metrics *embedMetrics
	wake    chan struct{}

	mu sync.Mutex
	// queue holds the merchants waiting for their turn, in order; queued says which are in it or being
	// embedded, and pending what a merchant's pass has left of its stale items.
	queue   []string
	queued  map[string]bool
	pending map[string][]store.Knowledge
	// retry holds the merchants whose last batch failed, with when to try again and the wait after that.
	retry map[string]retryAt
	// spent holds the merchants whose items wait for their plan's monthly tokens, with the month and ceiling
	// they were spent at; checked is when they were last looked at.
	spent   map[string]spentAt
	checked time.Time

	// reading lets one worker at a time read and hash a merchant's knowledge (stale): at start every merchant's
	// is, a second of CPU per 700 merchants of 100 items, which would take every core from the chat beside it;
	// the workers' provider calls, which wait on the network, still run at once.
	reading sync.Mutex
}

type spentAt struct {
	month   string
	ceiling int64
}

type retryAt struct {
	at   time.Time
	wait time.Duration
}

// NewKnowledgeEmbedder builds the embedder and has the service tell it of knowledge writes.
func NewKnowledgeEmbedder(cfg KnowledgeEmbedderConfig) (*KnowledgeEmbedder, error) {
	if cfg.Service == nil || len(cfg.Embedders) == 0 || cfg.Tenants == nil || cfg.Merchants == nil || cfg.Holder == "" {
		return nil, errors.New("chat: the knowledge embedder needs the service, an embedder, the tenants, the merchants and a holder")
	}
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultEmbedWorkers
	}
	if cfg.RetryWait <= 0 {
		cfg.RetryWait = DefaultEmbedRetryWait
	}
	if cfg.SpentCheck <= 0 {
		cfg.SpentCheck = DefaultEmbedSpentCheck
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	m, err := newEmbedMetrics(cfg.Registry)
	if err != nil {
		return nil, err
	}
	e := &KnowledgeEmbedder{cfg: cfg, metrics: m, wake: make(chan struct{}, 1), queued: map[string]bool{},
		pending: map[string][]store.Knowledge{}, retry: map[string]retryAt{}, spent: map[string]spentAt{}}
	cfg.Service.embedWake = e.Enqueue
	return e, nil
}

// Enqueue gives a merchant a turn, unless it has one.
func (e *KnowledgeEmbedder) Enqueue(merchantID string) {
	e.mu.Lock()
	if !e.queued[merchantID] {
		e.queued[merchantID] = true
		e.queue = append(e.queue, merchantID)
		e.metrics.queued.Set(float64(len(e.queue)))
	}
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// Run embeds until ctx ends, then waits for the batches in flight.
func (e *KnowledgeEmbedder) Run(ctx context.Context) {
	for _, m := range e.cfg.Merchants() {
		e.Enqueue(m.MerchantID)
	}
	var wg sync.WaitGroup
	for range e.cfg.Workers {
		wg.Go(func() { e.work(ctx) })
	}
	wg.Wait()
}

// work takes turns from the queue until ctx ends.
func (e *KnowledgeEmbedder) work(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		id, wait := e.next(time.Now())
		if id == "" {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				return
			case <-e.wake:
			case <-timer.C:
			}
			continue
		}
		more, err := e.turn(ctx, id)
		if ctx.Err() != nil {
			return
		}
		e.done(id, more, err)
	}
}

// next takes the first merchant of the queue whose retry is due, or returns how long until one may be.
func (e *KnowledgeEmbedder) next(now time.Time) (string, time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.requeueUnspentLocked(now)
	wait := e.cfg.SpentCheck
	for i, id := range e.queue {
		r, failed := e.retry[id]
		if failed && now.Before(r.at) {
			wait = min(wait, r.at.Sub(now))
			continue
		}
		e.queue = append(e.queue[:i:i], e.queue[i+1:]...)
		e.metrics.queued.Set(float64(len(e.queue)))
		return id, 0
	}
	return "", wait
}

// requeueUnspentLocked gives a turn, once every SpentCheck, to the merchants past their plan's monthly tokens
// whose month has turned or whose plan's ceiling rose since.
func (e *KnowledgeEmbedder) requeueUnspentLocked(now time.Time) {
	if len(e.spent) == 0 || now.Sub(e.checked) < e.cfg.SpentCheck {
		return
	}
	e.checked = now
	month := monthOf(e.cfg.Service.now())
	for id, at := range e.spent {
		m, ok := e.cfg.Tenants.Merchant(id)
		switch {
		case !ok:
			delete(e.spent, id)
		case at.month != month || m.Plan.MonthlyTokens == 0 || m.Plan.MonthlyTokens > at.ceiling:
			delete(e.spent, id)
			if !e.queued[id] {
				e.queued[id] = true
				e.queue = append(e.queue, id)
			}
		}
	}
	e.metrics.queued.Set(float64(len(e.queue)))
}

// monthOf is the UTC month of t, in which the plans' monthly tokens are counted (store.Store.TokensThisMonth).
func monthOf(t time.Time) string { return t.UTC().Format("2006-01") }

// spend notes that the merchant's items wait for its plan's monthly tokens.
func (e *KnowledgeEmbedder) spend(m *tenant.Bundle) {
	e.mu.Lock()
	e.spent[m.MerchantID] = spentAt{month: monthOf(e.cfg.Service.now()), ceiling: m.Plan.MonthlyTokens}
	e.mu.Unlock()
}

// done puts a merchant back at the end of the queue when it has more to embed or its batch failed, and lets it go
// otherwise.
func (e *KnowledgeEmbedder) done(id string, more bool, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err != nil {
		r := e.retry[id]
		r.wait = min(max(2*r.wait, e.cfg.RetryWait), embedRetryMax)
		r.at = time.Now().Add(r.wait)
		e.retry[id] = r
	} else {
		delete(e.retry, id)
	}
	if more || err != nil {
		e.queue = append(e.queue, id)
		e.metrics.queued.Set(float64(len(e.queue)))
		return
	}
	delete(e.queued, id)
	delete(e.pending, id)
}

// turn embeds one batch of a merchant's stale items and reports whether it may have more. A merchant's pass
// starts with a read of its items and vectors, and ends with another that finds nothing stale: items written
// during the pass are found by it. The pass holds the merchant's lease from its first batch to its end, so that
// replicas embed each item once; a merchant with nothing stale is looked at without it, as most are at start.
func (e *KnowledgeEmbedder) turn(ctx context.Context, merchantID string) (more bool, err error) {
	m, ok := e.cfg.Tenants.Merchant(merchantID)
	if !ok || m.Suspended {
		return false, nil
	}
	emb, ok := e.cfg.Embedders.embeddingFor(m)
	if !ok {
		return false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, embedBatchTimeout)
	defer cancel()
	log := e.cfg.Logger.With("merchant", merchantID)
	e.mu.Lock()
	todo, started := e.pending[merchantID]
	e.mu.Unlock()
	if len(todo) == 0 {
		if todo, err = e.stale(ctx, log, merchantID, emb.Model()); err != nil {
			return false, err
		}
		if len(todo) == 0 {
			e.release(ctx, log, merchantID, started)
			return false, nil
		}
	}
	if over, err := e.overCeiling(ctx, m); err != nil || over {
		if over {
			e.spend(m)
			e.release(ctx, log, merchantID, started)
			log.Info("not embedding the knowledge until the month turns: the plan's monthly tokens are spent; answering from words")
		}
		return false, err
	}
	if leased, err := e.claim(ctx, merchantID, embedLeaseTTL); err != nil || !leased {
		if err != nil {
			log.Error("claiming the merchant's embedding lease", "error", err)
			return true, err
		}
		return true, errEmbeddedElsewhere
	}
	if !started {
		// Another replica may have embedded the items between the first read and the claim.
		if todo, err = e.stale(ctx, log, merchantID, emb.Model()); err != nil || len(todo) == 0 {
			e.release(ctx, log, merchantID, true)
			return false, err
		}
		log.Info("embedding the knowledge", "items", len(todo), "provider", m.Assistant.Provider, "model", emb.Model(),
			"own_key", emb.apiKey != "")
	}
	batch, texts, hashes := takeBatch(todo, emb.BatchSize())
	res, err := emb.embed(ctx, texts)
	if err == nil && len(res.Vectors) != len(texts) {
		err = fmt.Errorf("%d vectors for %d texts", len(res.Vectors), len(texts))
	}
	if err != nil {
		e.metrics.failures.Inc()
		// The error names the server and its status, never the key.
		log.Warn("embedding the knowledge failed; trying again later, answering from words meanwhile",
			"items", len(batch), "error", err.Error())
		return true, err
	}
	written, err := e.write(ctx, merchantID, emb.Model(), batch, hashes, res)
	if err != nil {
		log.Error("storing the knowledge's vectors", "error", err)
		return true, err
	}
	e.metrics.passages.Add(float64(len(texts)))
	e.metrics.tokens.Add(float64(res.Tokens))
	rest := todo[len(batch):]
	if !written {
		rest = nil // the batch's items went meanwhile, perhaps with the merchant: the next turn reads what is left
	}
	e.mu.Lock()
	e.pending[merchantID] = rest
	e.mu.Unlock()
	return true, nil
}

// embedLease names the merchant's embedding lease among its leases.
const embedLease = "embed"

// claim takes or renews the merchant's embedding lease for ttl, and reports whether this replica holds it.
func (e *KnowledgeEmbedder) claim(ctx context.Context, merchantID string, ttl time.Duration) (leased bool, err error) {
	err = e.cfg.Service.store.Write(ctx, func(tx store.Tx) error {
		leased, err = tx.ClaimLease(ctx, merchantID, embedLease, e.cfg.Holder, e.cfg.Service.now(), ttl)
		return err
	})
	return leased, err
}

// release ends the merchant's embedding lease at the end of a pass that held it (held), so that another replica
// need not wait for it to run out. Its row stays, ended, as every lease's does (store.Tx.ClaimLease): one row per
// merchant embedded, which the merchant's erasure deletes with the rest of its data, and which a release after
// the erasure does not write back.
func (e *KnowledgeEmbedder) release(ctx context.Context, log *slog.Logger, merchantID string, held bool) {
	if !held {
		return
	}
	if _, err := e.claim(ctx, merchantID, 0); err != nil {
		log.Warn("releasing the merchant's embedding lease; it runs out by itself", "error", err)
	}
}

// stale reads the merchant's items that need embedding with model. It reads what the stored vectors are of, not
// the vectors: at start it reads every merchant's, beside the chat. It logs its failure.
func (e *KnowledgeEmbedder) stale(ctx context.Context, log *slog.Logger, merchantID, model string) ([]store.Knowledge, error) {
	e.reading.Lock()
	defer e.reading.Unlock()
	s := e.cfg.Service.store
	items, err := s.AllKnowledge(ctx, merchantID)
	var stored []store.KnowledgeVector
	if err == nil {
		stored, err = s.KnowledgeVectorStamps(ctx, merchantID)
	}
	if err != nil {
		log.Error("reading the knowledge to embed", "error", err)
		return nil, err
	}
	return staleItems(items, stored, model), nil
}

// overCeiling reports whether the merchant's answers and embeddings took the plan's monthly tokens.
func (e *KnowledgeEmbedder) overCeiling(ctx context.Context, m *tenant.Bundle) (bool, error) {
	if m.Plan.MonthlyTokens == 0 {
		return false, nil
	}
	used, err := e.cfg.Service.store.TokensThisMonth(ctx, m.MerchantID, e.cfg.Service.now())
	if err != nil {
		return false, err
	}
	return used >= m.Plan.MonthlyTokens, nil
}

// takeBatch takes the first items of todo whose passages fit in size texts, at least one item, and returns
// them with their texts and hashes, item after item.
func takeBatch(todo []store.Knowledge, size int) (batch []store.Knowledge, texts []string, hashes [][]string) {
	for _, k := range todo {
		t, h := embeddingTexts(k)
		if len(batch) > 0 && len(texts)+len(t) > size {
			break
		}
		batch, texts, hashes = append(batch, k), append(texts, t...), append(hashes, h)
	}
	return batch, texts, hashes
}

// write stores the batch's vectors of model and counts its tokens, in one transaction that changes the merchant's
// knowledge revision, so that every replica's index takes them in, and reports whether any item was left to
// write. An item deleted meanwhile is skipped; one changed meanwhile gets vectors of its old text, which its
// hashes tell, and is embedded again.
func (e *KnowledgeEmbedder) write(ctx context.Context, merchantID, model string, batch []store.Knowledge, hashes [][]string,
	res embeddings.Result) (written bool, err error) {
	at := e.cfg.Service.now().UTC()
	err = e.cfg.Service.store.Write(ctx, func(tx store.Tx) error {
		written = false
		next := 0
		for i, k := range batch {
			vs := make([]store.KnowledgeVector, len(hashes[i]))
			for p, h := range hashes[i] {
				vs[p] = store.KnowledgeVector{KnowledgeID: k.ID, Passage: p, Model: model, TextHash: h, Vector: res.Vectors[next+p]}
			}
			next += len(vs)
			switch err := tx.ReplaceKnowledgeVectors(ctx, merchantID, k.ID, vs); {
			case errors.Is(err, store.ErrNotFound): // deleted meanwhile
			case err != nil:
				return err
			default:
				written = true
			}
		}
		if !written {
			// Every item went while the provider embedded them, as a merchant's erasure takes them: writing the
			// revision or the tokens would leave rows of an erased merchant. The tokens of items deleted by an
			// edit go uncounted, in this race only.
			return nil
		}
		if err := tx.TouchKnowledge(ctx, merchantID, 0); err != nil {
			return err
		}
		if res.Tokens > 0 {
			return tx.AddMonthlyTokens(ctx, merchantID, at, res.Tokens)
		}
		return nil
	})
	return written, err
}

type embedMetrics struct {
	queued                     prometheus.Gauge
	passages, tokens, failures prometheus.Counter
}

func newEmbedMetrics(reg prometheus.Registerer) (*embedMetrics, error) {
	m := &embedMetrics{
		queued: prometheus.NewGauge(prometheus.GaugeOpts{Name: "parley_runtime_embedding_queue_merchants",
			Help: "Merchants waiting for their turn to have their knowledge embedded."}),
		passages: prometheus.NewCounter(prometheus.CounterOpts{Name: "parley_runtime_embedding_passages_total",
			Help: "Knowledge passages embedded by the model provider."}),
		tokens: prometheus.NewCounter(prometheus.CounterOpts{Name: "parley_runtime_embedding_tokens_total",
			Help: "Tokens the model provider counted for embedding knowledge, counted against the merchants' monthly tokens."}),
		failures: prometheus.NewCounter(prometheus.CounterOpts{Name: "parley_runtime_embedding_failures_total",
			Help: "Batches of knowledge the model provider failed to embed, tried again later."}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.queued, m.passages, m.tokens, m.failures} {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("registering the embedder's metrics: %w", err)
			}
		}
	}
	return m, nil
}

// DefaultQuestionTimeout bounds the embedding of a question: past it, the question is searched by words alone
// rather than keep the visitor waiting on the provider.
const DefaultQuestionTimeout = 3 * time.Second

// The reasons a question was searched by words alone, the values of the words-only counter's label: embedding
// it failed although its index has vectors, or the merchant's provider has no embedding model here.
const (
	wordsOnlyTimeout  = "timeout"
	wordsOnlyError    = "error"
	wordsOnlyProvider = "provider"
)

func newWordsOnlyCounter(reg prometheus.Registerer) (*prometheus.CounterVec, error) {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "parley_runtime_retrieval_words_only_total",
		Help: "Questions searched by words alone because embedding them failed (timeout, error) or the merchant's provider has no embedding model (provider), by reason."},
		[]string{"reason"})
	for _, r := range []string{wordsOnlyTimeout, wordsOnlyError, wordsOnlyProvider} {
		c.WithLabelValues(r)
	}
	if reg != nil {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("registering the words-only counter: %w", err)
		}
	}
	return c, nil
}

// questionVector embeds a turn's question, made standalone, once, for a search by meaning over index, and
// returns the vector and the tokens it took. It embeds nothing, and the question is searched by words alone,
// when the runtime has no embedding model, the index has no vectors yet, or the merchant's answers are past the
// plan's monthly tokens (metered is false); and, counted, when the merchant's provider has no embedding model, or
// it fails or is slow. The question goes to the merchant's provider, with its own key when it brings one.
func (s *Service) questionVector(ctx context.Context, m *tenant.Bundle, index *assistant.Index, metered bool, question string) ([]float32, int64) {
	if len(s.embedders) == 0 || !metered {
		return nil, 0
	}
	emb, ok := s.embedders.embeddingFor(m)
	if !ok {
		s.wordsOnly.WithLabelValues(wordsOnlyProvider).Inc()
		return nil, 0
	}
	if _, ok := index.HasVectors(); !ok {
		return nil, 0
	}
	ctx, cancel := context.WithTimeout(ctx, s.questionTimeout)
	defer cancel()
	res, err := emb.embed(ctx, []string{question})
	if err == nil && len(res.Vectors) != 1 {
		err = fmt.Errorf("%d vectors for one question", len(res.Vectors))
	}
	if err != nil {
		reason := wordsOnlyError
		if errors.Is(err, context.DeadlineExceeded) {
			reason = wordsOnlyTimeout
		}
		s.wordsOnly.WithLabelValues(reason).Inc()
		s.log.WarnContext(ctx, "embedding the question failed; searching by words alone", "reason", reason, "error", err.Error())
		return nil, 0
	}
	return res.Vectors[0], res.Tokens
}

// index is the merchant's index, of its widget's locale and its provider's embedding model.
func (s *Service) index(ctx context.Context, m *tenant.Bundle) (*assistant.Index, error) {
	return s.indexes.get(ctx, m.MerchantID, indexKind{locale: m.Widget.Locale, model: s.embedders.model(m)})
}

// knowledgeChanged makes the merchant's index reflect a knowledge write this replica just made (see
// indexCache.reload), and gives the merchant a turn of the embedder, which embeds what the write changed.
func (s *Service) knowledgeChanged(ctx context.Context, merchantID string) {
	s.indexes.reload(ctx, merchantID)
	if s.embedWake != nil {
		s.embedWake(merchantID)
	}
}
