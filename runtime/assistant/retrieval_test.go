package assistant

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/parley-dev/parley/runtime/assistant/lang"
)

func respond(t testing.TB, req Request) Reply {
	t.Helper()
	reply, err := Retrieval{}.Respond(context.Background(), req)
	if err != nil {
		t.Fatalf("Respond(%q): %v", req.Message, err)
	}
	return reply
}

// answeredFrom returns the ID of the item a reply answers from, or "" when it declines.
func answeredFrom(reply Reply) string {
	if !reply.Answered {
		return ""
	}
	return reply.Sources[0].KnowledgeID
}

// answerCase is a question and the item that should answer it, "" when it should be declined.
type answerCase struct{ question, want string }

// checkAnswers asks ix each question of cases in the locale and reports those answered from another item than
// wanted, or declined when wanted; it returns the replies, in order, for further checks.
func checkAnswers(t *testing.T, ix *Index, locale string, cases []answerCase) []Reply {
	t.Helper()
	replies := make([]Reply, len(cases))
	for i, c := range cases {
		replies[i] = respond(t, Request{Message: c.question, Index: ix, Locale: locale})
		if got := answeredFrom(replies[i]); got != c.want {
			t.Errorf("%q: answered from %q, want %q (%q)", c.question, got, c.want, replies[i].Text)
		}
	}
	return replies
}

func TestRespondGreetingAndThanks(t *testing.T) {
	ix := smallIndex()
	tests := []struct {
		msg  string
		kind Kind
	}{
		{"hi", KindGreeting},
		{"hey there!", KindGreeting},
		{"thank you!", KindThanks},
		{"bye", KindThanks},
		{"hi, what is your return policy?", KindAnswer},
	}
	for _, tt := range tests {
		reply := respond(t, Request{Message: tt.msg, Index: ix})
		if reply.Kind != tt.kind || !reply.Answered || reply.Text == "" {
			t.Errorf("%q: got %+v, want kind %s, answered, with text", tt.msg, reply, tt.kind)
		}
		if tt.kind != KindAnswer && len(reply.Sources) != 0 {
			t.Errorf("%q: small talk cites %d sources", tt.msg, len(reply.Sources))
		}
	}
}

// longItem has six sentences, only one of which is about the care label.
var longItem = Item{
	ID:    "jacket",
	Title: "Stormshell rain jacket",
	URL:   "https://shop.example/p/stormshell",
	Content: "The Stormshell is a three-layer waterproof jacket for hiking. It has pit zips for ventilation. " +
		"The hood fits over a climbing helmet. It packs into its own chest pocket. " +
		"Machine wash it at 30 degrees with a technical detergent. It costs $229.",
}

func TestAnswerQuotesTheRelevantSentences(t *testing.T) {
	ix := NewIndex([]Item{longItem, {ID: "other", Title: "Gift cards", Content: "Gift cards never expire."}})
	reply := respond(t, Request{Message: "Can I machine wash the Stormshell?", Index: ix})
	if reply.Kind != KindAnswer || !reply.Answered {
		t.Fatalf("got %+v, want an answer", reply)
	}
	want := "Machine wash it at 30 degrees with a technical detergent."
	if reply.Text != want {
		t.Errorf("Text = %q, want only %q", reply.Text, want)
	}
	if len(reply.Sources) != 1 {
		t.Fatalf("got %d sources, want 1", len(reply.Sources))
	}
	src := reply.Sources[0]
	if src.KnowledgeID != "jacket" || src.Title != longItem.Title || src.URL != longItem.URL || src.Snippet != want ||
		src.Score <= 0 {
		t.Errorf("source = %+v", src)
	}
}

func TestAnswerKeepsSentenceOrder(t *testing.T) {
	ix := NewIndex([]Item{longItem})
	reply := respond(t, Request{Message: "does it have pit zips and a helmet hood", Index: ix})
	want := "It has pit zips for ventilation. The hood fits over a climbing helmet."
	if reply.Text != want {
		t.Errorf("Text = %q, want %q", reply.Text, want)
	}
}

