package assistant

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/parley-dev/parley/runtime/assistant/lang"
)

func TestTermsStemsAndDropsStopWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string // stems
	}{
		{"What is your return policy?", []string{"return", "polici"}},
		{"Do you do shipping to Canada?", []string{"ship", "canada"}},
		{"running shoes and sleeping bags", []string{"run", "shoe", "sleep", "bag"}},
		{"Rentals, renting", []string{"rental", "rent"}},
		{"Do you deliver to the UK?", []string{"deliv", "uk"}},
		{"how do I wash my down jacket", []string{"wash", "down", "jacket"}},
		{"is it the", nil},
		{"wheres the shop, hows it going", []string{"shop"}}, // contractions typed without their apostrophe
	}
	for _, tt := range tests {
		var got []string
		var noCache *stemCache
		for _, term := range noCache.appendInformative(nil, lang.Tokenize(tt.in)) {
			got = append(got, term.stem)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("terms(%q) stems = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func smallIndex() *Index {
	return NewIndex([]Item{
		{ID: "returns", Title: "Return policy", Content: "You can return unused items within 60 days. Refunds take a week."},
		{ID: "shipping", Title: "Shipping", Content: "We ship to Canada and the United States. Shipping is free over $75."},
		{ID: "tent", Title: "Trailhead tent", Content: "A light tent for two. You can return it if it leaks.", Tags: []string{"camping"}},
		{ID: "rentals", Title: "Gear rentals", Content: "We rent tents and sleeping bags.", Tags: []string{"hire"}},
	})
}

func hitIDs(hits []Hit) []string {
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.Item.ID
	}
	return ids
}

func TestSearchRanking(t *testing.T) {
	ix := smallIndex()
	tests := []struct {
		query string
		want  []string // best first; only the first len(want) hits are checked
	}{
		{"return policy", []string{"returns", "tent"}}, // the title match ranks first
		{"retrun polcy", []string{"returns"}},          // typos
		{"shiping to canda", []string{"shipping"}},     // typos
		{"free shipping over 75 dollars", []string{"shipping"}},
		{"camping", []string{"tent"}},              // tags are searched
		{"can I hire a tent", []string{"rentals"}}, // the tag "hire" and "tent"
		{"do you sell cars", nil},
		{"", nil},
		{"the and of", nil},
	}
	for _, tt := range tests {
		got := hitIDs(ix.Search(tt.query, 5))
		if len(tt.want) == 0 {
			if len(got) != 0 {
				t.Errorf("Search(%q) = %q, want no hits", tt.query, got)
			}
			continue
		}
		if len(got) < len(tt.want) || !slices.Equal(got[:len(tt.want)], tt.want) {
			t.Errorf("Search(%q) = %q, want it to start with %q", tt.query, got, tt.want)
		}
	}
}

func TestSearchScoresAndLimit(t *testing.T) {
	ix := smallIndex()
	hits := ix.Search("return tent", 2)
	if len(hits) != 2 {
		t.Fatalf("got %d hits, want 2 (k)", len(hits))
	}
	if hits[0].Score < hits[1].Score || hits[1].Score <= 0 {
		t.Errorf("scores not positive and descending: %v", hits)
	}
	if got := ix.Search("return", 0); len(got) != 0 {
		t.Errorf("k=0 gave %d hits", len(got))
	}
}

func TestEmptyIndex(t *testing.T) {
	for _, ix := range []*Index{nil, NewIndex(nil)} {
		if ix.Len() != 0 {
			t.Errorf("Len() = %d, want 0", ix.Len())
		}
		if got := ix.Search("return policy", 3); len(got) != 0 {
			t.Errorf("Search on empty index = %v", got)
		}
	}
}

func TestIndexIsImmutable(t *testing.T) {
	items := []Item{{ID: "a", Title: "Return policy", Content: "Returns within 60 days."}}
	ix := NewIndex(items)
	items[0].ID, items[0].Title = "changed", "Changed"
	if ix.Len() != 1 {
		t.Fatalf("Len() = %d, want 1", ix.Len())
	}
	if got := hitIDs(ix.Search("return policy", 1)); !slices.Equal(got, []string{"a"}) {
		t.Errorf("after changing the input slice, Search = %q, want [a]", got)
	}
}

// TestBuilderReuse checks that a Builder's buffers carry nothing from one build into the next: an index built
// after others, of another language and of more items, answers every question as one built anew.
func TestBuilderReuse(t *testing.T) {
	var b Builder
	b.Build(synthItems(2, 300, 2000), "")
	b.Build([]Item{{ID: "versand", Title: "Versand", Content: "Wir versenden innerhalb von drei Werktagen."}}, "de")
	reused, fresh := b.Build(fixtureItems(t), ""), NewIndex(fixtureItems(t))
	if reused.Size() != fresh.Size() {
		t.Errorf("Size() = %d after other builds, %d built anew", reused.Size(), fresh.Size())
	}
	for _, q := range fixtureQuestions(t) {
		if got, want := reused.Search(q.Q, 5), fresh.Search(q.Q, 5); !slices.EqualFunc(got, want, func(a, b Hit) bool {
			return a.Item.ID == b.Item.ID && a.Score == b.Score
		}) {
			t.Errorf("Search(%q) = %v after other builds, %v built anew", q.Q, got, want)
		}
	}
}

func TestSearchConcurrent(t *testing.T) {
	ix := NewIndex(fixtureItems(t))
	qs := fixtureQuestions(t)
	want := make([][]string, len(qs))
	for i, q := range qs {
		want[i] = hitIDs(ix.Search(q.Q, 3))
	}
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for g := range 16 {
		wg.Go(func() {
			for n := range 100 {
				i := (g*31 + n) % len(qs)
				if got := hitIDs(ix.Search(qs[i].Q, 3)); !slices.Equal(got, want[i]) {
					errs <- fmt.Sprintf("Search(%q) = %q concurrently, %q alone", qs[i].Q, got, want[i])
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// typos returns w with each of its letters deleted, doubled and replaced, and each pair of neighbours swapped.
func typos(w string) []string {
	r := []rune(w)
	var out []string
	for i := range r {
		out = append(out,
			string(r[:i])+string(r[i+1:]),
			string(r[:i+1])+string(r[i:]),
			string(r[:i])+"x"+string(r[i+1:]),
			string(r[:i])+"ü"+string(r[i+1:]))
		if i+1 < len(r) {
			out = append(out, string(r[:i])+string(r[i+1])+string(r[i])+string(r[i+2:]))
		}
	}
	return out
}

// TestInvalidUTF8Content checks that content with invalid bytes, which the knowledge API refuses but a caller of
// the package may pass, is indexed and quoted as valid text.
func TestInvalidUTF8Content(t *testing.T) {
	ix := NewIndex([]Item{{ID: "returns", Title: "Returns", Content: "Returns within 30 days.\xff Refunds take a w\xffeek."}})
	reply, err := Retrieval{}.Respond(t.Context(), Request{Message: "how long do refunds take", Index: ix})
	if err != nil {
		t.Fatal(err)
	}
	if !reply.Answered || !utf8.ValidString(reply.Text) || !strings.Contains(reply.Text, "Refunds take") {
		t.Errorf("reply = %+v, want an answer quoting the refunds sentence as valid UTF-8", reply)
	}
}

func TestAppendPassages(t *testing.T) {
	if got := appendPassages(nil, "Short. Two sentences."); !slices.Equal(got, []string{"Short. Two sentences."}) {
		t.Errorf("short text: %q, want it whole", got)
	}
	if got := appendPassages(nil, ""); !slices.Equal(got, []string{""}) {
		t.Errorf("empty text: %q, want one empty passage", got)
	}
	// Eight paragraphs of three sentences, about 300 characters each.
	var paragraphs []string
	for p := range 8 {
		var sentences []string
		for s := range 3 {
			sentences = append(sentences, fmt.Sprintf("Paragraph %d sentence %d says something about the topic at hand, at some length %s.", p, s, strings.Repeat("x", 10)))
		}
		paragraphs = append(paragraphs, strings.Join(sentences, " "))
	}
	text := strings.Join(paragraphs, "\n\n")
	got := appendPassages(nil, text)
	if len(got) < 3 {
		t.Fatalf("%d passages of a %d-character text, want several", len(got), len(text))
	}
	var all []string
	for i, p := range got {
		if len(p) > passageChars {
			t.Errorf("passage %d has %d characters, want at most %d", i, len(p), passageChars)
		}
		if !strings.Contains(text, p) || !strings.HasSuffix(p, ".") {
			t.Errorf("passage %d = %q, want whole sentences of the text", i, p)
		}
		if i < len(got)-1 && !strings.HasSuffix(p, "sentence 2 says something about the topic at hand, at some length xxxxxxxxxx.") {
			t.Errorf("passage %d ends mid-paragraph: %q", i, p)
		}
		all = append(all, lang.SplitSentences(p)...)
	}
	if want := lang.SplitSentences(text); !slices.Equal(all, want) {
		t.Errorf("the passages hold %d sentences, want the text's %d in order", len(all), len(want))
	}
}

// A long item is searched passage by passage: the passage that matches ranks it, it is found once, and the
// answer quotes that passage.
func TestLongItemPassages(t *testing.T) {
	var paragraphs []string
	for _, topic := range []string{"rooms", "breakfast", "parking", "spa", "restaurant", "garden", "library", "terrace"} {
		paragraphs = append(paragraphs, strings.Repeat(fmt.Sprintf("Our %s is lovely and open every day of the week for all our guests. ", topic), 4))
	}
	paragraphs[5] += "Dogs are welcome in the garden on a lead."
	ix := NewIndex([]Item{
		{ID: "guide", Title: "Guest guide", Content: strings.Join(paragraphs, "\n\n")},
		{ID: "garden", Title: "The garden", Content: "Guests are welcome in the garden from 8am to dusk."},
	})
	if len(ix.docs) < 3 {
		t.Errorf("%d passages, want the long item split", len(ix.docs))
	}
	hits := ix.Search("are dogs welcome in the garden", 5)
	if ids := hitIDs(hits); len(ids) == 0 || ids[0] != "guide" || slices.Index(ids[1:], "guide") >= 0 {
		t.Errorf("Search = %q, want guide first and once", ids)
	}
	reply := respond(t, Request{Message: "are dogs welcome in the garden", Index: ix})
	if reply.Kind != KindAnswer || !strings.Contains(reply.Text, "Dogs are welcome in the garden") {
		t.Errorf("Text = %q, want the garden passage quoted", reply.Text)
	}
}

func TestSearchFindsCompoundSpellings(t *testing.T) {
	ix := NewIndex([]Item{
		{ID: "times", Title: "Arrival and departure", Content: "Check-in is from 3pm. Check-out is by 11am."},
		{ID: "shop", Title: "Gift shop", Content: "Check our shop for gifts. You can pay at the till on the way out."},
		{ID: "account", Title: "Your account", Content: "Use your login to see your bookings."},
		{ID: "history", Title: "Booking history", Content: "Every change to your bookings is kept in a log."},
		{ID: "imaging", Title: "Imaging", Content: "X-rays show decay between teeth."},
		{ID: "hygiene", Title: "Hygiene", Content: "Decay between teeth is prevented by flossing."},
	})
	tests := []struct{ q, want string }{
		{"checkout time", "times"},
		{"check-out time", "times"},
		{"when is check out", "times"},
		{"xray for decay", "imaging"},
	}
	for _, tt := range tests {
		hits := ix.Search(tt.q, 1)
		if len(hits) == 0 || hits[0].Item.ID != tt.want {
			t.Errorf("Search(%q) = %v, want %s first", tt.q, hits, tt.want)
		}
	}
}

// TestSearchPrefersNamedTitle checks that a question naming an item's title ranks that item first even when
// another item matches a rarer word of the question, and that the hit's score stays the item's BM25 score.
func TestSearchPrefersNamedTitle(t *testing.T) {
	items := []Item{
		{ID: "breakfast", Title: "Breakfast", Content: "Breakfast is served in the Harbour Room from seven to ten."},
		{ID: "arrival", Title: "Arrival and departure", Content: "Rooms are ready on the day of arrival. Check-out hours end at eleven."},
		{ID: "rates", Title: "Room rates", Content: "Our rates include breakfast for two."},
		{ID: "family", Title: "Families", Content: "Children eat breakfast free of charge."},
		{ID: "groups", Title: "Groups", Content: "Groups can book breakfast in a private room."},
		{ID: "vegan", Title: "Dietary needs", Content: "Vegan and gluten-free breakfast dishes are available."},
		{ID: "service", Title: "Room service", Content: "Order breakfast to your room the evening before."},
	}
	ix := NewIndex(items)
	q := ix.parseQuery("what are the breakfast hours")
	bm25 := ix.rank(q, 1)[0]
	if got := ix.items[ix.docs[bm25.doc].item].ID; got != "breakfast" {
		t.Fatalf("first hit %q, want breakfast", got)
	}
	// Without its title, "Breakfast" would lose to the item with the rarer word "hours".
	arrival, breakfast := -1.0, -1.0
	for _, m := range ix.rank(q, len(items)) {
		switch ix.items[ix.docs[m.doc].item].ID {
		case "arrival":
			arrival = m.score
		case "breakfast":
			breakfast = m.score
		}
	}
	if arrival <= breakfast {
		t.Errorf("BM25 scores: arrival %.3f, breakfast %.3f; want arrival's higher, or the test shows nothing", arrival, breakfast)
	}
	if hits := ix.Search("what are the breakfast hours", 2); len(hits) != 2 || hits[0].Item.ID != "breakfast" || hits[0].Score != breakfast {
		t.Errorf("Search = %+v, want breakfast first with its BM25 score %.3f", hits, breakfast)
	}
}

// Pairs sort by key, then document, whether packed into integers or compared as they are.
func TestSortPairs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const terms, docs = 1 << packedTermBits, 1 << packedDocBits
	pairs := make([]pairDoc, 5000)
	for i := range pairs {
		a, b := rng.Int32N(terms), rng.Int32N(terms)
		if i%3 == 0 {
			a, b = rng.Int32N(4), rng.Int32N(4) // repeated keys, told apart by document
		}
		pairs[i] = pairDoc{key: pairKey(a, b), doc: rng.Int32N(docs)}
	}
	want := slices.Clone(pairs)
	slices.SortFunc(want, func(a, b pairDoc) int { return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.doc, b.doc)) })
	for _, tc := range []struct {
		name        string
		terms, docs int
	}{{"packed", terms, docs}, {"more terms", terms + 1, docs}, {"more documents", terms, docs + 1}} {
		got := slices.Clone(pairs)
		sortPairs(got, tc.terms, tc.docs)
		if !slices.Equal(got, want) {
			t.Errorf("%s: sortPairs differs from sorting by key and document", tc.name)
		}
	}
}
func TestEditDistanceOne(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"retrun", "return", true},    // swapped neighbours
		{"shiping", "shipping", true}, // missing letter
		{"canda", "canada", true},     // missing letter
		{"polcy", "policy", true},     // missing letter
		{"recieve", "receive", true},  // swapped neighbours
		{"tents", "tenth", true},      // replaced letter
		{"return", "return", false},   // identical
		{"retrun", "returns", false},  // two edits
		{"abcd", "badc", false},       // two swaps
		{"größe", "grösse", false},    // two edits in runes
		{"zelt", "zelte", true},       // added letter
		{"weather", "leather", true},  // distance 1, but typoCandidates also needs the same first letter
		{"packing", "parking", true},  // distance 1
		{"", "a", true},               // added letter
	}
	for _, tt := range tests {
		if got := editDistanceOne(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistanceOne(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

// TestTypoCandidates checks the variants typoCandidates looks up against a comparison of the query word with every
// indexed word, for typos of the indexed words and for the questions' own words, in English and German and with an
// alphabet large enough that the comparison is used.
func TestTypoCandidates(t *testing.T) {
	large := []Item{{ID: "cjk", Title: "配送について", Content: "ご注文から三日以内に発送いたします。返品は三十日以内に受け付けます。"}}
	for _, tt := range []struct {
		name   string
		items  []Item
		locale string
	}{
		{"acme", fixtureItems(t), ""},
		{"acme-de", fixtureItems(t), "de"},
		{"german", []Item{{ID: "versand", Title: "Versand", Content: "Wir versenden innerhalb von drei Werktagen. Rücksendungen sind kostenlos."}}, "de"},
		{"large-alphabet", large, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ix := NewIndexForLocale(tt.items, tt.locale)
			var queries []string
			for i, w := range slices.Sorted(slices.Values(ix.cache.words)) {
				if i%4 == 0 { // a quarter of the words keeps the test short
					queries = append(queries, typos(w)...)
				}
			}
			for _, q := range fixtureQuestions(t) {
				queries = append(queries, lang.Tokenize(q.Q)...)
			}
			found := 0
			for _, q := range queries {
				got := slices.Sorted(slices.Values(ix.typoCandidates(q)))
				want := ix.scanTypos(q)
				if !fuzzyWord(q) {
					want = nil
				}
				if !slices.Equal(got, want) {
					t.Errorf("typoCandidates(%q) = %v, comparing with every word finds %v", q, got, want)
				}
				found += len(got)
			}
			if found == 0 {
				t.Errorf("no typo of %d queries found a word", len(queries))
			}
		})
	}
}

// A word of the language's frequency list is spelt right: it is not matched as a typo of an indexed word one
// letter away ("house" is no "horse"), while a misspelling still is ("hrose").
func TestListedWordIsNoTypo(t *testing.T) {
	ix := NewIndex([]Item{{ID: "riding", Title: "Horse riding", Content: "Every horse is saddled for you."}})
	horse, ok := ix.stemID(lang.English.Stem("horse"))
	if !ok {
		t.Fatal("the index lacks horse")
	}
	if _, listed := lang.English.Rarity("house"); !listed {
		t.Fatal("the English frequency list lacks house")
	}
	matches := func(word string) bool {
		q := ix.parseQuery(word)
		return len(q.terms) == 1 && slices.ContainsFunc(q.terms[0].alts, func(a alt) bool { return a.id == horse })
	}
	if matches("house") {
		t.Error("house matches horse as a typo")
	}
	if !matches("hrose") {
		t.Error("hrose does not match horse as a typo")
	}
}
