package chat_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/storetest"
)

// runDeletion is the conformance test of the per-record deletions, chat.DeleteConversation and chat.DeleteLead:
// another merchant's records answer store.ErrNotFound and are kept, and after a deletion no row of any table
// holds anything of the deleted record (its ID, its text, its contact details, its events' and deliveries' IDs),
// so that a table added later and left out of the store's map of personal data fails it. open returns a new,
// empty store and the dump of its rows.
func runDeletion(t *testing.T, open func(t *testing.T) (store.Store, dump)) {
	const merchant, other = "shop", "intruder"
	s, dump := openCiting(t, open, merchant, other)
	ctx := t.Context()
	// Each seed claims the deliveries an hour after the last, once the leases of the last claim have ended.
	claimAt := storetest.Base
	attempt := func(merchantID, id string) []string {
		t.Helper()
		claimAt = claimAt.Add(time.Hour)
		return attempted(t, s, merchantID, id, claimAt)
	}

	// seedConversation records a conversation whose answer cites k1 and whose visitor left contact details, with
	// events for both, one of whose deliveries was attempted. It returns the strings only its data holds.
	seedConversation := func(merchantID, id, marker string) []string {
		t.Helper()
		email := marker + "@example.com"
		ex := withContact(storetest.Citing(storetest.Exchange(merchantID, id, storetest.Base, "question "+marker+" mail "+email, "answer "+marker), "k1"),
			store.Contact{Email: email})
		ex.Outbox = subscribed(hookA)
		record(t, s, ex)
		rate(t, s, store.Rating{MerchantID: merchantID, ConversationID: id, MessageID: ex.Answer.ID, VisitorID: ex.VisitorID,
			Rating: store.RatingDown, Comment: "rated " + marker, CreatedAt: storetest.Base, UpdatedAt: storetest.Base}, store.Outbox{})
		if _, err := chat.SaveSatisfaction(ctx, s, store.Satisfaction{MerchantID: merchantID, ConversationID: id,
			VisitorID: ex.VisitorID, Score: 1, Comment: "scored " + marker, CreatedAt: storetest.Base, UpdatedAt: storetest.Base}, store.Outbox{}); err != nil {
			t.Fatal(err)
		}
		return append(attempt(merchantID, id), id, marker, email, ex.LeadID, ex.Question.ID, ex.Answer.ID)
	}
	seedLead := func(merchantID, marker string) (string, []string) {
		t.Helper()
		id := storetest.NewID("lead")
		in := store.LeadInput{MerchantID: merchantID, VisitorID: "v-" + marker, ID: id, At: storetest.Base, Outbox: subscribed(hookA),
			Contact: store.Contact{Name: "Name " + marker, Email: marker + "@example.com", Phone: "+3161234" + marker[len(marker)-2:],
				Message: "call me " + marker}}
		if _, err := chat.SaveLead(ctx, s, in); err != nil {
			t.Fatal(err)
		}
		return id, append(attempt(merchantID, id), id, marker, in.Email, in.Phone)
	}
	goneConv := seedConversation(merchant, "conv-gone", "markergone01")
	keptConv := seedConversation(merchant, "conv-kept", "markerkept02")
	goneLeadID, goneLead := seedLead(merchant, "markerlead03")
	keptLeadID, keptLead := seedLead(merchant, "markerlead04")
	otherConv := seedConversation(other, "conv-gone", "markerother05")
	otherLeadID, otherLead := seedLead(other, "markerother06")
	wantOther := dump(t, other)

	t.Run("AnotherMerchantsRecordsAreNotFound", func(t *testing.T) {
		// The intruder names the shop's records: its own of the same ID are the only ones it may delete.
		_, err := chat.DeleteLead(ctx, s, other, goneLeadID)
		storetest.WantErr(t, "DeleteLead of another merchant's lead", err, store.ErrNotFound)
		_, err = chat.DeleteConversation(ctx, s, other, "conv-kept")
		storetest.WantErr(t, "DeleteConversation of another merchant's conversation", err, store.ErrNotFound)
		_, err = chat.DeleteLead(ctx, s, merchant, otherLeadID)
		storetest.WantErr(t, "DeleteLead of another merchant's lead", err, store.ErrNotFound)
		for _, want := range [][]string{goneConv, keptConv, goneLead, keptLead} {
			checkHeld(t, dump(t, merchant), want)
		}
		if got := dump(t, other); !slices.Equal(got, wantOther) {
			t.Errorf("another merchant's rows changed:\n%v\nwant\n%v", got, wantOther)
		}
	})

	t.Run("Conversation", func(t *testing.T) {
		rows, err := chat.DeleteConversation(ctx, s, merchant, "conv-gone")
		if err != nil {
			t.Fatal(err)
		}
		// The conversation, 2 messages, 1 lead, 2 events, 2 deliveries, 1 attempt, 2 ratings.
		if rows != 11 {
			t.Errorf("deleted %d rows, want 11", rows)
		}
		checkGone(t, dump(t, merchant), goneConv)
		checkHeld(t, dump(t, merchant), keptConv)
		_, _, err = s.GetConversation(ctx, merchant, "conv-gone")
		storetest.WantErr(t, "GetConversation after deletion", err, store.ErrNotFound)
		_, err = chat.DeleteConversation(ctx, s, merchant, "conv-gone")
		storetest.WantErr(t, "deleting again", err, store.ErrNotFound)
	})

	t.Run("Lead", func(t *testing.T) {
		if _, err := chat.DeleteLead(ctx, s, merchant, goneLeadID); err != nil {
			t.Fatal(err)
		}
		checkGone(t, dump(t, merchant), goneLead)
		checkHeld(t, dump(t, merchant), keptLead)
		_, err := chat.DeleteLead(ctx, s, merchant, goneLeadID)
		storetest.WantErr(t, "deleting again", err, store.ErrNotFound)
	})

	t.Run("LeadOfAConversation", func(t *testing.T) {
		leads := listAllLeads(t, s, merchant, store.LeadFilter{ConversationID: "conv-kept"})
		if len(leads) != 1 {
			t.Fatalf("conv-kept has %d leads, want 1", len(leads))
		}
		if _, err := chat.DeleteLead(ctx, s, merchant, leads[0].ID); err != nil {
			t.Fatal(err)
		}
		c, msgs := storetest.GetConversation(t, s, merchant, "conv-kept")
		if c.HasLead || len(msgs) != 2 {
			t.Errorf("after its lead's deletion the conversation has HasLead %v and %d messages, want false and 2", c.HasLead, len(msgs))
		}
		rows := dump(t, merchant)
		checkGone(t, rows, []string{leads[0].ID})
		checkHeld(t, rows, []string{"conv-kept", "markerkept02", keptLeadID})
	})

	if got := dump(t, other); !slices.Equal(got, wantOther) {
		t.Errorf("another merchant's rows changed:\n%v\nwant\n%v", got, wantOther)
	}
	checkHeld(t, dump(t, other), append(otherConv, otherLead...))
}

