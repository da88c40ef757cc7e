package chat_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parley-dev/parley/internal/testutil/fakeembed"
	"github.com/parley-dev/parley/internal/testutil/rowdump"
	"github.com/parley-dev/parley/runtime/assistant"
	"github.com/parley-dev/parley/runtime/assistant/embeddings"
	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/ids"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/sqlite"
	"github.com/parley-dev/parley/runtime/tenant"
)

// The fake model's multilingual dictionary (see fakeembed): German words and English paraphrases mapped to the
// English concept they name, function words of both left out.
var (
	concepts = map[string]string{"gutschein": "gift card", "voucher": "gift card", "gift cards": "gift card",
		"gift card": "gift card", "geschenk": "gift", "present": "gift", "kaufen": "buy", "purchase": "buy",
		"versand": "ship", "shipping": "ship", "lieferung": "ship", "delivery": "ship", "kanada": "canada",
		"dauert": "take", "takes": "take", "lange": "long"}
	ignored = func() map[string]bool {
		m := map[string]bool{}
		for _, w := range strings.Fields(`a an the and or of to in on for with as at by is are be can i you we do does
			how it what ich kann einen eine ein der die das und oder wie als zu mit von es wir sie`) {
			m[w] = true
		}
		return m
	}()
)

// tenants serves bundles from a map, which a test may change while the embedder reads it, as a registry's.
type tenants struct {
	mu sync.Mutex
	m  map[string]*tenant.Bundle
}

func (ts *tenants) Retirements() []tenant.Retirement { return nil }

func (ts *tenants) Merchant(id string) (*tenant.Bundle, bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	m, ok := ts.m[id]
	return m, ok
}

// set serves m, in place of the merchant's bundle before.
func (ts *tenants) set(m *tenant.Bundle) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.m[m.MerchantID] = m
}

func (ts *tenants) all() []*tenant.Bundle {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	var out []*tenant.Bundle
	for _, m := range ts.m {
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b *tenant.Bundle) int { return strings.Compare(a.MerchantID, b.MerchantID) })
	return out
}

// clock is a test's time, which it may move on while the service and the embedder read it.
type clock struct{ at atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.at.Store(time.Now().UnixNano())
	return c
}

func (c *clock) now() time.Time { return time.Unix(0, c.at.Load()) }

func (c *clock) set(t time.Time) { c.at.Store(t.UnixNano()) }

// embedWorld is a chat service whose questions and knowledge are embedded by a fake provider, through the real
// client, over a SQLite store.
type embedWorld struct {
	svc      *chat.Service
	store    store.Store
	provider *fakeembed.Provider
	client   *embeddings.Client
	embedder *chat.KnowledgeEmbedder
	tenants  *tenants
	clock    *clock
	reg      *prometheus.Registry
}

// newEmbedWorld builds the world over st with a client of model and batch size, and the merchants ms.
func newEmbedWorld(t *testing.T, st store.Store, p *fakeembed.Provider, model string, batch int, ms ...*tenant.Bundle) *embedWorld {
	t.Helper()
	c := embeddingsClient(t, p, model, batch)
	w := newEmbedWorldOf(t, st, chat.Embedders{"": c}, ms...)
	w.provider, w.client = p, c
	return w
}

