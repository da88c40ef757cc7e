package assistant

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// unitVectors returns n random vectors of unit length with dims values, nil when dims is 0.
func unitVectors(n, dims int, seed int64) [][]float32 {
	if dims == 0 {
		return nil
	}
	r := rand.New(rand.NewPCG(uint64(seed), 1))
	out := make([][]float32, n)
	for i := range out {
		v := make([]float32, dims)
		var sum float64
		for j := range v {
			v[j] = float32(r.NormFloat64())
			sum += float64(v[j]) * float64(v[j])
		}
		for j := range v {
			v[j] /= float32(math.Sqrt(sum))
		}
		out[i] = v
	}
	return out
}

// TestQuantizedCosine checks that the int8 vectors give the cosine within 0.01 of the exact one.
func TestQuantizedCosine(t *testing.T) {
	for _, dims := range []int{64, 384, 1536} {
		vs := unitVectors(200, dims, int64(dims))
		vx := &vectorIndex{dims: dims, values: make([]int8, len(vs)*dims), scales: make([]float32, len(vs))}
		for i, v := range vs {
			vx.scales[i] = quantizeInto(vx.values[i*dims:(i+1)*dims], v)
		}
		q := vs[0]
		p := newProbe(q)
		for i, v := range vs {
			var exact float64
			for j := range v {
				exact += float64(q[j]) * float64(v[j])
			}
			if got := vx.similarity(int32(i), p); math.Abs(got-exact) > 0.01 {
				t.Errorf("%d dims, vector %d: cosine %.4f, exact %.4f", dims, i, got, exact)
			}
		}
	}
}

// TestFuse checks reciprocal rank fusion on small lists of documents, each its own item but 4 and 5 (item 4).
func TestFuse(t *testing.T) {
	item := func(d int32) int32 { return min(d, 4) }
	m := func(docs ...int32) []match {
		out := make([]match, len(docs))
		for i, d := range docs {
			out[i] = match{doc: d, wordMatched: true}
		}
		return out
	}
	for _, tt := range []struct {
		name           string
		words, vectors []match
		want           []int32
	}{
		{"vectors alone", nil, m(3, 1, 2), []int32{3, 1, 2}},
		{"words alone", m(2, 1), nil, []int32{2, 1}},
		{"the same lists", m(1, 2, 3), m(1, 2, 3), []int32{1, 2, 3}},
		// 2 is second in both: 2/(60+2) beats 1/(60+1) for either first.
		{"second in both beats first in one", m(1, 2), m(3, 2), []int32{2, 1, 3}},
		// A tie goes to the word ranking's order.
		{"first in one each", m(1), m(3), []int32{1, 3}},
		// Another passage of an item found by words counts for the item.
		{"passages of one item", m(4, 1), m(5, 2), []int32{4, 1, 2}},
		// 1 and 0 tie, first and fourth in each, ahead of 2 and 3, second and third.
		{"cut to k", m(1, 2, 3, 0), m(0, 3, 2, 1), []int32{1, 0, 2}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []int32
			for _, f := range fuse(tt.words, tt.vectors, item, 3) {
				got = append(got, f.doc)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("fused %v, want %v", got, tt.want)
			}
		})
	}
}

// TestItemsOutOfDateKeepNoVectors checks that an item whose vectors do not match its passages (it changed since
// it was embedded) is searched by words alone, and that the index keeps none of the floats.
func TestItemsOutOfDateKeepNoVectors(t *testing.T) {
	items := []Item{{ID: "a", Title: "Tents", Content: "Our tents."}, {ID: "b", Title: "Stoves", Content: "Our stoves."}}
	items[0].Vectors = unitVectors(1, 8, 1)
	items[1].Vectors = unitVectors(2, 8, 2) // two vectors for one passage
	ix := NewIndex(items)
	if dims, ok := ix.HasVectors(); !ok || dims != 8 {
		t.Fatalf("HasVectors %d, %v", dims, ok)
	}
	if ix.vectors.scales[0] == 0 || ix.vectors.scales[1] != 0 {
		t.Errorf("scales %v: want a vector for a, none for b", ix.vectors.scales)
	}
	for _, it := range ix.items {
		if it.Vectors != nil {
			t.Errorf("item %s keeps its floats", it.ID)
		}
	}
	if got := ix.nearest(newProbe(unitVectors(1, 8, 1)[0]), 5); len(got) != 1 || got[0].doc != 0 || math.Abs(got[0].similarity-1) > 0.01 {
		t.Errorf("nearest %+v, want a alone at cosine 1", got)
	}
}

// BenchmarkVectorSearch is a question's search by meaning over the passages of a knowledge base: the exact
// scan. It reports the bytes the vectors add to the index per 1,000 passages.
func BenchmarkVectorSearch(b *testing.B) {
	for _, dims := range []int{512, 1536} {
		b.Run(fmt.Sprintf("dims=%d", dims), func(b *testing.B) {
			items := synthItems(1, 1000, 400)
			plain := NewIndex(items)
			for i := range items {
				items[i].Vectors = unitVectors(len(EmbeddingTexts(items[i])), dims, int64(i))
			}
			ix := NewIndex(items)
			q := newProbe(unitVectors(1, dims, -1)[0])
			for b.Loop() {
				ix.nearest(q, fuseDepth)
			}
			b.ReportMetric(float64(ix.Size()-plain.Size())*1000/float64(len(ix.docs)), "vector-bytes/1000-passages")
		})
	}
}