func TestAnswerCitesCloseHits(t *testing.T) {
	ix := NewIndex([]Item{
		{ID: "a", Title: "Tent repairs", Content: "We repair tents in 2 weeks."},
		{ID: "b", Title: "Tent repair prices", Content: "Tent repairs start at $15."},
		{ID: "c", Title: "Tent repair kit", Content: "The tent repair kit has patches."},
		{ID: "d", Title: "Tent repair shop", Content: "Our tent repair shop is in Denver."},
		{ID: "e", Title: "Gift cards", Content: "Gift cards never expire."},
	})
	reply := respond(t, Request{Message: "tent repair", Index: ix})
	if reply.Kind != KindAnswer {
		t.Fatalf("got %+v, want an answer", reply)
	}
	if n := len(reply.Sources); n < 2 || n > maxSources {
		t.Fatalf("got %d sources, want 2 to %d", n, maxSources)
	}
	for i, s := range reply.Sources {
		if s.KnowledgeID == "e" || s.Snippet == "" {
			t.Errorf("source %d = %+v", i, s)
		}
		if i > 0 && s.Score > reply.Sources[i-1].Score {
			t.Errorf("sources not best first: %+v", reply.Sources)
		}
	}
}

func TestFallback(t *testing.T) {
	ix := smallIndex()
	const merchant = "We can't answer that here; email help@shop.example."
	tests := []struct {
		name, fallback, locale, want string
	}{
		{"merchant text", merchant, "", merchant},
		{"default", "", "", builtinTexts["en"].fallback},
		{"blank merchant text", "   ", "en-GB", builtinTexts["en"].fallback},
		{"German default", "", "de-DE", builtinTexts["de"].fallback},
		{"merchant text wins over locale", merchant, "de", merchant},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reply := respond(t, Request{Message: "do you sell cars?", Index: ix, FallbackMessage: tt.fallback, Locale: tt.locale})
			if reply.Kind != KindFallback || reply.Answered || len(reply.Sources) != 0 || reply.Text != tt.want {
				t.Errorf("got %+v, want fallback %q", reply, tt.want)
			}
		})
	}
	if !strings.Contains(builtinTexts["en"].fallback, "email or phone number") {
		t.Error("default fallback does not offer to take contact details")
	}
}

func TestLocaleTexts(t *testing.T) {
	tests := []struct {
		locale, lang string
	}{
		{"", "en"}, {"en", "en"}, {"en-US", "en"}, {"de", "de"}, {"de-AT", "de"}, {"DE_ch", "de"},
		{"fr-FR", "fr"}, {"es", "es"}, {"xx", "en"}, {"deu", "en"},
	}
	for _, tt := range tests {
		if got, want := textsFor(tt.locale), builtinTexts[tt.lang]; got != want {
			t.Errorf("textsFor(%q) = %+v, want the %q texts", tt.locale, got, tt.lang)
		}
	}
	for lang, texts := range builtinTexts {
		if texts.greeting == "" || texts.thanks == "" || texts.fallback == "" || !strings.Contains(texts.otherPart, "%s") {
			t.Errorf("%s: missing text: %+v", lang, texts)
		}
	}
}

func TestGermanReplies(t *testing.T) {
	ix := smallIndex()
	de := builtinTexts["de"]
	if r := respond(t, Request{Message: "Hallo!", Index: ix, Locale: "de-DE"}); r.Text != de.greeting {
		t.Errorf("greeting = %q", r.Text)
	}
	if r := respond(t, Request{Message: "danke", Index: ix, Locale: "de"}); r.Kind != KindThanks || r.Text != de.thanks {
		t.Errorf("thanks = %+v", r)
	}
	if r := respond(t, Request{Message: "do you sell cars", Index: ix, Locale: "de"}); r.Text != de.fallback {
		t.Errorf("fallback = %q", r.Text)
	}
}

func TestRespondEmptyIndex(t *testing.T) {
	for _, ix := range []*Index{nil, NewIndex(nil)} {
		if r := respond(t, Request{Message: "what is your return policy?", Index: ix}); r.Kind != KindFallback || r.Answered {
			t.Errorf("question on empty index: %+v", r)
		}
		if r := respond(t, Request{Message: "hello", Index: ix}); r.Kind != KindGreeting {
			t.Errorf("greeting on empty index: %+v", r)
		}
		if r := respond(t, Request{Message: "thanks!", Index: ix}); r.Kind != KindThanks {
			t.Errorf("thanks on empty index: %+v", r)
		}
	}
}

