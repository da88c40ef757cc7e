//go:build integration

package bench

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/parley-dev/parley/internal/contract"
	"github.com/parley-dev/parley/internal/credentials"
	"github.com/parley-dev/parley/internal/testutil/bundletest"
	"github.com/parley-dev/parley/internal/testutil/fakeopenai"
	"github.com/parley-dev/parley/internal/testutil/runtimeproc"
	"github.com/parley-dev/parley/internal/testutil/synthkb"
	"github.com/parley-dev/parley/runtime/assistant"
	"github.com/parley-dev/parley/runtime/assistant/embeddings"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/sqlite"
	"github.com/parley-dev/parley/runtime/tenant"
)

// Shape of BenchmarkManyMerchants.
const (
	manyMerchants     = 10_000
	itemsPerMerchant  = 100
	itemCharacters    = 400
	manyConcurrency   = 8
	manyPhase         = 15 * time.Second
	evictedQuestions  = 200
	manyZipfExponent  = 1.1
	manyMerchantsEnv  = "PARLEY_BENCH_MERCHANTS" // a smaller run, for trying the benchmark out
	manyCacheBytesEnv = "PARLEY_BENCH_INDEX_CACHE_BYTES"
	// manyVectorsEnv, set to a length such as 512, runs the runtime with an embedding model of vectors that long
	// and every item's vectors in the store (make bench-many-vectors).
	manyVectorsEnv = "PARLEY_BENCH_VECTORS"
	// The models the runtime is configured with when it searches by meaning; the fake server answers any.
	manyChatModel  = "bench-chat"
	manyEmbedModel = "bench-embed"
)

