package assistant

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"unicode/utf8"
)

// Retrieval by meaning: when a model provider embeds the knowledge (runtime/assistant/embeddings), each passage
// of the index carries its vector, and a question's vector finds the passages nearest in meaning, whatever words
// or language they share. The two rankings are fused (fuse), and either may vouch for an answer (answerable).

// EmbeddingTexts are the texts of an item that are embedded, one per passage of the index, in order: the
// passage with the item's title before it, and the first with the questions listed for the item, whose words
// count for the item as its title's do. An item's vectors (Item.Vectors) are of these texts.
func EmbeddingTexts(it Item) []string {
	text := it.Content
	if !utf8.ValidString(text) {
		text = string([]rune(text))
	}
	passages := appendPassages(nil, text)
	out := make([]string, len(passages))
	for i, p := range passages {
		var b strings.Builder
		b.WriteString(it.Title)
		if i == 0 {
			for _, q := range it.Questions {
				b.WriteString("\n")
				b.WriteString(q)
			}
		}
		b.WriteString("\n")
		b.WriteString(p)
		out[i] = strings.TrimSpace(b.String())
	}
	return out
}

// vectorIndex holds the passages' vectors quantised to int8: each vector, of unit length, is scaled so that its
// largest value is 127, and the scale kept to undo it. A vector takes a byte a dimension instead of four, and
// the cosine it gives is within about 1% of the exact one, far below what tells a near passage from a far one.
type vectorIndex struct {
	dims int
	// values holds the docs' quantised vectors one after another, dims each; a doc without a vector has zeros.
	values []int8
	// scales are the docs' factors back to unit length; 0 for a doc without a vector.
	scales []float32
	// mean is the mean cosine between passages of different items: how near the model puts any two texts of
	// this knowledge base. An answer by meaning needs more (see Retrieval.similarityThreshold).
	mean float64
}

// quantize adds the vectors of ix's documents from their items' Vectors: an item's vectors are used when there is
// one for each of its passages, all of the index's length, and ignored otherwise (the item was embedded before
// it changed, and is being embedded again). The items keep none of the floats.
func (ix *Index) quantize(passages []int) {
	dims := 0
	for _, it := range ix.items {
		if len(it.Vectors) > 0 {
			dims = len(it.Vectors[0])
			break
		}
	}
	if dims == 0 {
		return
	}
	vx := &vectorIndex{dims: dims, values: make([]int8, len(ix.docs)*dims), scales: make([]float32, len(ix.docs))}
	var mean meanCosine
	d := 0
	for i := range ix.items {
		vs := ix.items[i].Vectors
		ix.items[i].Vectors = nil
		n := passages[i]
		if len(vs) == n && !slices.ContainsFunc(vs, func(v []float32) bool { return len(v) != dims }) {
			for p, v := range vs {
				vx.scales[d+p] = quantizeInto(vx.values[(d+p)*dims:(d+p+1)*dims], v)
			}
			mean.addItem(vs)
		}
		d += n
	}
	vx.mean = mean.value()
	ix.vectors = vx
}

// meanCosine computes the mean cosine between vectors of different items in one pass, without comparing each
// pair: the sum of the cosines of all pairs of unit vectors is half of |sum|^2 less the vectors' own squares,
// and the pairs within an item are taken out the same way, item by item.
type meanCosine struct {
	// total is the sum of all the unit vectors, item the sum of the current item's.
	total, item []float64
	// within is the sum of |item's sum|^2 over the items; n the vectors, nn the sum of each item's count squared.
	within float64
	n, nn  int
}

// addItem adds the vectors of an item's passages, all of one length; a vector of no length counts for nothing.
func (mc *meanCosine) addItem(vs [][]float32) {
	if len(vs) == 0 {
		return
	}
	if mc.total == nil {
		mc.total, mc.item = make([]float64, len(vs[0])), make([]float64, len(vs[0]))
	}
	sum := mc.item
	clear(sum)
	k := 0
	for _, v := range vs {
		norm := length(v)
		if norm == 0 {
			continue
		}
		for j, x := range v {
			sum[j] += float64(x) / norm
		}
		k++
	}
	var sq float64
	for j, x := range sum {
		mc.total[j] += x
		sq += x * x
	}
	mc.within += sq
	mc.n += k
	mc.nn += k * k
}