func TestRespondEmptyOrNumericMessage(t *testing.T) {
	ix := smallIndex()
	for _, msg := range []string{"", "   ", "???", "what is 2 + 2", "75"} {
		if r := respond(t, Request{Message: msg, Index: ix}); r.Kind != KindFallback {
			t.Errorf("%q: got %+v, want fallback", msg, r)
		}
	}
}

func TestMinConfidence(t *testing.T) {
	ix := smallIndex()
	req := Request{Message: "return policy for tents bought in winter", Index: ix}
	strict := Retrieval{MinConfidence: 1}
	if r, _ := strict.Respond(context.Background(), req); r.Kind != KindFallback {
		t.Errorf("MinConfidence 1 answered a partly matched question: %+v", r)
	}
	lax := Retrieval{MinConfidence: 0.01}
	if r, _ := lax.Respond(context.Background(), req); r.Kind != KindAnswer {
		t.Errorf("MinConfidence 0.01 did not answer: %+v", r)
	}
}

func TestRespondCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Retrieval{}.Respond(ctx, Request{Message: "hi", Index: smallIndex()})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestRespondConcurrent(t *testing.T) {
	ix := NewIndex(fixtureItems(t))
	qs := fixtureQuestions(t)
	t.Parallel()
	for g := range 8 {
		t.Run("", func(t *testing.T) {
			t.Parallel()
			for i := g; i < len(qs); i += 8 {
				respond(t, Request{Message: qs[i].Q, Index: ix})
			}
		})
	}
}

// A merchant's first items must already answer: with one or two items IDF cannot tell a topic word from a
// filler verb, so the decision may not rest on it alone.
func TestTinyKnowledgeBase(t *testing.T) {
	one := NewIndex([]Item{{ID: "kayak", Title: "Kayak rentals", Content: "We rent kayaks from May to September for 45 dollars a day."}})
	two := NewIndex([]Item{
		{ID: "returns", Title: "Returns", Content: "You can return unworn items within 60 days for a full refund."},
		{ID: "hours", Title: "Opening hours", Content: "The store is open from 9 to 6, Monday to Saturday."},
	})
	checkAnswers(t, one, "", []answerCase{
		{"Do you offer kayak rentals?", "kayak"},
		{"can I rent a kayak in june", "kayak"},
		{"Do you sell second-hand tractors?", ""},
	})
	checkAnswers(t, two, "", []answerCase{
		{"How do returns work?", "returns"},
		{"when are you open on saturday", "hours"},
		{"Do you sell tractors?", ""},
	})
}

// A follow-up is understood with the previous question: "and how long does it take?" after "Do you ship to
// Canada?" is about shipping, not about the rentals it matches on its own.
func TestFollowUpIsSearchedWithThePreviousQuestion(t *testing.T) {
	ix := NewIndex([]Item{
		{ID: "ship", Title: "Shipping to Canada", Content: "We ship to Canada with Canada Post. Parcels arrive in 5 to 8 business days."},
		{ID: "rent", Title: "Bike rentals", Content: "How long does it take to book a rental? Booking takes two minutes online."},
		{ID: "returns", Title: "Returns", Content: "You can return unworn items within 30 days."},
	})
	history := []Turn{{Visitor: true, Text: "Do you ship to Canada?"}, {Text: "We ship to Canada with Canada Post."}}
	alone := respond(t, Request{Message: "and how long does it take?", Index: ix})
	if len(alone.Sources) == 0 || alone.Sources[0].KnowledgeID != "rent" {
		t.Fatalf("the follow-up alone: %+v", alone)
	}
	got := respond(t, Request{Message: "and how long does it take?", Index: ix, History: history})
	if len(got.Sources) == 0 || got.Sources[0].KnowledgeID != "ship" || !strings.Contains(got.Text, "5 to 8 business days") {
		t.Errorf("the follow-up: %+v", got)
	}
	// A new question with its own subject is not mixed with the previous one.
	other := respond(t, Request{Message: "Can I return unworn items within 30 days for a refund?", Index: ix, History: history})
	if len(other.Sources) == 0 || other.Sources[0].KnowledgeID != "returns" {
		t.Errorf("a new question: %+v", other)
	}
}

