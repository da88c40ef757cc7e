package chat_test

import (
	"slices"
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/storetest"
)

// runRetention is the conformance test of the retention sweep, store.Tx.DeleteExpired through chat.SweepExpired:
// what is past its retention goes, in batches, from every table, and nothing of it is left in any row (so that a
// table added later and left out of the store's map of personal data fails it); what is within its retention,
// and another merchant's records of any age, stay. open returns a new, empty store and the dump of its rows.
func runRetention(t *testing.T, open func(t *testing.T) (store.Store, dump)) {
	const merchant, other = "shop", "neighbour"
	s, dump := openCiting(t, open, merchant, other)
	ctx := t.Context()
	claimAt := storetest.Base.Add(400 * 24 * time.Hour)
	conversation := func(merchantID, id, marker string, at time.Time) []string {
		t.Helper()
		ex := withContact(storetest.Citing(storetest.Exchange(merchantID, id, at, "question "+marker+" mail "+marker+"@example.com", "answer "+marker), "k1"),
			store.Contact{Email: marker + "@example.com"})
		ex.Outbox = subscribed(hookA)
		record(t, s, ex)
		claimAt = claimAt.Add(time.Hour)
		return append(attempted(t, s, merchantID, id, claimAt), id, marker, ex.LeadID, ex.Question.ID, ex.Answer.ID)
	}
	now := storetest.Base.Add(365 * 24 * time.Hour)
	// Seven old conversations (a year old), which batches of three delete in three writes, and a recent one.
	var old [][]string
	for i := range 7 {
		old = append(old, conversation(merchant, storetest.NewID("conv-old"), "markerexpired"+string(rune('a'+i))+"0", storetest.Base))
	}
	recent := conversation(merchant, "conv-recent", "markerrecent001", now.Add(-24*time.Hour))
	neighbour := conversation(other, "conv-old", "markerneighbour1", storetest.Base)
	wantOther := dump(t, other)

	// Everything is kept 30 days: the old records go, whatever their kind.
	r := chat.Retention{Conversations: 30 * 24 * time.Hour, Leads: 30 * 24 * time.Hour, Deliveries: 30 * 24 * time.Hour}
	swept, err := chat.SweepExpired(ctx, s, merchant, r, now, chat.SweepConfig{Batch: 3})
	if err != nil {
		t.Fatal(err)
	}
	if swept.Records[store.ExpiringConversations] != 7 || swept.Records[store.ExpiringLeads] != 7 ||
		swept.Records[store.ExpiringDeliveries] != 14 {
		t.Errorf("swept %v, want 7 conversations, 7 leads and 14 events", swept.Records)
	}
	rows := dump(t, merchant)
	checkGone(t, rows, slices.Concat(old...))
	checkHeld(t, rows, recent)
	if got := dump(t, other); !slices.Equal(got, wantOther) {
		t.Errorf("another merchant's rows changed:\n%v\nwant\n%v", got, wantOther)
	}
	checkHeld(t, wantOther, neighbour)
	if again, err := chat.SweepExpired(ctx, s, merchant, r, now, chat.SweepConfig{Batch: 3}); err != nil || again.Rows != 0 {
		t.Errorf("sweeping again: %+v, %v; want nothing deleted", again, err)
	}

	// Leads kept longer than conversations stay when their conversation goes; the payloads, which repeat both,
	// go with the shorter.
	lead := conversation(merchant, "conv-lead", "markerleadkept01", now.Add(-60*24*time.Hour))
	leadID := lead[len(lead)-3]
	r = chat.Retention{Conversations: 30 * 24 * time.Hour, Leads: 365 * 24 * time.Hour, Deliveries: 365 * 24 * time.Hour}
	if _, err := chat.SweepExpired(ctx, s, merchant, r, now, chat.SweepConfig{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.GetConversation(ctx, merchant, "conv-lead"); err == nil {
		t.Error("a conversation past its retention is kept")
	}
	if leads := listAllLeads(t, s, merchant, store.LeadFilter{}); !slices.ContainsFunc(leads, func(l store.Lead) bool { return l.ID == leadID }) {
		t.Error("a lead within its retention went with its conversation")
	}
	if got := listAllDeliveries(t, s, merchant, store.DeliveryFilter{}); slices.ContainsFunc(got, func(d store.Delivery) bool {
		return d.CreatedAt.Before(now.Add(-30 * 24 * time.Hour))
	}) {
		t.Error("a payload outlived the conversation it repeats")
	}
}
