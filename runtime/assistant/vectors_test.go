package assistant_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/parley-dev/parley/internal/dev/demo"
	"github.com/parley-dev/parley/internal/testutil/fakeembed"
	"github.com/parley-dev/parley/runtime/assistant"
	"github.com/parley-dev/parley/runtime/assistant/embeddings"
)

// multilingual is the fake model's dictionary for the tests: German words and English paraphrases mapped to the
// English concept they mean, as a multilingual model puts a word and its translations in one region of its space.
// fakeembed adds one pseudo-random direction per concept, so two texts are near when they name the same concepts
// in whatever language, and far when they share only function words, which the model ignores.
var multilingual = map[string]string{
	"gutschein": "gift card", "gutscheine": "gift card", "geschenkgutschein": "gift card", "voucher": "gift card",
	"gift card": "gift card", "gift cards": "gift card", "e gift cards": "gift card",
	"geschenk": "gift", "present": "gift", "kaufen": "buy", "purchase": "buy", "bought": "buy",
	"versand": "shipping", "lieferung": "shipping", "delivery": "shipping", "ship": "shipping",
	"dauert": "take", "lange": "long", "zurückgeben": "return", "rückgabe": "return", "returns": "return",
}

// functionWords carry no meaning for the fake model, in either language.
var functionWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an the and or of to in on for with as at by is are be can i you we our your it
		they them this that do does how what when my me from any not no
		ich kann einen eine ein der die das und oder wie als zu mit von bei ist sind wir sie es mein meine man
		wann was`) {
		functionWords[w] = true
	}
}

// demoItems are the demo shop's items, in English.
func demoItems() []assistant.Item {
	raw := demo.Knowledge()
	items := make([]assistant.Item, len(raw))
	for i, r := range raw {
		items[i] = assistant.Item{ID: r.ID, Title: r.Title, Content: r.Content, URL: r.URL, Tags: r.Tags}
	}
	return items
}

// embedded returns items with their vectors from the fake, through the embeddings client, and the client.
func embedded(t *testing.T, items []assistant.Item) ([]assistant.Item, *embeddings.Client) {
	t.Helper()
	p := fakeembed.New(t)
	p.Concepts, p.Ignore = multilingual, functionWords
	c, err := embeddings.New(embeddings.Config{BaseURL: p.URL(), Model: "multilingual-fake", BatchSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	for i := range items {
		res, err := c.Embed(context.Background(), assistant.EmbeddingTexts(items[i]))
		if err != nil {
			t.Fatal(err)
		}
		items[i].Vectors = res.Vectors
	}
	return items, c
}

func embed(t *testing.T, c *embeddings.Client, text string) []float32 {
	t.Helper()
	res, err := c.Embed(context.Background(), []string{text})
	if err != nil {
		t.Fatal(err)
	}
	return res.Vectors[0]
}

// TestGermanQuestionOnEnglishBase asks the demo shop, whose items are in English, in German: its words match no
// item, and its meaning finds the gift cards.
func TestGermanQuestionOnEnglishBase(t *testing.T) {
	items, c := embedded(t, demoItems())
	ix := assistant.NewIndex(items)
	const question = "Kann ich einen Gutschein als Geschenk kaufen?"
	if hits := ix.Search(question, 5); slices.ContainsFunc(hits, func(h assistant.Hit) bool { return h.Item.ID == "gift-cards" }) {
		t.Fatalf("the words alone found the gift cards; the test shows nothing: %v", hits)
	}
	v := embed(t, c, question)
	hits := ix.SearchWith(question, v, 5)
	if len(hits) == 0 || hits[0].Item.ID != "gift-cards" {
		t.Fatalf("fused search: %v, want gift-cards first", ids(hits))
	}
	r := assistant.Retrieval{MinSimilarity: 0.35} // the fake's cosines for a match are lower than a real model's
	reply, err := r.Respond(context.Background(), assistant.Request{Message: question, Index: ix, QueryVector: v})
	if err != nil {
		t.Fatal(err)
	}
	if !reply.Answered || len(reply.Sources) == 0 || reply.Sources[0].KnowledgeID != "gift-cards" {
		t.Errorf("reply %+v, want an answer from gift-cards", reply)
	}
	// Without the vector, the offline path is as it was: no answer.
	reply, err = r.Respond(context.Background(), assistant.Request{Message: question, Index: ix})
	if err != nil {
		t.Fatal(err)
	}
	if reply.Answered {
		t.Errorf("answered from words alone: %+v", reply)
	}
}

// TestEnglishParaphraseFindsItsItem asks with words no item shares ("present", "purchase") what the gift cards
// item answers.
func TestEnglishParaphraseFindsItsItem(t *testing.T) {
	items, c := embedded(t, demoItems())
	ix := assistant.NewIndex(items)
	const question = "can I purchase a voucher as a present?"
	hits := ix.SearchWith(question, embed(t, c, question), 3)
	if len(hits) == 0 || hits[0].Item.ID != "gift-cards" {
		t.Fatalf("fused search: %v, want gift-cards first", ids(hits))
	}
}

// TestOffTopicStaysDeclined checks that a question near no item is not answered by meaning.
func TestOffTopicStaysDeclined(t *testing.T) {
	items, c := embedded(t, demoItems())
	ix := assistant.NewIndex(items)
	const question = "Wer hat die Fußballweltmeisterschaft gewonnen?"
	reply, err := assistant.Retrieval{MinSimilarity: 0.35}.Respond(context.Background(),
		assistant.Request{Message: question, Index: ix, QueryVector: embed(t, c, question)})
	if err != nil {
		t.Fatal(err)
	}
	if reply.Answered {
		t.Errorf("answered %+v", reply)
	}
}

// TestVectorsOfAnotherLength are ignored: the question searches by words alone.
func TestVectorsOfAnotherLength(t *testing.T) {
	items, _ := embedded(t, demoItems())
	ix := assistant.NewIndex(items)
	words := ix.Search("how long does shipping take", 5)
	fused := ix.SearchWith("how long does shipping take", make([]float32, 3), 5)
	if !slices.Equal(ids(words), ids(fused)) {
		t.Errorf("with a vector of the wrong length: %v, words alone %v", ids(fused), ids(words))
	}
}

func TestStandaloneQuestion(t *testing.T) {
	history := []assistant.Turn{{Visitor: true, Text: "Do you ship to Canada?"}, {Text: "Yes, in 5 to 8 days."}}
	if got := assistant.StandaloneQuestion("and how long does it take?", history); got != "and how long does it take?\nDo you ship to Canada?" {
		t.Errorf("follow-up: %q", got)
	}
	if got := assistant.StandaloneQuestion("Do you sell gift cards?", history); got != "Do you sell gift cards?" {
		t.Errorf("a question of its own: %q", got)
	}
}

func ids(hits []assistant.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Item.ID
	}
	return out
}