// value is the mean, 0 when fewer than two items have vectors.
func (mc *meanCosine) value() float64 {
	pairs := mc.n*mc.n - mc.nn
	if pairs <= 0 {
		return 0
	}
	var sq float64
	for _, x := range mc.total {
		sq += x * x
	}
	return (sq - mc.within) / float64(pairs)
}

// quantizeInto writes v, scaled to a largest value of 127, into out and returns the factor back to v.
func quantizeInto(out []int8, v []float32) float32 {
	var peak float32
	for _, x := range v {
		peak = max(peak, float32(math.Abs(float64(x))))
	}
	if peak == 0 || math.IsNaN(float64(peak)) || math.IsInf(float64(peak), 0) {
		return 0
	}
	f := 127 / peak
	for i, x := range v {
		out[i] = int8(math.Round(float64(x * f)))
	}
	return peak / 127
}

// HasVectors reports whether any passage of the index has a vector, of dims values: only then is a question worth
// embedding.
func (ix *Index) HasVectors() (dims int, ok bool) {
	if ix == nil || ix.vectors == nil {
		return 0, false
	}
	return ix.vectors.dims, true
}

// probe is a question's unit vector quantised as the passages' are, so that a cosine is a dot product of
// bytes, summed in integers: four times faster than in floats.
type probe struct {
	values []int8
	scale  float32
}

func newProbe(q []float32) probe {
	p := probe{values: make([]int8, len(q))}
	p.scale = quantizeInto(p.values, q)
	return p
}

// similarity is the cosine of document d's vector with the question's, 0 when d has none.
func (vx *vectorIndex) similarity(d int32, q probe) float64 {
	scale := vx.scales[d]
	if scale == 0 {
		return 0
	}
	v := vx.values[int(d)*vx.dims : (int(d)+1)*vx.dims]
	w := q.values[:len(v)]
	var dot int32
	i := 0
	for ; i+4 <= len(v); i += 4 {
		dot += int32(v[i])*int32(w[i]) + int32(v[i+1])*int32(w[i+1]) + int32(v[i+2])*int32(w[i+2]) + int32(v[i+3])*int32(w[i+3])
	}
	for ; i < len(v); i++ {
		dot += int32(v[i]) * int32(w[i])
	}
	return float64(float32(dot) * scale * q.scale)
}

// nearest returns the k documents nearest to the unit vector q, best first, each the nearest passage of a
// different item: an exact search, a dot product with every passage of the merchant's, about a millisecond per
// 1,000 passages of 512 dimensions (BenchmarkVectorSearch).
func (ix *Index) nearest(q probe, k int) []match {
	vx := ix.vectors
	top := make([]match, 0, k+1)
	for d := range ix.docs {
		sim := vx.similarity(int32(d), q)
		if vx.scales[d] == 0 || (len(top) == k && sim <= top[k-1].similarity) {
			continue
		}
		if j := slices.IndexFunc(top, func(m match) bool { return ix.docs[m.doc].item == ix.docs[d].item }); j >= 0 {
			if sim <= top[j].similarity {
				continue
			}
			top = slices.Delete(top, j, j+1)
		}
		i := len(top)
		for i > 0 && sim > top[i-1].similarity {
			i--
		}
		top = slices.Insert(top, i, match{doc: int32(d), similarity: sim})
		if len(top) > k {
			top = top[:k]
		}
	}
	return top
}

// unitQuery is v scaled to length 1, or nil when v does not fit the index's vectors.
func (ix *Index) unitQuery(v []float32) []float32 {
	dims, ok := ix.HasVectors()
	if !ok || len(v) != dims {
		return nil
	}
	norm := float32(length(v))
	if norm == 0 {
		return nil
	}
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = x / norm
	}
	return out
}