// attempted claims the deliveries due at now and records a failed attempt at the first of the merchant's whose
// payload names id,
// and returns the IDs of those deliveries and of their events.
func attempted(t *testing.T, s store.Store, merchantID, id string, now time.Time) []string {
	t.Helper()
	var ids []string
	for _, d := range listAllDeliveries(t, s, merchantID, store.DeliveryFilter{}) {
		if strings.Contains(string(d.Payload), `"`+id+`"`) {
			ids = append(ids, d.ID, d.EventID)
		}
	}
	if len(ids) == 0 {
		t.Fatalf("no delivery names %s", id)
	}
	for _, d := range claim(t, s, now) {
		if d.MerchantID == merchantID && d.ID == ids[0] {
			recordAttempt(t, s, store.Attempt{MerchantID: merchantID, DeliveryID: d.ID, At: now, URL: d.URL,
				StatusCode: 500, Error: "500 Internal Server Error", Status: store.DeliveryFailed})
		}
	}
	return ids
}

// checkGone fails the test for each of the strings a field of a row holds.
func checkGone(t *testing.T, rows, gone []string) {
	t.Helper()
	for _, s := range gone {
		for _, row := range rows {
			if holds(row, s) {
				t.Errorf("after the deletion a row still holds %q: %s", s, row)
			}
		}
	}
}

// checkHeld fails the test for each of the strings no row holds.
func checkHeld(t *testing.T, rows, held []string) {
	t.Helper()
	for _, s := range held {
		if !slices.ContainsFunc(rows, func(row string) bool { return holds(row, s) }) {
			t.Errorf("no row holds %q, which must be kept", s)
		}
	}
}

// holds reports whether a field of the row is s or holds it: IDs are whole fields or JSON strings, text is
// within a field.
func holds(row, s string) bool {
	return strings.Contains(row, "|"+s+"|") || strings.Contains(row, `"`+s+`"`) ||
		(len(s) >= 12 && strings.Contains(row, s))
}
