package assistant

import (
	"slices"
	"strings"
	"testing"
)

// clinicItems is a small knowledge base whose pages use their own words, not the visitors'.
func clinicItems() []Item {
	return []Item{
		{ID: "hours", Title: "Opening hours",
			Content: "The practice is open Monday to Friday from 8am to 6pm, and on Saturday mornings from 9am to 12pm."},
		{ID: "late", Title: "Running late",
			Content: "If you are running late, call us. We hold your appointment for 15 minutes; after that we rebook it on another weekday."},
		{ID: "pets", Title: "Animals in the practice",
			Content: "Assistance animals are welcome in every room. Other animals wait outside with a companion."},
		{ID: "fees", Title: "Fees",
			Content: "A check-up costs 45 euros and a hygiene appointment 60 euros. We take cards and cash."},
		{ID: "xray", Title: "X-rays",
			Content: "We take digital X-rays, which need a fraction of the radiation of film. Pregnant patients should tell us first."},
	}
}

// withQuestions returns items with the questions listed for the items of the IDs in questions.
func withQuestions(items []Item, questions map[string][]string) []Item {
	for i := range items {
		items[i].Questions = questions[items[i].ID]
	}
	return items
}

var clinicQuestions = map[string][]string{
	"hours": {"When do you close on weekdays?", "Are you open at the weekend?"},
	"pets":  {"Can I bring my dog?"},
	"fees":  {"How much is a check-up?"},
}

// TestListedQuestionsAnswerTheirItem checks that a question asking one of the questions the merchant listed for
// an item is answered from it, and that the listed questions' words find their item for other questions too;
// the same questions without the listed ones show what the listing changes.
func TestListedQuestionsAnswerTheirItem(t *testing.T) {
	plain := NewIndex(clinicItems())
	listed := NewIndex(withQuestions(clinicItems(), clinicQuestions))
	cases := []struct {
		question          string
		plain, withListed string
	}{
		// The listed question itself, and with other words: the page says "open Monday to Friday", and another
		// page names a weekday.
		{"When do you close on weekdays?", "late", "hours"},
		{"what time do you close on a weekday", "", "hours"},
		// "dog" is only in the listed question; the page says "assistance animals".
		{"can I bring my dog along", "", "pets"},
		// A listed question outranks a page that matches more of the words ("appointment"): the merchant said
		// which item answers it.
		{"How much is a check-up?", "fees", "fees"},
		// Off-topic questions sharing a listed question's everyday words are still declined: a word found only
		// in the listed questions counts for half (listedCoverage).
		{"can I bring my horse", "", ""},
		{"do you close the car park at night", "", ""},
	}
	for _, c := range cases {
		if got := answeredFrom(respond(t, Request{Message: c.question, Index: plain})); got != c.plain {
			t.Errorf("without listed questions, %q: answered from %q, want %q", c.question, got, c.plain)
		}
		if got := answeredFrom(respond(t, Request{Message: c.question, Index: listed})); got != c.withListed {
			t.Errorf("with listed questions, %q: answered from %q, want %q", c.question, got, c.withListed)
		}
	}
}

// TestAskedShare checks the rule that a question asks a listed one: it names nearly all of the listed question's
// words and brings few of its own.
func TestAskedShare(t *testing.T) {
	ix := NewIndex(withQuestions(clinicItems(), map[string][]string{"xray": {"Are X-rays safe during pregnancy?"}}))
	var xray int32 = -1
	for d := range ix.docs {
		if ix.items[ix.docs[d].item].ID == "xray" {
			xray = int32(d)
		}
	}
	cases := []struct {
		question string
		asked    bool
	}{
		{"Are X-rays safe during pregnancy?", true},
		{"are x-rays safe in pregnancy", true},
		{"x-ray pregnancy safe", true}, // nothing but the listed question's words
		// "pregnant" matches "pregnancy" loosely, and the compound "xrays" neither "x" nor "ray".
		{"are xrays safe when pregnant", false},
		{"are x-rays expensive", false},                                        // another question about the item
		{"are x-rays in pregnancy covered by my dental insurance plan", false}, // more words of its own
		{"", false},
	}
	for _, c := range cases {
		if _, asked := ix.questionMatch(ix.parseQuery(c.question), xray); asked != c.asked {
			t.Errorf("%q asks %q: %v, want %v", c.question, "Are X-rays safe during pregnancy?", asked, c.asked)
		}
	}
}