// TestIsFollowUp: which messages continue the previous question, and so need the previous exchange.
func TestIsFollowUp(t *testing.T) {
	for msg, want := range map[string]bool{
		"and how long does it take?":           true,
		"What about Germany?":                  true,
		"how much does that cost":              true,
		"Do you ship to Canada?":               false,
		"What is your return policy for shoes": false,
		"":                                     false,
		"and if I order three pairs of shoes on a sunday evening, does it ship monday": false,
	} {
		if got := isFollowUp(msg); got != want {
			t.Errorf("isFollowUp(%q) = %v", msg, got)
		}
		// A follow-up needs the previous exchange to be searched with its question; anything else, no history.
		if n := (Retrieval{}).HistoryFor(msg); (n == 2) != want || (n != 0) != want {
			t.Errorf("HistoryFor(%q) = %d", msg, n)
		}
	}
}

// A message asking two things that two items answer gets both, and the reply says so; one asking one thing
// quotes one item.
func TestAnswerTwoParts(t *testing.T) {
	ix := NewIndex([]Item{
		{ID: "pets", Title: "Pets", Content: "Dogs are welcome in our ground-floor rooms for 15 a night."},
		{ID: "breakfast", Title: "Breakfast", Content: "Breakfast is included in every rate and served from 7 to 10."},
		{ID: "parking", Title: "Parking", Content: "Our car park behind the hotel costs 12 a night."},
	})
	for _, locale := range []string{"en", "de"} {
		reply := respond(t, Request{Message: "can I bring my dog and is breakfast included?", Index: ix, Locale: locale})
		other := fmt.Sprintf(textsFor(locale).otherPart, "Pets")
		if reply.Kind != KindAnswer || !strings.HasPrefix(reply.Text, "Breakfast is included") ||
			!strings.Contains(reply.Text, other+" Dogs are welcome") {
			t.Errorf("%s: Text = %q, want both items, the second after %q", locale, reply.Text, other)
		}
		if len(reply.Sources) != 2 || reply.Sources[0].KnowledgeID != "breakfast" || reply.Sources[1].KnowledgeID != "pets" {
			t.Errorf("%s: Sources = %+v, want breakfast then pets", locale, reply.Sources)
		}
	}
	de := NewIndexForLocale([]Item{
		{ID: "haustiere", Title: "Haustiere", Content: "Hunde sind in unseren Zimmern im Erdgeschoss für 15 Euro pro Nacht willkommen."},
		{ID: "fruehstueck", Title: "Frühstück", Content: "Das Frühstück ist in jedem Preis inbegriffen und wird von 7 bis 10 Uhr serviert."},
		{ID: "parken", Title: "Parken", Content: "Unser Parkplatz hinter dem Hotel kostet 12 Euro pro Nacht."},
	}, "de")
	reply := respond(t, Request{Message: "Sind Hunde willkommen und ist das Frühstück inbegriffen?", Index: de, Locale: "de-DE"})
	if other := fmt.Sprintf(textsFor("de").otherPart, "Haustiere"); len(reply.Sources) != 2 || !strings.Contains(reply.Text, other) {
		t.Errorf("German: Text = %q, Sources = %+v, want both items, the second after %q", reply.Text, reply.Sources, other)
	}
	for _, msg := range []string{"is breakfast included", "can I bring my dog and also my cat"} {
		reply := respond(t, Request{Message: msg, Index: ix})
		if strings.Contains(reply.Text, "other part") {
			t.Errorf("%q: Text = %q, want one item quoted", msg, reply.Text)
		}
	}
}

// A message of more clauses than are tried as its other part is tried at its first and last ones, where a
// rambling message asks: the second question asked last is answered, one asked in the middle is not looked for.
func TestOtherPartOfManyClauses(t *testing.T) {
	ix := NewIndex([]Item{
		{ID: "pets", Title: "Pets", Content: "Dogs are welcome in our ground-floor rooms for 15 a night."},
		{ID: "breakfast", Title: "Breakfast", Content: "Breakfast is included in every rate and served from 7 to 10."},
		{ID: "parking", Title: "Parking", Content: "Our car park behind the hotel costs 12 a night."},
	})
	filler := strings.Repeat("Is breakfast included? ", maxClauses)
	for _, tt := range []struct {
		message string
		both    bool
	}{
		{filler + "Can I bring my dog?", true},
		{filler + "Can I bring my dog? " + filler, false},
	} {
		reply := respond(t, Request{Message: tt.message, Index: ix})
		if got := len(reply.Sources) == 2 && reply.Sources[1].KnowledgeID == "pets"; got != tt.both {
			t.Errorf("%d clauses, the dog asked at the end %v: Sources = %+v, want pets as the other part %v",
				len(ix.cache.language().SplitClauses(tt.message)), tt.both, reply.Sources, tt.both)
		}
	}
}

