package chat_test

import (
	"testing"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/storetest"
)

// erase: erasing a merchant deletes every kind of data it has (conversations, messages, leads, knowledge, events,
// deliveries and attempts, disabled endpoints, monthly counters, self-service keys) and leaves another merchant's
// data, written alike, untouched.
func (h harness) erase(t *testing.T) {
	s := h.store(t)
	ctx := t.Context()
	seed := func(merchantID, keyHash string) {
		t.Helper()
		ex := withContact(storetest.Exchange(merchantID, "c1", storetest.Base, "mail me at ana@example.com", "sure"),
			store.Contact{Email: "ana@example.com"})
		ex.MonthlyLimit, ex.Tokens = 10, 42
		ex.Outbox = subscribed(hookA, hookB)
		record(t, s, ex)
		mustCreateKnowledge(t, s, storetest.Item(merchantID, "k1", storetest.Base), 0)
		seedSource(t, s, merchantID, "src1")
		var gone store.Delivery
		for _, d := range claim(t, s, storetest.Base) {
			if d.MerchantID == merchantID && d.WebhookID == hookA.WebhookID {
				gone = d
				break
			}
		}
		recordAttempt(t, s, store.Attempt{MerchantID: merchantID, DeliveryID: gone.ID, At: storetest.Base, URL: hookA.URL,
			StatusCode: 410, Error: "410 Gone", Status: store.DeliveryFailed, DisableEndpoint: true})
		if err := s.Write(ctx, func(tx store.Tx) error {
			return tx.InsertAPIKey(ctx, store.APIKey{MerchantID: merchantID, ID: "k1", Type: "secret", SHA256: keyHash, CreatedAt: storetest.Base})
		}); err != nil {
			t.Fatal(err)
		}
	}
	seed("gone", storetest.HashOf("gone"))
	seed("kept", storetest.HashOf("kept"))
	wantKept := snapshot(t, s, "kept", storetest.HashOf("kept"))

	rows, err := chat.EraseMerchant(ctx, s, "gone")
	if err != nil {
		t.Fatal(err)
	}
	// 1 conversation, 2 messages, 1 month's conversations, 1 month's tokens, 1 knowledge item and its revision,
	// 1 lead, 2 events, 4 deliveries, 1 attempt, 1 disabled endpoint, 1 key.
	if rows < 17 {
		t.Errorf("erased %d rows, want at least 17", rows)
	}
	if got := snapshot(t, s, "gone", storetest.HashOf("gone")); got != (merchantData{}) {
		t.Errorf("after erasure the merchant still has %+v", got)
	}
	if got := snapshot(t, s, "kept", storetest.HashOf("kept")); got != wantKept {
		t.Errorf("another merchant's data changed: %+v, want %+v", got, wantKept)
	}
	if rows, err := chat.EraseMerchant(ctx, s, "gone"); err != nil || rows != 0 {
		t.Errorf("erasing again: %d rows, %v; want 0, nil", rows, err)
	}
	// The ID starts afresh: a new conversation is the first of the month and is delivered to hookA again.
	ex := storetest.Exchange("gone", "c1", storetest.Base, "hello", "hi")
	ex.MonthlyLimit = 1
	ex.Outbox = subscribed(hookA)
	if res := record(t, s, ex); !res.Created {
		t.Error("the erased merchant's conversation ID or monthly slot is still taken")
	}
	if got := listAllDeliveries(t, s, "gone", store.DeliveryFilter{Status: store.DeliveryPending}); len(got) != 1 {
		t.Errorf("%d pending deliveries after erasure, want 1: the endpoint is still disabled", len(got))
	}
}

// merchantData counts what a merchant has in each part of the store.
type merchantData struct {
	conversations, messages, leads, knowledge, deliveries, attempts, keys, monthConversations, sources, pages int
	revision, tokens                                                                                          int64
	keyByHash                                                                                                 bool
}

func snapshot(t *testing.T, s store.Store, merchantID, keyHash string) merchantData {
	t.Helper()
	ctx := t.Context()
	var (
		d    merchantData
		keys []store.APIKey
	)
	for _, c := range storetest.ListAllConversations(t, s, merchantID, store.ConversationFilter{}) {
		d.conversations++
		d.messages += len(mustMessages(t, s, merchantID, c.ID))
	}
	d.leads = len(listAllLeads(t, s, merchantID, store.LeadFilter{}))
	d.knowledge = len(allKnowledgeIDs(t, s, merchantID))
	d.revision = storetest.Revision(t, s, merchantID)
	sources, err := s.ListSources(ctx, merchantID)
	if err != nil {
		t.Fatal(err)
	}
	d.sources = len(sources)
	for _, src := range sources {
		pages, err := s.ListSourcePages(ctx, merchantID, src.ID)
		if err != nil {
			t.Fatal(err)
		}
		d.pages += len(pages)
	}
	for _, del := range listAllDeliveries(t, s, merchantID, store.DeliveryFilter{}) {
		d.deliveries++
		_, attempts, err := s.GetDelivery(ctx, merchantID, del.ID)
		if err != nil {
			t.Fatal(err)
		}
		d.attempts += len(attempts)
	}
	keys, err = s.ListAPIKeys(ctx, merchantID)
	if err != nil {
		t.Fatal(err)
	}
	d.keys = len(keys)
	_, err = s.APIKeyByHash(ctx, keyHash)
	d.keyByHash = err == nil
	d.monthConversations = storetest.ThisMonth(t, s, merchantID, storetest.Base)
	if d.tokens, err = s.TokensThisMonth(ctx, merchantID, storetest.Base); err != nil {
		t.Fatal(err)
	}
	return d
}

func mustMessages(t *testing.T, s store.Store, merchantID, id string) []store.Message {
	t.Helper()
	_, msgs := storetest.GetConversation(t, s, merchantID, id)
	return msgs
}