// TestListedQuestionsOnlyDocument checks which terms a document has only in its item's listed questions.
func TestListedQuestionsOnlyDocument(t *testing.T) {
	ix := NewIndex(withQuestions(clinicItems(), map[string][]string{"pets": {"Can I bring my dog to the practice?"}}))
	for d := range ix.docs {
		var only []string
		for _, id := range ix.questionOnlyOf(int32(d)) {
			only = append(only, ix.cache.stems[id])
		}
		if ix.items[ix.docs[d].item].ID != "pets" {
			if len(only) > 0 {
				t.Errorf("item %s has question-only terms %q, but lists no question", ix.items[ix.docs[d].item].ID, only)
			}
			continue
		}
		// "practice" is in the item's content too.
		if len(only) != 2 || only[0] != "bring" || only[1] != "dog" {
			t.Errorf("question-only terms of pets = %q, want [bring dog]", only)
		}
	}
}

// TestListedQuestionComesFirst checks that the item a question is listed for answers it, before an item whose
// page matches the question's words better: the merchant said which item answers it.
func TestListedQuestionComesFirst(t *testing.T) {
	items := append(clinicItems(),
		Item{ID: "xray-costs", Title: "X-ray costs", Content: "X-rays at a check-up cost nothing extra; other X-rays cost extra, 20 euros each."},
		Item{ID: "paying", Title: "Paying for treatment", Content: "We take cards and cash. Treatment over 500 euros can be paid in three instalments."})
	for _, c := range []struct{ listedFor, want string }{{"", "xray-costs"}, {"paying", "paying"}} {
		ix := NewIndex(withQuestions(slices.Clone(items), map[string][]string{c.listedFor: {"Do X-rays cost extra?"}}))
		for _, question := range []string{"Do X-rays cost extra?", "do x-rays cost extra"} {
			if got := answeredFrom(respond(t, Request{Message: question, Index: ix})); got != c.want {
				t.Errorf("listed for %q, %q: answered from %q, want %q", c.listedFor, question, got, c.want)
			}
		}
	}
}

// TestListedQuestionsIndexedOnce checks that an item of many passages has its listed questions indexed with its
// first passage only: the plan's characters ceiling counts them once, and so must the index.
func TestListedQuestionsIndexedOnce(t *testing.T) {
	long := strings.Repeat("Our opening hours change with the seasons and the holidays of the region. ", 60)
	ix := NewIndex([]Item{{ID: "hours", Title: "Opening hours", Content: long, Questions: []string{"Are you open on Sundays?"}}})
	if len(ix.docs) < 3 {
		t.Fatalf("the item has %d passages, want several", len(ix.docs))
	}
	sunday, ok := ix.cache.stemID("sunday")
	if !ok {
		t.Fatal("the listed question's word is not indexed")
	}
	if docs, _ := ix.postingsOf(sunday); len(docs) != 1 || docs[0] != 0 {
		t.Errorf("the listed question's word is in passages %v, want [0]", docs)
	}
	for d := range ix.docs {
		if only := ix.questionOnlyOf(int32(d)); (d == 0) != (len(only) > 0) {
			t.Errorf("passage %d has question-only terms %v", d, only)
		}
	}
	if got := answeredFrom(respond(t, Request{Message: "are you open on sundays", Index: ix})); got != "hours" {
		t.Errorf("the listed question answered from %q", got)
	}
}