// embeddingsClient is a client of the fake p's model, of batch size, that tries once.
func embeddingsClient(t *testing.T, p *fakeembed.Provider, model string, batch int) *embeddings.Client {
	t.Helper()
	c, err := embeddings.New(embeddings.Config{BaseURL: p.URL(), Model: model, BatchSize: batch, Attempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// newEmbedWorldOf builds the world over st with the providers' embedding models es, and the merchants ms.
func newEmbedWorldOf(t *testing.T, st store.Store, es chat.Embedders, ms ...*tenant.Bundle) *embedWorld {
	t.Helper()
	w := &embedWorld{store: st, tenants: &tenants{m: map[string]*tenant.Bundle{}}, clock: newClock(), reg: prometheus.NewRegistry()}
	for _, m := range ms {
		w.tenants.set(m)
	}
	// The fake's cosines for a match are lower than a real model's (an item's concepts other than the question's
	// each pull its vector away): a lower bar for an answer by meaning.
	var err error
	w.svc, err = chat.New(chat.Config{Store: st, Responder: assistant.Retrieval{MinSimilarity: 0.25}, Embedders: es, Registry: w.reg,
		Now: w.clock.now})
	if err != nil {
		t.Fatal(err)
	}
	w.embedder, err = chat.NewKnowledgeEmbedder(chat.KnowledgeEmbedderConfig{Service: w.svc, Embedders: es, Tenants: w.tenants,
		Merchants: w.tenants.all, Workers: 1, RetryWait: 20 * time.Millisecond, SpentCheck: 10 * time.Millisecond,
		Holder: ids.New("replica_"), Registry: w.reg})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// run runs the embedder until the test ends, or until the function it returns stops it.
func (w *embedWorld) run(t *testing.T) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); w.embedder.Run(ctx) }()
	stop = sync.OnceFunc(func() { cancel(); <-done })
	t.Cleanup(stop)
	return stop
}

// waitEmbedded waits until every item of the merchant has a vector of model for each passage.
func (w *embedWorld) waitEmbedded(t *testing.T, merchantID, model string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		items, err := w.store.AllKnowledge(t.Context(), merchantID)
		if err != nil {
			t.Fatal(err)
		}
		vs, err := w.store.KnowledgeVectors(t.Context(), merchantID)
		if err != nil {
			t.Fatal(err)
		}
		embedded := map[string]bool{}
		for _, v := range vs {
			if v.Model == model {
				embedded[v.KnowledgeID] = true
			}
		}
		if len(embedded) == len(items) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d of %d items embedded with %s", merchantID, len(embedded), len(items), model)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func openStore(t *testing.T) store.Store {
	t.Helper()
	st, err := sqlite.Open(t.Context(), t.TempDir()+"/parley.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func shop(id string) *tenant.Bundle {
	return &tenant.Bundle{MerchantID: id, Plan: tenant.Plan{KnowledgeItems: 1000}}
}

// seedShop writes a few items of an English shop.
func seedShop(t *testing.T, svc *chat.Service, m *tenant.Bundle) map[string]string {
	t.Helper()
	ids := map[string]string{}
	for _, k := range []store.Knowledge{
		{Title: "Gift cards", Content: "Gift cards are sold in the shop and online, from 10 to 200 euros. They never expire."},
		{Title: "Shipping to Canada", Content: "We ship to Canada with Canada Post. Delivery takes 5 to 8 business days."},
		{Title: "Opening hours", Content: "The shop opens from 9 am to 6 pm, Monday to Saturday."},
	} {
		k, err := svc.CreateKnowledge(t.Context(), m, k)
		if err != nil {
			t.Fatal(err)
		}
		ids[k.Title] = k.ID
	}
	return ids
}

// TestAGermanQuestionFindsTheEnglishItem embeds a shop's English knowledge in the background and answers a German
// question from the item it means, which shares no word with it.
func TestAGermanQuestionFindsTheEnglishItem(t *testing.T) {
	p := fakeembed.New(t)
	p.Concepts, p.Ignore = concepts, ignored
	m := shop("acme")
	w := newEmbedWorld(t, openStore(t), p, "multilingual", 16, m)
	ids := seedShop(t, w.svc, m)
	// Before the knowledge is embedded the question is searched by words, and not embedded at all.
	const question = "Kann ich einen Gutschein als Geschenk kaufen?"
	r, err := w.svc.Answer(t.Context(), m, chat.Question{Message: question})
	if err != nil {
		t.Fatal(err)
	}
	if r.Message.Answered || slices.Contains(p.Inputs(), question) {
		t.Fatalf("before the knowledge is embedded: answered %v, question embedded %v", r.Message.Answered, slices.Contains(p.Inputs(), question))
	}
	w.run(t)
	w.waitEmbedded(t, "acme", "multilingual")
	waitFor(t, func() bool {
		r, err = w.svc.Answer(t.Context(), m, chat.Question{Message: question})
		return err == nil && r.Message.Answered
	})
	if r.Message.Sources[0].KnowledgeID != ids["Gift cards"] {
		t.Errorf("answered from %+v, want the gift cards", r.Message.Sources)
	}
	used, err := w.store.TokensThisMonth(t.Context(), "acme", time.Now())
	if err != nil || used == 0 {
		t.Errorf("tokens this month %d (%v): the embeddings' tokens are not counted", used, err)
	}
}

// TestAFollowUpIsEmbeddedStandalone checks that the provider is asked to embed a follow-up with the question it
// follows, and only once for the turn.
func TestAFollowUpIsEmbeddedStandalone(t *testing.T) {
	p := fakeembed.New(t)
	p.Concepts, p.Ignore = concepts, ignored
	m := shop("acme")
	w := newEmbedWorld(t, openStore(t), p, "multilingual", 16, m)
	ids := seedShop(t, w.svc, m)
	w.run(t)
	w.waitEmbedded(t, "acme", "multilingual")
	var r chat.Reply
	waitFor(t, func() bool { // the index takes the vectors in at its next revision check
		var err error
		r, err = w.svc.Answer(t.Context(), m, chat.Question{Message: "Do you ship to Canada?"})
		return err == nil && slices.Contains(p.Inputs(), "Do you ship to Canada?")
	})
	before := len(p.Requests())
	r, err := w.svc.Answer(t.Context(), m, chat.Question{Message: "and how long does it take?", ConversationID: r.ConversationID})
	if err != nil {
		t.Fatal(err)
	}
	asked := p.Requests()[before:]
	if len(asked) != 1 || !slices.Equal(asked[0].Input, []string{"and how long does it take?\nDo you ship to Canada?"}) {
		t.Errorf("the turn embedded %+v, want the follow-up with its question, once", asked)
	}
	if len(r.Message.Sources) == 0 || r.Message.Sources[0].KnowledgeID != ids["Shipping to Canada"] {
		t.Errorf("the follow-up cited %+v", r.Message.Sources)
	}
}

// TestAModelChangeReembedsWhileChatAnswersFromWords starts a runtime with another embedding model over knowledge
// embedded by the first: chat answers from words at once, the knowledge is embedded again in the background, and
// then the new model's vectors answer.
func TestAModelChangeReembedsWhileChatAnswersFromWords(t *testing.T) {
	st := openStore(t)
	p := fakeembed.New(t)
	p.Concepts, p.Ignore = concepts, ignored
	m := shop("acme")
	first := newEmbedWorld(t, st, p, "model-a", 16, m)
	seedShop(t, first.svc, m)
	first.run(t)
	first.waitEmbedded(t, "acme", "model-a")

	slow := fakeembed.New(t)
	slow.Concepts, slow.Ignore = concepts, ignored
	// The new model's server refuses at first, as one still starting does: the knowledge waits to be embedded.
	slow.Failures = []fakeembed.Refusal{{Status: http.StatusServiceUnavailable, Message: "loading model"}}
	second := newEmbedWorld(t, st, slow, "model-b", 16, m)
	r, err := second.svc.Answer(t.Context(), m, chat.Question{Message: "Do you ship to Canada?"})
	if err != nil || !r.Message.Answered {
		t.Fatalf("chat did not answer from words while the new model embeds (%v): %+v", err, r.Message)
	}
	if got := slow.Inputs(); slices.Contains(got, "Do you ship to Canada?") {
		t.Errorf("the question was embedded with no vectors of the new model to search")
	}
	second.run(t)
	second.waitEmbedded(t, "acme", "model-b")
	if got := counterValue(t, second.reg, "parley_runtime_embedding_failures_total"); got != 1 {
		t.Errorf("failures counted %v, want 1", got)
	}
}

// TestAMerchantsReembeddingDoesNotStarveAnother gives one merchant 40 items to embed and another one: the other's
// item is embedded within the first turns, not after the 40.
func TestAMerchantsReembeddingDoesNotStarveAnother(t *testing.T) {
	st := openStore(t)
	p := fakeembed.New(t)
	big, small := shop("big"), shop("small")
	w := newEmbedWorld(t, st, p, "m", 4, big, small)
	for i := range 40 {
		if _, err := w.svc.CreateKnowledge(t.Context(), big, store.Knowledge{Title: fmt.Sprintf("Item %d", i), Content: "Text."}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.svc.CreateKnowledge(t.Context(), small, store.Knowledge{Title: "The only item", Content: "Small text."}); err != nil {
		t.Fatal(err)
	}
	w.run(t)
	w.waitEmbedded(t, "big", "m")
	w.waitEmbedded(t, "small", "m")
	for i, r := range p.Requests() {
		if slices.ContainsFunc(r.Input, func(s string) bool { return strings.HasPrefix(s, "The only item") }) {
			if i > 1 {
				t.Errorf("the small merchant's item was embedded by request %d of %d", i+1, len(p.Requests()))
			}
			return
		}
	}
	t.Fatal("the small merchant's item was never embedded")
}

// readCounting is a store that counts the reads of a merchant's whole knowledge under way at once.
type readCounting struct {
	store.Store
	now, most atomic.Int32
}

func (s *readCounting) AllKnowledge(ctx context.Context, merchantID string) ([]store.Knowledge, error) {
	n := s.now.Add(1)
	defer s.now.Add(-1)
	for {
		if most := s.most.Load(); n <= most || s.most.CompareAndSwap(most, n) {
			break
		}
	}
	time.Sleep(2 * time.Millisecond) // a read long enough for another worker's to overlap it, if it may
	return s.Store.AllKnowledge(ctx, merchantID)
}

// TestTheStartsCheckReadsOneMerchantAtATime checks that the workers, which embed several merchants at once, read
// and hash one merchant's knowledge at a time: at start every merchant's is checked, beside the chat.
func TestTheStartsCheckReadsOneMerchantAtATime(t *testing.T) {
	st := openStore(t)
	counting := &readCounting{Store: st}
	p := fakeembed.New(t)
	es := chat.Embedders{"": embeddingsClient(t, p, "m", 8)}
	svc, err := chat.New(chat.Config{Store: counting, Responder: assistant.Retrieval{}, Embedders: es, Registry: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	ts := &tenants{m: map[string]*tenant.Bundle{}}
	for i := range 24 {
		m := shop(fmt.Sprintf("shop-%d", i))
		ts.set(m)
		if _, err := svc.CreateKnowledge(t.Context(), m, store.Knowledge{Title: "Opening hours", Content: "From 9 to 6."}); err != nil {
			t.Fatal(err)
		}
	}
	e, err := chat.NewKnowledgeEmbedder(chat.KnowledgeEmbedderConfig{Service: svc, Embedders: es, Tenants: ts,
		Merchants: ts.all, Workers: 4, Holder: ids.New("replica_"), Registry: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); e.Run(ctx) }()
	w := &embedWorld{store: st}
	for i := range 24 {
		w.waitEmbedded(t, fmt.Sprintf("shop-%d", i), "m")
	}
	cancel()
	<-done
	if most := counting.most.Load(); most != 1 {
		t.Errorf("%d merchants' knowledge read at once by 4 workers, want 1", most)
	}
}

// TestSpentTokensHoldTheEmbeddingUntilTheCeilingRisesOrTheMonthTurns checks that a merchant whose plan's tokens
// are spent has nothing embedded, and that its items are embedded without a restart or a write once its plan's
// ceiling rises, or once the month turns.
func TestSpentTokensHoldTheEmbeddingUntilTheCeilingRisesOrTheMonthTurns(t *testing.T) {
	st := openStore(t)
	p := fakeembed.New(t)
	raised, waiting := shop("raised"), shop("waiting")
	raised.Plan.MonthlyTokens, waiting.Plan.MonthlyTokens = 100, 100
	w := newEmbedWorld(t, st, p, "m", 16, raised, waiting)
	march := time.Date(2026, time.March, 31, 23, 0, 0, 0, time.UTC)
	w.clock.set(march)
	for _, m := range []*tenant.Bundle{raised, waiting} {
		seedShop(t, w.svc, m)
		if err := st.Write(t.Context(), func(tx store.Tx) error { return tx.AddMonthlyTokens(t.Context(), m.MerchantID, march, 100) }); err != nil {
			t.Fatal(err)
		}
	}
	w.run(t)
	time.Sleep(200 * time.Millisecond) // the embedder's turns at start, and many checks of the spent merchants
	if n := len(p.Requests()); n != 0 {
		t.Fatalf("%d requests to the provider past the plans' tokens", n)
	}
	more := *raised
	more.Plan.MonthlyTokens = 1000
	w.tenants.set(&more)
	w.waitEmbedded(t, "raised", "m")
	if vs, err := st.KnowledgeVectors(t.Context(), "waiting"); err != nil || len(vs) != 0 {
		t.Fatalf("the merchant whose ceiling stayed has %d vectors (%v)", len(vs), err)
	}
	w.clock.set(march.Add(2 * time.Hour)) // April
	w.waitEmbedded(t, "waiting", "m")
}

// TestEachMerchantIsEmbeddedByItsOwnProvider checks that the knowledge and questions of merchants on two plans'
// providers go to each provider's own embedding model, that a merchant's own key is what its provider sees, and
// that a merchant whose provider has no embedding model is searched by words alone, counted.
func TestEachMerchantIsEmbeddedByItsOwnProvider(t *testing.T) {
	small, large := fakeembed.New(t), fakeembed.New(t)
	onSmall, onLarge, own, bare := shop("on-small"), shop("on-large"), shop("own"), shop("bare")
	onSmall.Assistant.Provider, onLarge.Assistant.Provider, bare.Assistant.Provider = "small", "large", "chat-only"
	own.Assistant.Provider, own.Assistant.APIKey = "large", "sk-merchants-own"
	w := newEmbedWorldOf(t, openStore(t), chat.Embedders{"small": embeddingsClient(t, small, "mini", 16),
		"large": embeddingsClient(t, large, "maxi", 16)}, onSmall, onLarge, own, bare)
	all := []*tenant.Bundle{onSmall, onLarge, own, bare}
	for _, m := range all {
		if _, err := w.svc.CreateKnowledge(t.Context(), m, store.Knowledge{Title: m.MerchantID + " hours", Content: "Open from 9 to 6."}); err != nil {
			t.Fatal(err)
		}
	}
	w.run(t)
	w.waitEmbedded(t, "on-small", "mini")
	w.waitEmbedded(t, "on-large", "maxi")
	w.waitEmbedded(t, "own", "maxi")
	for _, m := range all {
		waitFor(t, func() bool { // the index has taken the vectors in once a question is embedded, or words answer
			r, err := w.svc.Answer(t.Context(), m, chat.Question{Message: "When is " + m.MerchantID + " open?"})
			return err == nil && r.Message.Answered && (m == bare || slices.Contains(inputs(small, large), "When is "+m.MerchantID+" open?"))
		})
	}
	if got, want := small.Inputs(), []string{"on-small hours\nOpen from 9 to 6.", "When is on-small open?"}; !slices.Equal(got, want) {
		t.Errorf("the small provider embedded %q, want %q", got, want)
	}
	wantLarge := []string{"on-large hours\nOpen from 9 to 6.", "own hours\nOpen from 9 to 6.", "When is on-large open?", "When is own open?"}
	if got := large.Inputs(); !sameElements(got, wantLarge) {
		t.Errorf("the large provider embedded %q, want %q", got, wantLarge)
	}
	for _, r := range large.Requests() {
		own := slices.ContainsFunc(r.Input, func(in string) bool { return strings.Contains(in, "own") })
		if want := map[bool]string{true: "Bearer sk-merchants-own", false: ""}[own]; r.Auth != want {
			t.Errorf("a request of %q carried the wrong key (own key expected: %v)", r.Input, own)
		}
	}
	if got := counterWith(t, w.reg, "parley_runtime_retrieval_words_only_total", "provider"); got != 1 {
		t.Errorf("words-only questions for want of an embedding model counted %v, want 1", got)
	}
}

// inputs are the texts the fakes were sent, in each one's order.
func inputs(ps ...*fakeembed.Provider) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Inputs()...)
	}
	return out
}

// sameElements reports whether a and b hold the same strings, in any order.
func sameElements(a, b []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}

// TestAFailingProviderFallsBackToWords answers from words when the question cannot be embedded, and counts it.
func TestAFailingProviderFallsBackToWords(t *testing.T) {
	p := fakeembed.New(t)
	m := shop("acme")
	w := newEmbedWorld(t, openStore(t), p, "m", 16, m)
	ids := seedShop(t, w.svc, m)
	w.run(t)
	w.waitEmbedded(t, "acme", "m")
	waitFor(t, func() bool { // the index has taken the vectors in once a question is embedded
		_, err := w.svc.Answer(t.Context(), m, chat.Question{Message: "opening hours?"})
		return err == nil && slices.Contains(p.Inputs(), "opening hours?")
	})
	p.Set(func(p *fakeembed.Provider) {
		p.Failures = []fakeembed.Refusal{{Status: http.StatusInternalServerError, Message: "boom"}}
	})
	r, err := w.svc.Answer(t.Context(), m, chat.Question{Message: "Do you ship to Canada?"})
	if err != nil || !r.Message.Answered || r.Message.Sources[0].KnowledgeID != ids["Shipping to Canada"] {
		t.Fatalf("answer with the provider failing (%v): %+v", err, r.Message)
	}
	if got := counterWith(t, w.reg, "parley_runtime_retrieval_words_only_total", "error"); got != 1 {
		t.Errorf("words-only questions counted %v, want 1", got)
	}
}

// waitFor polls cond for up to 10 seconds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestAMerchantErasedWhileEmbeddedKeepsNoRow erases a merchant while the provider embeds its knowledge, and
// checks that the embedder's write and the end of its pass leave no row of the merchant behind: no vector, no
// knowledge revision, no tokens counted, no lease written back.
func TestAMerchantErasedWhileEmbeddedKeepsNoRow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "parley.db")
	st, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	p := fakeembed.New(t)
	entered, gate := make(chan struct{}, 1), make(chan struct{})
	held := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case entered <- struct{}{}:
		default:
		}
		<-gate
		p.ServeHTTP(w, r)
	}))
	t.Cleanup(held.Close)
	client, err := embeddings.New(embeddings.Config{BaseURL: held.URL + "/v1", Model: "m", BatchSize: 16, Attempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	gone := shop("gone")
	w := newEmbedWorldOf(t, st, chat.Embedders{"": client}, gone)
	seedShop(t, w.svc, gone)
	stop := w.run(t)
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the embedder sent the provider nothing")
	}
	if err := st.Write(t.Context(), func(tx store.Tx) error {
		_, err := tx.EraseMerchant(t.Context(), "gone")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	close(gate)
	// The pass ends once its batch is written (counted) and the next turn finds nothing to embed.
	deadline := time.Now().Add(5 * time.Second)
	for counterValue(t, w.reg, "parley_runtime_embedding_passages_total") == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the embedder did not write its batch")
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // the next turn, which ends the pass and releases its lease
	stop()
	ro, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ro.Close() }()
	if rows := rowdump.SQLite(t, ro, "gone"); len(rows) > 0 {
		t.Errorf("rows of the erased merchant after the embedder's pass:\n%s", strings.Join(rows, "\n"))
	}
}
