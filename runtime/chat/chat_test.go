package chat_test

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/assistant"
	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/event"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/sqlite"
	"github.com/parley-dev/parley/runtime/tenant"
)

type fixture struct {
	svc      *chat.Service
	store    store.Store
	notified atomic.Int32
	now      time.Time
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	st, err := sqlite.Open(t.Context(), t.TempDir()+"/parley.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	f := &fixture{store: st, now: time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)}
	f.svc, err = chat.New(chat.Config{Store: st, Responder: assistant.Retrieval{},
		Now: func() time.Time { return f.now }, Notify: func() { f.notified.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func merchant(monthly int32) *tenant.Bundle {
	return &tenant.Bundle{MerchantID: "acme",
		Plan:      tenant.Plan{MonthlyConversations: monthly, KnowledgeItems: 10, Webhooks: true},
		Assistant: tenant.Assistant{FallbackMessage: "Sorry, I don't know. Leave your email?"},
		Webhooks: []tenant.Webhook{{ID: "crm", URL: "https://crm.example/hook",
			Events: []tenant.Event{event.ConversationCreated, event.LeadCreated, event.LeadUpdated}}}}
}

func TestAnswerFromKnowledgeWrittenJustBefore(t *testing.T) {
	f := newFixture(t)
	m := merchant(0)
	ctx := t.Context()
	if _, err := f.svc.Answer(ctx, m, chat.Question{Message: "Do you ship to Norway?"}); err != nil {
		t.Fatal(err)
	}
	k, err := f.svc.CreateKnowledge(ctx, m, store.Knowledge{Title: "Shipping to Norway",
		Content: "We ship to Norway within 5 working days."})
	if err != nil {
		t.Fatal(err)
	}
	r, err := f.svc.Answer(ctx, m, chat.Question{Message: "Do you ship to Norway?"})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Message.Answered || len(r.Message.Sources) == 0 || r.Message.Sources[0].KnowledgeID != k.ID {
		t.Fatalf("the answer after the knowledge write did not cite it at once: %+v", r.Message)
	}
	if err := f.svc.DeleteKnowledge(ctx, m, k.ID); err != nil {
		t.Fatal(err)
	}
	if r, err = f.svc.Answer(ctx, m, chat.Question{Message: "Do you ship to Norway?"}); err != nil || r.Message.Answered {
		t.Fatalf("the answer after the deletion still answered (%v): %+v", err, r.Message)
	}
	if err := f.svc.DeleteKnowledge(ctx, m, k.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleting twice: %v, want store.ErrNotFound", err)
	}
}

func TestAnswerRefusesANewConversationPastTheCeiling(t *testing.T) {
	f := newFixture(t)
	m := merchant(1)
	ctx := t.Context()
	first, err := f.svc.Answer(ctx, m, chat.Question{Message: "hello", VisitorID: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Answer(ctx, m, chat.Question{Message: "hello again"}); !errors.Is(err, store.ErrQuotaExceeded) {
		t.Fatalf("a second conversation on a plan of one: %v, want store.ErrQuotaExceeded", err)
	}
	if _, err := f.svc.Answer(ctx, m, chat.Question{Message: "still there?", ConversationID: first.ConversationID}); err != nil {
		t.Fatalf("the running conversation was refused: %v", err)
	}
	f.now = f.now.AddDate(0, 1, 0)
	if _, err := f.svc.Answer(ctx, m, chat.Question{Message: "new month"}); err != nil {
		t.Fatalf("a conversation in the next month was refused: %v", err)
	}
}

func TestContactInAChatAndTheFormMakeOneLead(t *testing.T) {
	f := newFixture(t)
	m := merchant(0)
	ctx := t.Context()
	r, err := f.svc.Answer(ctx, m, chat.Question{Message: "Call me on +44 20 7946 0958", VisitorID: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.notified.Load(); got != 1 {
		t.Errorf("the dispatcher was woken %d times after conversation.created and lead.created, want 1", got)
	}
	res, err := f.svc.SaveLead(ctx, m, chat.LeadForm{Contact: store.Contact{Email: "ada@example.com", Consent: true},
		ConversationID: r.ConversationID, VisitorID: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Created || res.Lead.Phone == "" || res.Lead.Email != "ada@example.com" || res.Lead.Source != store.LeadFromChat {
		t.Errorf("the form did not complete the chat's lead: %+v", res)
	}
	other, err := f.svc.SaveLead(ctx, m, chat.LeadForm{Contact: store.Contact{Email: "bob@example.com", Consent: true},
		ConversationID: "conv_that_does_not_exist", VisitorID: "v2"})
	if err != nil {
		t.Fatal(err)
	}
	if !other.Created || other.Lead.ConversationID != "" {
		t.Errorf("a form naming an unknown conversation: %+v, want a new lead standing alone", other.Lead)
	}
	list, _, err := f.store.ListDeliveries(ctx, "acme", store.DeliveryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, d := range list {
		counts[d.EventType]++
	}
	if counts[event.ConversationCreated] != 1 || counts[event.LeadCreated] != 2 || counts[event.LeadUpdated] != 1 {
		t.Errorf("deliveries by event type %v, want 1 conversation.created, 2 lead.created, 1 lead.updated", counts)
	}
}

func TestReplayDelivery(t *testing.T) {
	f := newFixture(t)
	m := merchant(0)
	ctx := t.Context()
	if _, err := f.svc.Answer(ctx, m, chat.Question{Message: "hello"}); err != nil {
		t.Fatal(err)
	}
	claimed, err := f.store.ClaimDeliveries(ctx, f.now, time.Minute, 10, 10)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claimed %d deliveries (%v), want 1", len(claimed), err)
	}
	d := claimed[0]
	if _, err := f.svc.ReplayDelivery(ctx, m, d.ID); !errors.Is(err, store.ErrNotReplayable) {
		t.Fatalf("replaying a pending delivery: %v, want store.ErrNotReplayable", err)
	}
	gone := store.Attempt{MerchantID: "acme", DeliveryID: d.ID, At: f.now, URL: d.URL, StatusCode: 410,
		Status: store.DeliveryFailed, DisableEndpoint: true}
	if err := chat.RecordAttempt(ctx, f.store, gone); err != nil {
		t.Fatal(err)
	}
	before := f.notified.Load()
	replayed, err := f.svc.ReplayDelivery(ctx, m, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if replayed.Status != store.DeliveryPending || replayed.EventID != d.EventID || f.notified.Load() != before+1 {
		t.Errorf("replay: %+v (notified %d times more), want pending with the same event and the dispatcher woken",
			replayed, f.notified.Load()-before)
	}
	if _, err := f.svc.ReplayDelivery(ctx, merchant(0), "no-such-delivery"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("replaying an unknown delivery: %v, want store.ErrNotFound", err)
	}
}

// slowKnowledge is a store whose knowledge loads wait for the gate to open, like a large knowledge base's.
type slowKnowledge struct {
	store.Store
	gate chan struct{}
}

func (s *slowKnowledge) AllKnowledge(ctx context.Context, merchantID string) ([]store.Knowledge, error) {
	select {
	case <-s.gate:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return s.Store.AllKnowledge(ctx, merchantID)
}

// A knowledge write through another replica rebuilds this replica's index off the chat's path: while it builds,
// chats are answered at once from the old index, and from the new one once it is ready.
func TestIndexRebuildOffTheChatPath(t *testing.T) {
	st, err := sqlite.Open(t.Context(), t.TempDir()+"/parley.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	slow := &slowKnowledge{Store: st, gate: make(chan struct{})}
	svc, err := chat.New(chat.Config{Store: slow, Responder: assistant.Retrieval{}})
	if err != nil {
		t.Fatal(err)
	}
	other, err := chat.New(chat.Config{Store: st, Responder: assistant.Retrieval{}}) // another replica
	if err != nil {
		t.Fatal(err)
	}
	m := merchant(0)
	ctx := t.Context()
	close(slow.gate)
	if _, err := svc.Answer(ctx, m, chat.Question{Message: "Do you ship to Norway?"}); err != nil {
		t.Fatal(err)
	}
	slow.gate = make(chan struct{})
	if _, err := other.CreateKnowledge(ctx, m, store.Knowledge{Title: "Shipping to Norway", Content: "We ship to Norway within 5 working days."}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // past the revision check
	for range 3 {
		start := time.Now()
		r, err := svc.Answer(ctx, m, chat.Question{Message: "Do you ship to Norway?"})
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d > 200*time.Millisecond || r.Message.Answered {
			t.Fatalf("while the index rebuilds: answered %v after %v, want the old index's answer at once", r.Message.Answered, d)
		}
	}
	close(slow.gate)
	deadline := time.Now().Add(time.Second)
	for {
		r, err := svc.Answer(ctx, m, chat.Question{Message: "Do you ship to Norway?"})
		if err != nil {
			t.Fatal(err)
		}
		if r.Message.Answered {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the rebuilt index does not answer from the new knowledge within a second")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A merchant's knowledge is searched in its widget's language: German stemming relates "Rücksendungen" to
// "Rücksendung" for a German widget, English stemming does not, and a change of locale rebuilds the index.
func TestIndexFollowsTheWidgetLocale(t *testing.T) {
	f := newFixture(t)
	m := merchant(0)
	m.Widget.Locale = "de"
	ctx := t.Context()
	if _, err := f.svc.CreateKnowledge(ctx, m, store.Knowledge{Title: "Rücksendung",
		Content: "Ungetragene Artikel können Sie innerhalb von 30 Tagen kostenlos zurückgeben."}); err != nil {
		t.Fatal(err)
	}
	answered := func(locale string, want bool) {
		t.Helper()
		m.Widget.Locale = locale
		deadline := time.Now().Add(time.Second) // the old index answers while the new one is built
		for {
			r, err := f.svc.Answer(ctx, m, chat.Question{Message: "Rücksendungen?"})
			if err != nil {
				t.Fatal(err)
			}
			if r.Message.Answered == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("locale %q: answered %v, want %v", locale, r.Message.Answered, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	answered("de", true)
	answered("en", false)
	answered("de-AT", true)
}

// upsertSpy is a store that records what each exchange told UpsertConversation about its conversation.
type upsertSpy struct {
	store.Store
	seen []store.Exchange
}

func (s *upsertSpy) WriteExchange(ctx context.Context, fn func(store.Tx) error) error {
	return s.Store.WriteExchange(ctx, func(tx store.Tx) error { return fn(spyTx{tx, s}) })
}

type spyTx struct {
	store.Tx
	spy *upsertSpy
}

func (tx spyTx) UpsertConversation(ctx context.Context, ex store.Exchange) (bool, error) {
	tx.spy.seen = append(tx.spy.seen, ex)
	return tx.Tx.UpsertConversation(ctx, ex)
}

// TestAnswerTellsTheStoreWhatItKnows: the store learns that a conversation is one the runtime has just named, or
// one it has just read, so that it can write the exchange without first looking for the conversation; of a
// conversation ID a visitor made up, it learns neither.
func TestAnswerTellsTheStoreWhatItKnows(t *testing.T) {
	f := newFixture(t)
	spy := &upsertSpy{Store: f.store}
	svc, err := chat.New(chat.Config{Store: spy, Responder: assistant.Retrieval{}, Now: func() time.Time { return f.now }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, m := t.Context(), merchant(0)
	first, err := svc.Answer(ctx, m, chat.Question{Message: "Hello"})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{first.ConversationID, "conv_made_up_by_the_visitor"} {
		if _, err := svc.Answer(ctx, m, chat.Question{ConversationID: id, Message: "And on Sundays?"}); err != nil {
			t.Fatal(err)
		}
	}
	want := []struct{ named, known bool }{{true, false}, {false, true}, {false, false}}
	if len(spy.seen) != len(want) {
		t.Fatalf("%d exchanges written, want %d", len(spy.seen), len(want))
	}
	for i, w := range want {
		if ex := spy.seen[i]; ex.NewConversation != w.named || ex.ConversationExists != w.known {
			t.Errorf("exchange %d: NewConversation %t, ConversationExists %t; want %t, %t", i,
				ex.NewConversation, ex.ConversationExists, w.named, w.known)
		}
	}
}

// tailSpy is a store that records how many messages each turn read of its conversation.
type tailSpy struct {
	store.Store
	read []int
}

func (s *tailSpy) ConversationTail(ctx context.Context, merchantID, id string, n int) (store.Conversation, []store.Turn, error) {
	s.read = append(s.read, n)
	return s.Store.ConversationTail(ctx, merchantID, id, n)
}

// historyless answers as Retrieval does, but is no assistant.HistoryLimiter.
type historyless struct{ offline assistant.Retrieval }

func (h historyless) Respond(ctx context.Context, req assistant.Request) (assistant.Reply, error) {
	return h.offline.Respond(ctx, req)
}

// TestAnswerReadsOnlyTheHistoryTheResponderHears: the offline assistant hears the previous exchange for a
// follow-up only, so a turn reads no earlier message otherwise; a responder that does not say hears the latest 20.
func TestAnswerReadsOnlyTheHistoryTheResponderHears(t *testing.T) {
	f := newFixture(t)
	ctx, m := t.Context(), merchant(0)
	for _, tc := range []struct {
		name      string
		responder assistant.Responder
		want      []int
	}{
		{"retrieval", assistant.Retrieval{}, []int{0, 2}},
		{"a responder that does not say", historyless{}, []int{20, 20}},
	} {
		spy := &tailSpy{Store: f.store}
		svc, err := chat.New(chat.Config{Store: spy, Responder: tc.responder, Now: func() time.Time { return f.now }})
		if err != nil {
			t.Fatal(err)
		}
		first, err := svc.Answer(ctx, m, chat.Question{Message: "Do you ship to Canada?"})
		if err != nil {
			t.Fatal(err)
		}
		for _, msg := range []string{"Do you ship to Norway?", "and how long does it take?"} {
			if _, err := svc.Answer(ctx, m, chat.Question{ConversationID: first.ConversationID, Message: msg}); err != nil {
				t.Fatal(err)
			}
		}
		if !slices.Equal(spy.read, tc.want) {
			t.Errorf("%s: turns read %v of the conversation's latest messages, want %v", tc.name, spy.read, tc.want)
		}
	}
}