// BenchmarkManyMerchants runs one `parley runtime` for 10,000 merchants of 100 knowledge items each (1,000,000
// items of about 400 characters): their tenant bundles in a --tenants-dir, as the operator's Secrets would be,
// and their knowledge written into the runtime's SQLite store beforehand, as the knowledge API writes it. The
// index cache has the budget the operator gives a runtime with the default resources. It reports the time until
// every bundle is loaded (start to /readyz), the throughput and p99 of questions spread uniformly over all
// merchants and skewed (Zipf, s=1.1: a few merchants get most questions), the p99 of questions to merchants whose
// index was evicted (asked one at a time, each a cache miss), and the runtime's peak RSS with its anonymous and
// file-backed parts. Run it with `make bench-many`; the runtime inherits the environment, so PARLEY_MEMORY_LIMIT
// set for it gives the runtime a container's memory limit, as the operator's Deployment does. With
// PARLEY_BENCH_PPROF set to an address, the runtime serves net/http/pprof there while the benchmark runs.
//
// With PARLEY_BENCH_VECTORS set to a length (`make bench-many-vectors`: 512), the runtime answers with a model and
// searches by meaning: --assistant=openai against one fake OpenAI server (fakeopenai) for the answers and the
// embeddings, every item's vectors of that length seeded in the store as the knowledge embedder writes them. It
// then also counts the provider's calls per question: exactly one embedding, of the question, and at most one
// answer; the knowledge is never embedded again on the chat's path.
func BenchmarkManyMerchants(b *testing.B) {
	merchants := manyMerchants
	if v := os.Getenv(manyMerchantsEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < evictedQuestions {
			b.Fatalf("$%s=%q: want a number of merchants, at least %d", manyMerchantsEnv, v, evictedQuestions)
		}
		merchants = n
	}
	cacheBytes := strconv.Itoa(contract.DefaultIndexCacheBytes)
	if v := os.Getenv(manyCacheBytesEnv); v != "" {
		cacheBytes = v
	}
	var vectors *manyVectors
	if v := os.Getenv(manyVectorsEnv); v != "" {
		dims, err := strconv.Atoi(v)
		if err != nil || dims < 1 || dims > contract.MaxEmbeddingsDimensions {
			b.Fatalf("$%s=%q: want the vectors' length, 1 to %d", manyVectorsEnv, v, contract.MaxEmbeddingsDimensions)
		}
		vectors = newManyVectors(b, dims)
	}
	dir := b.TempDir()
	tenants, db := filepath.Join(dir, "tenants"), filepath.Join(dir, "parley.db")
	start := time.Now()
	keys := writeBundles(b, tenants, merchants)
	seedMerchants(b, db, merchants, vectors)
	b.Logf("%d bundles and %d knowledge items written in %s", merchants, merchants*itemsPerMerchant, time.Since(start).Round(time.Second))

	bin := runtimeproc.Build(b)
	b.ResetTimer()
	start = time.Now()
	args := []string{"--tenants-dir=" + tenants, "--sqlite-path=" + db, "--log-level=error",
		contract.Arg(contract.FlagIndexCacheBytes, cacheBytes)}
	if addr := os.Getenv("PARLEY_BENCH_PPROF"); addr != "" {
		args = append(args, contract.Arg(contract.FlagPprofListen, addr))
	}
	var env []string
	if vectors != nil {
		args = append(args, vectors.args()...)
		env = append(env, contract.EnvOpenAIAPIKey+"=sk-bench")
	}
	p := runtimeproc.Start(b, bin, env, args...)
	loaded := time.Since(start)
	sampleCtx, stopSampling := context.WithCancel(b.Context())
	parts := make(chan rssParts, 1)
	go func() { parts <- peakRSSParts(sampleCtx, p.Pid()) }()
	if n := metric(b, p.MetricsURL, "parley_runtime_tenants"); n != float64(merchants) {
		b.Fatalf("the runtime serves %v merchants once ready, want %d", n, merchants)
	}

	// Questions made of the words common to every merchant's knowledge, as visitors' questions are.
	g := synthkb.New(0)
	questions := make([]string, 1000)
	for i := range questions {
		questions[i] = g.Question()
	}
	asked := 0
	if vectors != nil {
		// The runtime starts by reading every merchant's items and vectors for those to embed again: evicted
		// merchants' questions during that check, then the phases below after it, as a runtime serves once
		// started.
		during := askEvicted(b, p.URL, keys, questions)
		asked += len(during)
		checked := vectors.awaitCheck(b, p.MetricsURL, start)
		ev := summarise(during, 0)
		b.ReportMetric(checked.Seconds(), "vector-check-s")
		b.ReportMetric(ms(ev.p99), "evicted-during-check-p99-ms")
		b.Logf("the start's check of every merchant's vectors took %s; evicted merchants during it: p50 %s, p99 %s",
			checked.Round(time.Second), ev.p50, ev.p99)
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	uniform := load(p.URL, keys, questions, func() int { return rnd.IntN(merchants) })
	zipf := rand.NewZipf(rnd, manyZipfExponent, 1, uint64(merchants-1))
	skewed := load(p.URL, keys, questions, func() int { return int(zipf.Uint64()) })

	// Merchants last asked long ago, one at a time: each waits for its index to be built.
	misses := metric(b, p.MetricsURL, "parley_runtime_index_cache_misses_total")
	evicted := askEvicted(b, p.URL, keys, questions)
	missed := metric(b, p.MetricsURL, "parley_runtime_index_cache_misses_total") - misses
	b.StopTimer()
	if vectors != nil {
		vectors.report(b, asked+uniform.n+skewed.n+len(evicted), questions)
	}

	stopSampling()
	peak, peakParts := p.PeakRSS(b), <-parts
	ev := summarise(evicted, 0)
	b.ReportMetric(loaded.Seconds(), "load-s")
	b.ReportMetric(uniform.rps, "uniform-req/s")
	b.ReportMetric(ms(uniform.p99), "uniform-p99-ms")
	b.ReportMetric(skewed.rps, "zipf-req/s")
	b.ReportMetric(ms(skewed.p99), "zipf-p99-ms")
	b.ReportMetric(ms(ev.p99), "evicted-p99-ms")
	b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MiB")
	b.ReportMetric(peakParts.anon, "peak-anon-MiB")
	b.Logf("%d merchants x %d items; index cache %s bytes; all bundles loaded %s after start", merchants, itemsPerMerchant, cacheBytes, loaded.Round(time.Millisecond))
	b.Logf("uniform: %.0f req/s, p50 %s, p99 %s (%d errors)", uniform.rps, uniform.p50, uniform.p99, uniform.errors)
	b.Logf("zipf s=%.1f: %.0f req/s, p50 %s, p99 %s (%d errors)", manyZipfExponent, skewed.rps, skewed.p50, skewed.p99, skewed.errors)
	b.Logf("evicted merchants, one at a time: p50 %s, p99 %s (%v of %d were cache misses)", ev.p50, ev.p99, missed, evictedQuestions)
	b.Logf("index cache: %v bytes in %v indexes, %v hits, %v misses, %v rebuilds, %v evictions; runtime peak RSS %.1f MiB "+
		"(anonymous at most %.1f MiB, files at most %.1f MiB)",
		metric(b, p.MetricsURL, "parley_runtime_index_cache_bytes"), metric(b, p.MetricsURL, "parley_runtime_index_cache_entries"),
		metric(b, p.MetricsURL, "parley_runtime_index_cache_hits_total"), metric(b, p.MetricsURL, "parley_runtime_index_cache_misses_total"),
		metric(b, p.MetricsURL, "parley_runtime_index_cache_rebuilds_total"), metric(b, p.MetricsURL, "parley_runtime_index_cache_evictions_total"),
		float64(peak)/(1<<20), peakParts.anon, peakParts.file)
	if uniform.errors+skewed.errors > 0 {
		b.Errorf("%d questions failed", uniform.errors+skewed.errors)
	}
}

// writeBundles writes one tenant bundle file per merchant, each with a secret key, and returns the keys.
func writeBundles(b *testing.B, dir string, merchants int) []string {
	keys := make([]string, merchants)
	for i := range keys {
		key, err := credentials.NewAPIKey(credentials.SecretPrefix)
		if err != nil {
			b.Fatal(err)
		}
		d, err := credentials.Describe(key)
		if err != nil {
			b.Fatal(err)
		}
		id := merchantID(i)
		bundletest.WriteFile(b, filepath.Join(dir, id+".json"), &tenant.Bundle{APIVersion: tenant.APIVersion, MerchantID: id,
			DisplayName: id, Plan: tenant.Plan{Name: "pro", RequestsPerSecond: 1000, Burst: 1000, APIAccess: true, KnowledgeItems: 1000},
			APIKeys: []tenant.APIKey{{ID: d.ID, Type: tenant.KeySecret, SHA256: d.SHA256}}})
		keys[i] = key
	}
	return keys
}

// seedMerchants writes each merchant's items in one transaction of the store's own statements, as an import
// through the API does.
func seedMerchants(b *testing.B, path string, merchants int, vectors *manyVectors) {
	st, err := sqlite.Open(b.Context(), path)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	now := time.Now().UTC()
	vocabulary := synthkb.New(0)
	for m := range merchants {
		g := vocabulary.WithSeed(uint64(m))
		id := merchantID(m)
		items := make([]store.Knowledge, itemsPerMerchant)
		for i := range items {
			it := g.Item(itemCharacters)
			items[i] = store.Knowledge{ID: fmt.Sprintf("kn_%s_%03d", id, i), MerchantID: id, Title: it.Title,
				Content: it.Content, Tags: it.Tags, CreatedAt: now, UpdatedAt: now}
		}
		err := st.Write(b.Context(), func(tx store.Tx) error {
			for _, k := range items {
				if _, err := tx.ClaimKnowledgeSlot(b.Context(), id, 0); err != nil {
					return err
				}
				if err := tx.InsertKnowledge(b.Context(), k); err != nil {
					return err
				}
				if vectors == nil {
					continue
				}
				if err := tx.ReplaceKnowledgeVectors(b.Context(), id, k.ID, vectors.of(k)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// askEvicted asks evictedQuestions merchants spread over all of them one question each, one at a time, and
// returns how long each took.
func askEvicted(b *testing.B, base string, keys, questions []string) []time.Duration {
	var took []time.Duration
	for i := range evictedQuestions {
		m := (i*7919 + 13) % len(keys)
		t0 := time.Now()
		ask(b, base, keys[m], questions)
		took = append(took, time.Since(t0))
	}
	return took
}

// manyVectors is the search by meaning of a BenchmarkManyMerchants run: the fake provider and the vectors' length.
type manyVectors struct {
	fake *fakeopenai.Server
	dims int
	// model names the vectors as the runtime's embeddings client does, so that it takes the seeded ones as
	// current and embeds nothing again.
	model string
}

func newManyVectors(b *testing.B, dims int) *manyVectors {
	fake := fakeopenai.New(b, "The answer, ", "from the knowledge.")
	c, err := embeddings.New(embeddings.Config{BaseURL: fake.URL(), Model: manyEmbedModel, Dimensions: dims})
	if err != nil {
		b.Fatal(err)
	}
	return &manyVectors{fake: fake, dims: dims, model: c.Model()}
}

// args are the runtime's flags that answer with the fake's model and embed with its embedding model.
func (v *manyVectors) args() []string {
	return []string{contract.Arg(contract.FlagAssistant, contract.AssistantOpenAI), contract.Arg(contract.FlagOpenAIBaseURL, v.fake.URL()),
		contract.Arg(contract.FlagOpenAIModel, manyChatModel), contract.Arg(contract.FlagOpenAIEmbeddingsModel, manyEmbedModel),
		contract.Arg(contract.FlagOpenAIEmbeddingsDims, strconv.Itoa(v.dims))}
}

// of returns the item's vectors as the knowledge embedder stores them: one per passage, of the fake model.
func (v *manyVectors) of(k store.Knowledge) []store.KnowledgeVector {
	texts := assistant.EmbeddingTexts(assistant.Item{Title: k.Title, Content: k.Content, Questions: k.Questions})
	out := make([]store.KnowledgeVector, len(texts))
	for i, vec := range v.fake.Embed.Embed(texts, v.dims) {
		sum := sha256.Sum256([]byte(texts[i]))
		out[i] = store.KnowledgeVector{KnowledgeID: k.ID, Passage: i, Model: v.model, TextHash: hex.EncodeToString(sum[:]), Vector: vec}
	}
	return out
}

// awaitCheck waits until the runtime's knowledge embedder has had every merchant's turn, the check at its start of
// which items to embed again, and returns how long since the runtime started it took.
func (v *manyVectors) awaitCheck(b *testing.B, metricsURL string, started time.Time) time.Duration {
	for metric(b, metricsURL, "parley_runtime_embedding_queue_merchants") > 0 {
		if time.Since(started) > 20*time.Minute {
			b.Fatal("the runtime's knowledge embedder still has merchants queued after 20 minutes")
		}
		time.Sleep(100 * time.Millisecond)
	}
	return time.Since(started)
}

// report counts the provider's calls for the asked questions: each must have been embedded once, alone, and
// nothing else embedded; the model answers each at most once.
func (v *manyVectors) report(b *testing.B, asked int, questions []string) {
	embeds, answers := v.fake.Embed.Requests(), len(v.fake.Chat.Requests())
	inputs := 0
	for _, r := range embeds {
		inputs += len(r.Input)
		if len(r.Input) != 1 || !slices.Contains(questions, r.Input[0]) {
			b.Errorf("the provider was asked to embed %d texts, not one question: %.80q", len(r.Input), r.Input)
		}
	}
	b.ReportMetric(float64(len(embeds))/float64(asked), "embed-calls/question")
	b.ReportMetric(float64(answers)/float64(asked), "model-calls/question")
	b.Logf("%d-dimensional vectors (%s): %d questions, %d embedding calls of %d texts, %d answers by the model",
		v.dims, v.model, asked, len(embeds), inputs, answers)
	if len(embeds) != asked {
		b.Errorf("%d embedding calls for %d questions, want one each", len(embeds), asked)
	}
	if answers > asked {
		b.Errorf("%d calls to the model for %d questions, want at most one each", answers, asked)
	}
}

func merchantID(i int) string { return fmt.Sprintf("shop%05d", i) }

// latencies summarises one load phase.
type latencies struct {
	n        int
	rps      float64
	p50, p99 time.Duration
	errors   int
}

// load asks questions of the merchants pick chooses from manyConcurrency clients for manyPhase.
func load(base string, keys, questions []string, pick func() int) latencies {
	var (
		mu     sync.Mutex
		all    []time.Duration
		errors int
		wg     sync.WaitGroup
	)
	picks := make(chan int)
	end := time.Now().Add(manyPhase)
	for range manyConcurrency {
		wg.Go(func() {
			var mine []time.Duration
			failed := 0
			for m := range picks {
				t0 := time.Now()
				if !try(base, keys[m], questions) {
					failed++
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			all, errors = append(all, mine...), errors+failed
			mu.Unlock()
		})
	}
	began := time.Now()
	for time.Now().Before(end) {
		picks <- pick()
	}
	close(picks)
	wg.Wait()
	return summarise(all, time.Since(began))
}

func summarise(d []time.Duration, took time.Duration) latencies {
	slices.Sort(d)
	l := latencies{n: len(d), p50: d[len(d)/2], p99: d[len(d)*99/100]}
	if took > 0 {
		l.rps = float64(len(d)) / took.Seconds()
	}
	return l
}

// ask asks one of the questions with key and fails the benchmark unless it is answered.
func ask(b *testing.B, base, key string, questions []string) {
	if !try(base, key, questions) {
		b.Fatal("a question was not answered")
	}
}

// try asks one of the questions with key and reports whether it was answered (200).
func try(base, key string, questions []string) bool {
	body := `{"message": ` + strconv.Quote(questions[rand.IntN(len(questions))]) + `}`
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, base+"/api/v1/chat", bytes.NewReader([]byte(body)))
	if err != nil {
		return false
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// metric reads one unlabelled sample from the runtime's metrics listener.
func metric(b *testing.B, metricsURL, name string) float64 {
	resp, err := http.Get(metricsURL + "/metrics")
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	text, err := io.ReadAll(resp.Body)
	if err != nil {
		b.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^` + name + ` (\S+)$`).FindSubmatch(text)
	if m == nil {
		b.Fatalf("the runtime exports no %s", name)
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		b.Fatal(err)
	}
	return v
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
