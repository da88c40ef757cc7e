package assistant

import (
	"testing"
)

// lateCurated is clinicItems with the running-late policy curated: its text is the answer to its listed
// questions, given whole.
func lateCurated(curated bool) []Item {
	items := clinicItems()
	for i := range items {
		if items[i].ID == "late" {
			items[i].Questions = []string{"What if I am late for my appointment?", "Do you hold my appointment when I am delayed?"}
			items[i].Curated = curated
		}
	}
	return items
}

// TestCuratedAnswerIsGivenWholeAndFirst: a question that asks a curated item's listed question, or a paraphrase the
// retriever is sure of, is answered with the item's text as written (not its best sentences), citing the item,
// with full confidence; a question about something else is answered as before. The same item uncurated answers
// with the sentences it matches.
func TestCuratedAnswerIsGivenWholeAndFirst(t *testing.T) {
	const late = "If you are running late, call us. We hold your appointment for 15 minutes; after that we rebook it on another weekday."
	curated, plain := NewIndex(lateCurated(true)), NewIndex(lateCurated(false))
	for _, tc := range []struct {
		question string
		curated  bool // answered with the curated text
	}{
		{"What if I am late for my appointment?", true},           // a listed question as listed
		{"what if i'm late for my appointment", true},             // in other words
		{"do you hold my appointment if I am delayed?", true},     // the other listed question
		{"When are you open on Saturday?", false},                 // another item's
		{"How much does a check-up cost?", false},                 // another item's
		{"I am late, will you hold my appointment for me?", true}, // a paraphrase the item matches surely
	} {
		t.Run(tc.question, func(t *testing.T) {
			req := Request{Message: tc.question, Index: curated}
			reply, err := Retrieval{}.Respond(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := CuratedReply(req)
			if !tc.curated {
				if ok || reply.Text == late {
					t.Errorf("answered with the curated text: %q", reply.Text)
				}
				return
			}
			if !ok || got.Text != late || reply.Text != late || reply.Confidence != 1 || !reply.Answered ||
				len(reply.Sources) != 1 || reply.Sources[0].KnowledgeID != "late" {
				t.Fatalf("reply = %+v, CuratedReply = %+v, %v; want the whole curated text citing late", reply, got, ok)
			}
			uncurated, err := Retrieval{}.Respond(t.Context(), Request{Message: tc.question, Index: plain})
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := CuratedReply(Request{Message: tc.question, Index: plain}); ok || uncurated.Text == late {
				t.Errorf("an uncurated item answers as curated: %+v", uncurated)
			}
		})
	}
}

// TestCuratedMatchNeedsAskingOrHighConfidence is the decision alone: a curated item answers when the question
// asks its listed question or when the item's confidence reaches CuratedConfidence, and never an item that is not
// curated or shares no word with the question.
func TestCuratedMatchNeedsAskingOrHighConfidence(t *testing.T) {
	ix := NewIndex([]Item{
		{ID: "a", Title: "A", Content: "alpha", Curated: true, Questions: []string{"Gamma?"}},
		{ID: "b", Title: "B", Content: "beta"},
	})
	for _, tc := range []struct {
		name string
		m    match
		want bool
	}{
		{"asked", match{doc: 0, wordMatched: true, asked: true}, true},
		{"sure", match{doc: 0, wordMatched: true, covered: CuratedConfidence}, true},
		{"unsure", match{doc: 0, wordMatched: true, covered: CuratedConfidence - 0.01}, false},
		{"no word", match{doc: 0, asked: true, covered: 1}, false},
		{"not curated", match{doc: 1, wordMatched: true, asked: true, covered: 1}, false},
		{"listed word for word", match{doc: 0, wordMatched: true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := "delta"
			if tc.name == "listed word for word" {
				text = "gamma"
			}
			if _, got := ix.curatedMatch(text, []match{tc.m}); got != tc.want {
				t.Errorf("curatedMatch = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestAnswersCarryTheirConfidence: an answer from the knowledge base has the retriever's confidence in its best
// item, above 0; small talk and a fallback have none.
func TestAnswersCarryTheirConfidence(t *testing.T) {
	ix := NewIndex(clinicItems())
	for _, tc := range []struct {
		question string
		kind     Kind
	}{
		{"How much does a check-up cost?", KindAnswer},
		{"hello", KindGreeting},
		{"Do you sell bicycles?", KindFallback},
	} {
		reply, err := Retrieval{}.Respond(t.Context(), Request{Message: tc.question, Index: ix})
		if err != nil {
			t.Fatal(err)
		}
		if reply.Kind != tc.kind || (tc.kind == KindAnswer) != (reply.Confidence > 0) || reply.Confidence > 1 {
			t.Errorf("%q: kind %s, confidence %v", tc.question, reply.Kind, reply.Confidence)
		}
	}
}
