package assistant

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/parley-dev/parley/internal/testutil/synthkb"
	"github.com/parley-dev/parley/runtime/assistant/lang"
)

// TestSizeMatchesHeapGrowth checks Index.Size against what building an index adds to the heap once the garbage
// is collected: the items' text (kept by the index) and everything NewIndex made. The estimate must stay within
// a quarter of the measured growth, for a small shop, a typical one and one at a plan's character limit.
func TestSizeMatchesHeapGrowth(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 2,000,000-character index; not in -short")
	}
	tests := []struct{ items, chars, questions, dims int }{
		{items: 100, chars: 400},
		{items: 500, chars: 2000},
		{items: 100, chars: 20000}, // 2,000,000 characters: the default knowledgeCharacters
		{items: 500, chars: 400, questions: 5},
		{items: 100, chars: 20000, questions: 20}, // questions of items of many passages, counted once
		{items: 1000, chars: 400, dims: 512},      // embedded, quantised vectors
	}
	// The word tables are decoded once per process, not per index: decode them before measuring.
	lang.English.Rarity("the") // the frequency list
	lang.English.Stem("spent") // the irregular forms
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%dx%d+%d@%d", tt.items, tt.chars, tt.questions, tt.dims), func(t *testing.T) {
			before := heapInUse() // the items' text is the index's too
			items := synthItems(1, tt.items, tt.chars)
			g := synthkb.New(2)
			for i := range items {
				for range tt.questions {
					items[i].Questions = append(items[i].Questions, g.Item(120).Content)
				}
			}
			for i := range items {
				items[i].Vectors = unitVectors(len(EmbeddingTexts(items[i])), tt.dims, int64(i))
			}
			ix := NewIndex(items) // items, and their floats, are garbage once it is built
			grown := heapInUse() - before
			size := ix.Size()
			runtime.KeepAlive(ix)
			ratio := float64(size) / float64(grown)
			t.Logf("Size %d bytes, heap grew %d bytes: %.2f", size, grown, ratio)
			if ratio < 0.8 || ratio > 1.2 {
				t.Errorf("Size() = %d bytes, but the heap grew by %d bytes (ratio %.2f, want 0.8 to 1.2)", size, grown, ratio)
			}
		})
	}
}

// heapInUse is the bytes of live heap objects after a full collection.
func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

func synthItems(seed uint64, n, chars int) []Item {
	g := synthkb.New(seed)
	items := make([]Item, n)
	for i := range items {
		it := g.Item(chars)
		items[i] = Item{ID: fmt.Sprintf("kn_%08d", i), Title: it.Title, Content: it.Content, URL: "https://shop.example/help/" + fmt.Sprint(i), Tags: it.Tags}
	}
	return items
}

// BenchmarkNewIndex100 builds the index of a typical small shop: what a merchant whose index was evicted waits
// for on its next question. It reports the index's Size (size-bytes), what it takes of the index cache.
func BenchmarkNewIndex100(b *testing.B) {
	items := synthItems(1, 100, 400)
	b.ReportAllocs()
	var ix *Index
	for b.Loop() {
		ix = NewIndex(items)
	}
	b.ReportMetric(float64(ix.Size()), "size-bytes")
}

// BenchmarkBuilder100 is BenchmarkNewIndex100 with one Builder for all builds, as the chat runtime's index cache
// builds them.
func BenchmarkBuilder100(b *testing.B) {
	items := synthItems(1, 100, 400)
	b.ReportAllocs()
	var builder Builder
	for b.Loop() {
		builder.Build(items, "")
	}
}