func TestConfident(t *testing.T) {
	tests := []struct {
		conf  float64
		about bool
		want  bool
	}{
		{0.5, false, true},
		{0.9, false, true},
		{0.49, false, false},
		{0.3, false, false},
		{0.3, true, true},   // a paraphrase of the whole title
		{0.25, true, true},  // half the threshold is enough then
		{0.24, true, false}, // but not less
		{0, true, false},
	}
	for _, tt := range tests {
		if got := confident(tt.conf, tt.about, 0.5); got != tt.want {
			t.Errorf("confident(%v, %v, 0.5) = %v, want %v", tt.conf, tt.about, got, tt.want)
		}
	}
}

func TestNamesTitle(t *testing.T) {
	ix := NewIndex([]Item{
		{ID: "parking", Title: "Parking", Content: "Guests park in the garage under the hotel for 20 euros a night."},
		{ID: "rooms", Title: "Room types and air conditioning", Content: "Every room has a desk and a safe."},
		{ID: "breakfast", Title: "Breakfast", Content: "Breakfast is served in the restaurant from 7 to 10."},
		{ID: "empty", Title: "The", Content: "Nothing in the title is informative."},
	})
	doc := func(id string) int32 {
		for d, dc := range ix.docs {
			if ix.items[dc.item].ID == id {
				return int32(d)
			}
		}
		t.Fatalf("no item %q", id)
		return -1
	}
	tests := []struct {
		question, item string
		want           bool
	}{
		{"how much is it to park overnight", "parking", true},
		{"brekfast hours", "breakfast", true}, // a typo names the word too
		{"do the rooms have air con", "rooms", false},
		{"do the rooms have air conditioning, what types are there", "rooms", true},
		{"where is the garage", "parking", false},
		{"is the title informative", "empty", false},
	}
	for _, tt := range tests {
		if got := ix.namesTitle(ix.parseQuery(tt.question), doc(tt.item)); got != tt.want {
			t.Errorf("namesTitle(%q, %s) = %v, want %v", tt.question, tt.item, got, tt.want)
		}
	}
}

func TestAllMatched(t *testing.T) {
	ix := NewIndex([]Item{
		{ID: "clocking", Title: "Clocking in", Content: "Employees record the start of their shift on the tablet at the entrance."},
		{ID: "payslips", Title: "Payslips", Content: "Payslips are emailed on the last Friday of the month."},
	})
	tests := []struct {
		question string
		want     bool
	}{
		{"clock in", true},
		{"how do employees clock in", true},
		{"how do workers clock in", false}, // nothing in the base is "workers"
		{"clockin in", true},               // a typo of an indexed word
		{"can my horse clock in too", false},
		{"even so, clock in", true}, // "even" and "so" are not informative
	}
	for _, tt := range tests {
		if got := ix.parseQuery(tt.question).allMatched(); got != tt.want {
			t.Errorf("allMatched(%q) = %v, want %v", tt.question, got, tt.want)
		}
	}
}

// A paraphrase that names the title of an item is answered, though it brings words of its own; an off-topic
// question sharing a word with the knowledge base is still declined.
func TestParaphraseOfTitleIsAnswered(t *testing.T) {
	ix := NewIndex(baseItems(t, "hotel"))
	checkAnswers(t, ix, "", []answerCase{
		{"how much does parking cost a night", "parking"},
		{"can I bring my horse", ""},
		{"is there a ski room to store skis", ""},
	})
}

