package chat

import (
	"slices"
	"strings"
	"testing"

	"github.com/parley-dev/parley/runtime/store"
)

// TestStaleItems decides which items need embedding, from their text and the vectors stored for them.
func TestStaleItems(t *testing.T) {
	long := strings.Repeat("A sentence of an item that goes on for a while. ", 60) // several passages
	items := []store.Knowledge{
		{ID: "current", Title: "Tents", Content: "Our tents."},
		{ID: "changed", Title: "Stoves", Content: "Our stoves, now cheaper."},
		{ID: "other-model", Title: "Boots", Content: "Our boots."},
		{ID: "never", Title: "Maps", Content: "Our maps."},
		{ID: "draft", Title: "Draft", Content: "Not yet.", Draft: true},
		{ID: "long", Title: "Care", Content: long},
	}
	vectors := func(k store.Knowledge, model string, passages int) []store.KnowledgeVector {
		_, hashes := embeddingTexts(k)
		var out []store.KnowledgeVector
		for p := range passages {
			out = append(out, store.KnowledgeVector{KnowledgeID: k.ID, Passage: p, Model: model, TextHash: hashes[p], Vector: []float32{1}})
		}
		return out
	}
	before := items[1]
	before.Content = "Our stoves."
	_, longHashes := embeddingTexts(items[5])
	if len(longHashes) < 2 {
		t.Fatalf("the long item has %d passages; the test needs several", len(longHashes))
	}
	var stored []store.KnowledgeVector
	stored = append(stored, vectors(items[0], "m", 1)...)
	stored = append(stored, vectors(before, "m", 1)...)
	stored = append(stored, vectors(items[2], "other", 1)...)
	stored = append(stored, vectors(items[5], "m", len(longHashes)-1)...) // a passage short
	var got []string
	for _, k := range staleItems(items, stored, "m") {
		got = append(got, k.ID)
	}
	if want := []string{"changed", "other-model", "never", "long"}; !slices.Equal(got, want) {
		t.Errorf("stale %v, want %v", got, want)
	}
	if cur := currentVectors(items, stored, "m"); len(cur) != 1 || cur["current"] == nil {
		t.Errorf("current vectors of %v, want those of current alone", cur)
	}
}

// TestTakeBatch takes whole items into a batch of texts, at least one item however many passages it has.
func TestTakeBatch(t *testing.T) {
	long := store.Knowledge{ID: "long", Title: "Care", Content: strings.Repeat("A sentence that goes on for a while. ", 200)}
	short := func(id string) store.Knowledge { return store.Knowledge{ID: id, Title: id, Content: "Short."} }
	for _, tt := range []struct {
		name string
		todo []store.Knowledge
		size int
		want []string
	}{
		{"short items up to the size", []store.Knowledge{short("a"), short("b"), short("c")}, 2, []string{"a", "b"}},
		{"a long item alone", []store.Knowledge{long, short("a")}, 2, []string{"long"}},
		{"a long item not split from those before", []store.Knowledge{short("a"), long}, 3, []string{"a"}},
		{"everything fits", []store.Knowledge{short("a")}, 64, []string{"a"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			batch, texts, hashes := takeBatch(tt.todo, tt.size)
			var got []string
			n := 0
			for i, k := range batch {
				got = append(got, k.ID)
				n += len(hashes[i])
			}
			if !slices.Equal(got, tt.want) || n != len(texts) {
				t.Errorf("batch %v of %d texts (%d hashes), want %v", got, len(texts), n, tt.want)
			}
		})
	}
}
