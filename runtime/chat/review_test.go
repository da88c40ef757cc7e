package chat_test

import (
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/store"
)

// TestLowConfidenceAnswersAreReviewed: an answer given with a confidence below chat.LowConfidence goes to the
// review queue, grouped by its question and counted apart from the unanswered and rated
// ones; an answer given surely, small talk (no confidence measured) and a curated answer do not.
func TestLowConfidenceAnswersAreReviewed(t *testing.T) {
	f := newFixture(t)
	m := merchant(0)
	record := func(conversation, question string, confidence float64) {
		t.Helper()
		at := f.now.Add(-time.Hour)
		_, err := chat.RecordExchange(t.Context(), f.store, store.Exchange{MerchantID: m.MerchantID, ConversationID: conversation,
			NewConversation: true, VisitorID: "v-" + conversation,
			Question: store.Message{ID: "q-" + conversation, Role: store.RoleVisitor, Text: question, CreatedAt: at, Answered: true},
			Answer: store.Message{ID: "a-" + conversation, Role: store.RoleAssistant, Text: "The box is cardboard.", CreatedAt: at,
				Answered: true, Confidence: confidence}})
		if err != nil {
			t.Fatal(err)
		}
	}
	record("c1", "Is the box recyclable?", 0.3)
	record("c2", "is the box recyclable", 0.55)
	record("c3", "How long does shipping take?", chat.LowConfidence) // sure enough
	record("c4", "Hello!", 0)                                        // small talk: not measured
	record("c5", "Do you ship to Canada?", 1)                        // curated

	groups, err := f.svc.Review(t.Context(), m)
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) != 1 {
		t.Fatalf("the queue = %+v; want the recyclable box alone", groups)
	}
	if g := groups[0]; g.Asked != 2 || g.LowConfidence != 2 || g.Unanswered != 0 || g.ThumbsDown != 0 ||
		len(g.Questions) != 1 || g.Questions[0].Count != 2 || g.Latest.Confidence != 0.55 {
		t.Errorf("the group = %+v; want 2 low-confidence answers of one question, the latest first", g)
	}
}