// TestSuggestions checks that a reply without an answer suggests the items nearest to the question, when they are
// near enough, and that it still says it has no answer.
func TestSuggestions(t *testing.T) {
	ix := NewIndex(baseItems(t, "dental"))
	for _, tt := range []struct {
		question string
		suggest  string // an item among the suggestions, or "" for none
	}{
		{"my breath smells even though I brush", "bad-breath"},
		{"do you make gum shields for rugby", "mouthguards"},
		{"do you sell electric toothbrushes", ""},
		{"what's the weather like on mars", ""},
	} {
		reply := respond(t, Request{Message: tt.question, Index: ix})
		if reply.Kind != KindFallback || reply.Answered {
			t.Errorf("%q: %s reply (answered %v), want the fallback", tt.question, reply.Kind, reply.Answered)
			continue
		}
		if tt.suggest == "" {
			if len(reply.Sources) > 0 {
				t.Errorf("%q: suggests %+v, want nothing", tt.question, reply.Sources)
			}
			continue
		}
		if !suggests(reply, tt.suggest) || len(reply.Sources) > maxSuggestions {
			t.Errorf("%q: suggests %+v, want %s among at most %d", tt.question, reply.Sources, tt.suggest, maxSuggestions)
		}
		for _, s := range reply.Sources {
			if s.Snippet == "" || s.URL == "" {
				t.Errorf("%q: suggestion %+v lacks its sentence or address", tt.question, s)
			}
		}
	}
}

// TestNumbersTheBaseLacks checks that a number or a time of day the knowledge base lacks does not count against an
// answer, and that a question of numbers alone finds nothing.
func TestNumbersTheBaseLacks(t *testing.T) {
	ix := NewIndex(baseItems(t, "hotel"))
	checkAnswers(t, ix, "", []answerCase{
		{"can I work out at 5am", "gym"},
		{"is the gym open at 5am", "gym"},
		{"what is 2 + 2", ""},
	})
}

// TestStoryAroundTheQuestion checks that words a visitor uses only to tell what happened, which the knowledge base
// never writes, count less against the item that answers what they ask (both are declined when they count in
// full), while a question about something the base does not cover stays declined however it is told.
func TestStoryAroundTheQuestion(t *testing.T) {
	ix := NewIndex(baseItems(t, "bicycle"))
	checkAnswers(t, ix, "", []answerCase{
		{"rode it to work for a week and honestly it isn't for me, can I get a refund?", "returns"},
		{"the brakes squeal terribly when it rains, can you fit new pads?", "quick-fixes"},
		{"my grandmother is visiting next week, can you recommend a good restaurant?", ""},
		{"we're a family of four heading off on holiday, can you recommend a cheap hotel?", ""},
	})
}

// TestLeavingTheCarIsParking checks that a visitor asking where to leave the car is answered from the item on
// parking, which need not write "leave" or "car".
func TestLeavingTheCarIsParking(t *testing.T) {
	checkAnswers(t, NewIndex(baseItems(t, "dental")), "", []answerCase{{"is there anywhere to leave the car", "location-parking"}})
}

// A message longer than a search reads is read at its start and its end, where a rambling message asks: a pasted
// e-mail's question is still answered, and its middle is not searched.
func TestLongMessageIsReadAtItsEnds(t *testing.T) {
	ix := NewIndex([]Item{
		{ID: "returns", Title: "Returns", Content: "You can return unworn items within 60 days for a full refund."},
		{ID: "hours", Title: "Opening hours", Content: "The store is open from 9 to 6, Monday to Saturday."},
		{ID: "kayak", Title: "Kayak rentals", Content: "We rent kayaks from May to September for 45 dollars a day."},
	})
	filler := strings.Repeat("and then it was so that ", maxQueryWords/6)
	middle := filler + "kayak " + filler
	checkAnswers(t, ix, "", []answerCase{
		{"Hello there. " + middle + "Anyway, can I get a refund?", "returns"},
		{"When are you open on Saturday? " + middle + "Thanks so much.", "hours"},
	})
	terms := ix.wordCache().queryTerms(middle)
	if slices.ContainsFunc(terms, func(t term) bool { return t.word == "kayak" }) {
		t.Errorf("queryTerms of %d words searched its middle word", len(lang.Tokenize(middle)))
	}
	if n := len(lang.Tokenize(middle)); n <= maxQueryWords {
		t.Fatalf("the message has %d words, want more than %d", n, maxQueryWords)
	}
}