// length is v's Euclidean length, 0 when it has none: all zeros, or a NaN or infinite value.
func length(v []float32) float64 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if math.IsNaN(sum) || math.IsInf(sum, 0) {
		return 0
	}
	return math.Sqrt(sum)
}

// search ranks the documents for q, and when vector is the question's embedding, fuses that ranking with the
// passages nearest in meaning (fuse). Without a vector, or one that does not fit the index, it is the word
// ranking alone.
func (ix *Index) search(q query, vector []float32, k int) []match {
	unit := ix.unitQuery(vector)
	if unit == nil {
		return ix.rank(q, k)
	}
	p := newProbe(unit)
	words := ix.rank(q, fuseDepth)
	for i := range words {
		words[i].similarity = ix.vectors.similarity(words[i].doc, p)
	}
	return fuse(words, ix.nearest(p, fuseDepth), func(d int32) int32 { return ix.docs[d].item }, k)
}

// fuse merges the word ranking and the vector ranking by a convex combination of their scores, each normalised
// by its theoretical range (Bruch, Gai and Ingber, "An Analysis of Fusion Functions for Hybrid Retrieval", 2022):
// an item scores fusionWordsWeight times its BM25 score over the best one's, plus the rest times its cosine with
// the question, the nearest of its passages'. Scores, not ranks, are combined, so that a model that puts every
// text near every other (an English model on a German knowledge base) moves the word ranking little, while one
// that tells an item from the others clearly moves it much. A match found by words keeps what words said of it
// (its score, coverage); one found by meaning alone has only its similarity. Ties go to the word ranking's order.
func fuse(words, vectors []match, item func(int32) int32, k int) []match {
	type fused struct {
		m     match
		words float64
		order int
	}
	var best float64
	for _, m := range words {
		best = max(best, m.score)
	}
	var all []fused
	at := map[int32]int{} // item to its place in all
	for r, m := range words {
		f := fused{m: m, order: r}
		if best > 0 {
			f.words = m.score / best
		}
		at[item(m.doc)] = len(all)
		all = append(all, f)
	}
	for r, m := range vectors {
		if i, ok := at[item(m.doc)]; ok {
			all[i].m.similarity = max(all[i].m.similarity, m.similarity)
			continue
		}
		at[item(m.doc)] = len(all)
		all = append(all, fused{m: m, order: len(words) + r})
	}
	score := func(f fused) float64 {
		return fusionWordsWeight*f.words + (1-fusionWordsWeight)*f.m.similarity
	}
	slices.SortStableFunc(all, func(a, b fused) int {
		if c := cmp.Compare(score(b), score(a)); c != 0 {
			return c
		}
		return a.order - b.order
	})
	out := make([]match, 0, min(k, len(all)))
	for _, f := range all[:min(k, len(all))] {
		out = append(out, f.m)
	}
	return out
}

// SearchWith returns up to k items relevant to query, best first, the word ranking fused with the passages
// nearest to vector, the query's embedding, when the index has vectors of its length; the word ranking alone
// otherwise, as Search.
func (ix *Index) SearchWith(query string, vector []float32, k int) []Hit {
	matches := ix.search(ix.parseQuery(query), vector, k)
	hits := make([]Hit, len(matches))
	for i, m := range matches {
		hits[i] = Hit{Item: ix.items[ix.docs[m.doc].item], Score: m.score, Confidence: ix.confidence(m)}
	}
	return hits
}

// StandaloneQuestion is what a message asks once a follow-up ("and how long does it take?") is made to stand on
// its own: the message with the visitor's previous question, whose subject it leaves out. It is what the offline
// ranking searches for, and what is embedded for a search by meaning. Any other message stands as it is.
func StandaloneQuestion(message string, history []Turn) string {
	return searchText(Request{Message: message, History: history})
}
