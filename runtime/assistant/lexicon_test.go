package assistant

import (
	"slices"
	"testing"

	"github.com/parley-dev/parley/runtime/assistant/lang"
)

// An irregular form finds the item that uses another form of the same word.
func TestIrregularFormsMatch(t *testing.T) {
	for _, pair := range [][2]string{{"spent", "spending"}, {"children", "child"}, {"went", "going"}, {"bought", "buys"}} {
		if a, b := lang.English.Stem(pair[0]), lang.English.Stem(pair[1]); a != b {
			t.Errorf("lang.English.Stem(%q) = %q, lang.English.Stem(%q) = %q: want the same stem", pair[0], a, pair[1], b)
		}
	}
	ix := NewIndex([]Item{
		{ID: "expenses", Title: "Recording expenses", Content: "Add what you spend on supplies under Expenses."},
		{ID: "kids", Title: "Travelling with a child", Content: "A cot is free for any child under three."},
	})
	for q, want := range map[string]string{"where do I log what I spent": "expenses", "are children welcome": "kids"} {
		if hits := ix.Search(q, 1); len(hits) == 0 || hits[0].Item.ID != want {
			t.Errorf("Search(%q) = %v, want %s first", q, hits, want)
		}
	}
}

// The decline rule weighs a question word no item contains by its rarity in general English: a paraphrase that
// wraps the topic in common words the knowledge base never uses is answered, while a question about something
// the knowledge base never mentions, with a rare word for it, is declined.
func TestDeclineWeighsUnknownWordsByGeneralRarity(t *testing.T) {
	ix := NewIndex([]Item{
		{ID: "hours", Title: "Opening hours", Content: "The practice is open Monday to Thursday from 8am to 6pm and on Friday from 8am to 4pm."},
		{ID: "parking", Title: "Parking", Content: "There are four free parking spaces behind the building."},
		{ID: "whitening", Title: "Teeth whitening", Content: "We offer home whitening kits and in-surgery whitening."},
		{ID: "fees", Title: "Prices", Content: "A check-up costs 45 and a hygiene visit costs 60."},
	})
	checkAnswers(t, ix, "", []answerCase{
		{"are you still open on friday night", "hours"},
		{"what money do I need to bring for a check-up", "fees"},
		{"do you do tattoo removal", ""},
		{"can I get botox with my whitening", ""},
	})
	// The unknown words themselves: "even" is among the commonest words of English, "tattoo" is not.
	q := ix.parseQuery("even tattoo")
	if len(q.terms) != 2 || q.terms[0].idf != 0 || q.terms[1].idf != ix.unknownIDF {
		t.Errorf("parseQuery(even tattoo) = %+v, want idf 0 for even and %v for tattoo", q.terms, ix.unknownIDF)
	}
}

// A question word the base lacks but a synonym of which it has (here a spelling of another variety of English) is
// matched to the synonym, at synonymFactor, and is not counted as unknown: the question is answered. So are the
// informal words and abbreviations visitors type for the words help pages write ("telly" for "TV", "yr" for
// "years"). A word with neither is unknown, and the question declined.
func TestSynonymIsNotUnknown(t *testing.T) {
	ix := NewIndex([]Item{
		{ID: "colors", Title: "Color options", Content: "Every model comes in three colors: black, navy and red."},
		{ID: "returns", Title: "Returns", Content: "Return unworn items within 30 days for a full refund."},
		{ID: "delivery", Title: "Delivery", Content: "Orders arrive in two to four working days."},
		{ID: "recycling", Title: "Recycling old electricals", Content: "We collect your old TV when we deliver the new one."},
		{ID: "kids", Title: "Kids' bikes", Content: "Balance bikes suit children from 2 to 4 years."},
	})
	color, ok := ix.stemID(lang.English.Stem("color"))
	if !ok {
		t.Fatal("the index lacks color")
	}
	q := ix.parseQuery("colour")
	if len(q.terms) != 1 || !slices.ContainsFunc(q.terms[0].alts, func(a alt) bool { return a.id == color && a.factor == synonymFactor }) {
		t.Fatalf("parseQuery(colour) = %+v, want color as a synonym", q.terms)
	}
	if !q.allMatched() {
		t.Errorf("parseQuery(colour): a word with a synonym in the base counted as unknown")
	}
	checkAnswers(t, ix, "", []answerCase{
		{"which colours can I get", "colors"},
		{"which casino can I get", ""},
		{"will you take my old telly away", "recycling"},
		{"bike for a 3 yr old", "kids"},
	})
}

// TestSearchFindsDerivedForm checks that a question word matches the form its item uses of the same root at
// derivedFactor: "pregnant" finds the item about pregnancy and names its title, but counts for less than the word
// itself.
func TestSearchFindsDerivedForm(t *testing.T) {
	items := []Item{
		{ID: "pregnancy", Title: "Pregnancy", Content: "Check-ups are safe throughout pregnancy."},
		{ID: "xrays", Title: "X-rays", Content: "We take X-rays only when needed and ask whether you might be pregnant."},
		{ID: "hours", Title: "Opening hours", Content: "We are open on weekdays."},
	}
	ix := NewIndex(items)
	q := ix.parseQuery("pregnant")
	if len(q.terms) != 1 || !slices.ContainsFunc(q.terms[0].alts, func(a alt) bool {
		return ix.cache.stems[a.id] == lang.English.Stem("pregnancy") && a.factor == derivedFactor
	}) {
		t.Fatalf("parseQuery(pregnant) = %+v, want pregnancy among its matches at %v", q.terms, derivedFactor)
	}
	if !ix.namesTitle(q, 0) {
		t.Error("pregnant does not name the title Pregnancy")
	}
	if hits := ix.Search("is a check-up safe when pregnant", 1); len(hits) != 1 || hits[0].Item.ID != "pregnancy" {
		t.Errorf("Search = %+v, want pregnancy", hits)
	}
}
