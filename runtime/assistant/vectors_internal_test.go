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

// TestFuse checks the convex combination of the words' and the vectors' scores on small lists of documents, each
// its own item but 4 and 5 (item 4). A document is written d/score/cosine; fusionWordsWeight is 0.25.
func TestFuse(t *testing.T) {
	item := func(d int32) int32 { return min(d, 4) }
	m := func(docs ...[3]float64) []match {
		out := make([]match, len(docs))
		for i, d := range docs {
			out[i] = match{doc: int32(d[0]), score: d[1], similarity: d[2], wordMatched: d[1] > 0}
		}
		return out
	}
	type doc = [3]float64
	for _, tt := range []struct {
		name           string
		words, vectors []match
		want           []int32
		// similarity is what the first fused match keeps.
		similarity float64
	}{
		{"vectors alone", nil, m(doc{3, 0, 0.9}, doc{1, 0, 0.8}, doc{2, 0, 0.7}), []int32{3, 1, 2}, 0.9},
		{"words alone", m(doc{2, 4, 0}, doc{1, 2, 0}), nil, []int32{2, 1}, 0},
		// 3: 0.75*0.7 = 0.525 beats 1: 0.25 + 0.75*0.2 = 0.4 and 2: 0.125 + 0.15.
		{"a near item passes weak word matches", m(doc{1, 10, 0.2}, doc{2, 5, 0.2}), m(doc{3, 0, 0.7}), []int32{3, 1, 2}, 0.7},
		// Equally near, the words tell them apart: 1: 0.25 + 0.375, 2: 0.05 + 0.375.
		{"words decide between equally near items", m(doc{2, 2, 0.5}, doc{1, 10, 0.5}), nil, []int32{1, 2}, 0.5},
		// Item 4's nearest passage is 5: 0.25 + 0.75*0.6 beats 1: 0.225 + 0.225.
		{"an item is as near as its nearest passage", m(doc{4, 10, 0.1}, doc{1, 9, 0.3}), m(doc{5, 0, 0.6}), []int32{4, 1}, 0.6},
		{"a tie goes to the word ranking's order", m(doc{2, 2, 0.4}, doc{1, 2, 0.4}), nil, []int32{2, 1}, 0.4},
		{"cut to k", m(doc{1, 4, 0.1}, doc{2, 3, 0.1}), m(doc{3, 0, 0.9}, doc{0, 0, 0.8}), []int32{3, 0, 1}, 0.9},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fused := fuse(tt.words, tt.vectors, item, 3)
			var got []int32
			for _, f := range fused {
				got = append(got, f.doc)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("fused %v, want %v", got, tt.want)
			}
			if fused[0].similarity != tt.similarity {
				t.Errorf("first match's similarity %v, want %v", fused[0].similarity, tt.similarity)
			}
		})
	}
}

// TestMeanCosine checks the mean cosine between passages of different items, computed from sums, against the
// mean over every pair; vectors need not be of unit length, and a zero vector counts for nothing.
func TestMeanCosine(t *testing.T) {
	const dims = 16
	items := [][][]float32{unitVectors(1, dims, 1), unitVectors(3, dims, 2), unitVectors(2, dims, 3), unitVectors(1, dims, 4)}
	for j := range items[2][1] {
		items[2][1][j] *= 3
	}
	items = append(items, [][]float32{make([]float32, dims)})
	var mc meanCosine
	for _, vs := range items {
		mc.addItem(vs)
	}
	var sum float64
	pairs := 0
	for a := range items {
		for b := range items {
			if a == b || len(items[b]) == 0 || b == len(items)-1 || a == len(items)-1 {
				continue
			}
			for _, u := range items[a] {
				for _, v := range items[b] {
					sum += cosine(u, v)
					pairs++
				}
			}
		}
	}
	if want := sum / float64(pairs); math.Abs(mc.value()-want) > 1e-9 {
		t.Errorf("mean %v, want %v", mc.value(), want)
	}
	var one meanCosine
	one.addItem(unitVectors(3, dims, 5))
	if one.value() != 0 {
		t.Errorf("one item: mean %v, want 0", one.value())
	}
}

func cosine(u, v []float32) float64 {
	var dot, uu, vv float64
	for i := range u {
		dot += float64(u[i]) * float64(v[i])
		uu += float64(u[i]) * float64(u[i])
		vv += float64(v[i]) * float64(v[i])
	}
	return dot / math.Sqrt(uu*vv)
}

// TestNearBaseRaisesThreshold checks that a knowledge base whose items are all near each other (as a model of
// another language sees them) answers by meaning only a question nearer its item than the items are to each
// other: a question at a cosine of 0.8 with every item, above DefaultMinSimilarity, is declined.
func TestNearBaseRaisesThreshold(t *testing.T) {
	const dims = 64
	// Each item is mostly a shared direction, so that any two have a cosine of about 0.9.
	shared := unitVectors(1, dims, 1)[0]
	own := unitVectors(3, dims, 2)
	near := func(weight float32, v []float32) []float32 {
		out := make([]float32, dims)
		for j := range out {
			out[j] = shared[j]*weight + v[j]*float32(math.Sqrt(float64(1-weight*weight)))
		}
		return out
	}
	items := []Item{{ID: "a", Title: "Anmeldung", Content: "Die Anmeldung ist online."},
		{ID: "b", Title: "Preise", Content: "Die Preise stehen hier."},
		{ID: "c", Title: "Zeiten", Content: "Wir sind immer da."}}
	for i := range items {
		items[i].Vectors = [][]float32{near(0.95, own[i])}
	}
	ix := NewIndexForLocale(items, "de")
	if mean := ix.vectors.mean; mean < 0.85 || mean > 0.95 {
		t.Fatalf("mean cosine %.3f, want about 0.9", mean)
	}
	for _, tt := range []struct {
		name   string
		vector []float32
		want   Kind
	}{
		{"as near as the items to each other", near(0.84, unitVectors(1, dims, 3)[0]), KindFallback},
		{"nearer one item", near(0.5, near(0.99, own[1])), KindAnswer},
	} {
		t.Run(tt.name, func(t *testing.T) {
			reply, err := Retrieval{}.Respond(t.Context(), Request{Message: "Kann ich mein Pferd mitbringen?", Index: ix, QueryVector: tt.vector})
			if err != nil {
				t.Fatal(err)
			}
			if reply.Kind != tt.want {
				t.Errorf("kind %v, want %v", reply.Kind, tt.want)
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
