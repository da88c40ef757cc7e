package assistant

import (
	"cmp"
	"slices"

	"github.com/parley-dev/parley/runtime/assistant/lang"
)

// Matching by meaning: a question word no item contains, nor a typo or a longer form of it, is matched to the
// indexed words nearest to it in meaning by the cosine similarity of their word vectors ("voucher" to "coupon",
// "employees" to "staff"). Such a match is worth a share of an exact one that grows with the similarity (see
// unrelatedSimilarity and minSimilarity in weights.go), both in the item's score and in how much of the question
// the item explains, which the decision to decline rests on: a paraphrase is explained in part by the knowledge
// base's own words, a question about something else is not.

// maxNeighbours is the most indexed terms a question word is matched to by meaning.
const maxNeighbours = 3

// meaningShare is the share of an exact match a word at a similarity is worth: from 0 at unrelatedSimilarity
// up to 1 for the same meaning.
func meaningShare(similarity float64) float64 {
	return max(0, (similarity-unrelatedSimilarity)/(1-unrelatedSimilarity))
}

// neighbour is an indexed term near a word in meaning.
type neighbour struct {
	id         int32
	similarity float64
}

// rowTerm is a term of an index's vocabulary with the row of its vector in the word vectors.
type rowTerm struct {
	row, id int32
}

// termVectors returns the terms of the vocabulary that have a vector in vecs, ordered by row, then ID: each with
// the row of the commonest of its indexed words and its stem that the table has. A term with one of the
// commonest words of English ("even", "well", "thing") is left out: such words are near many others and say
// nothing about what a question is about, so they are nobody's neighbours.
func termVectors(c *stemCache, vecs *lang.Vectors) []rowTerm {
	rows := make([]int32, len(c.stems))
	for id, s := range c.stems {
		rows[id] = -1
		if r, ok := vecs.Find(s); ok {
			rows[id] = r
		}
	}
	for i, w := range c.words {
		id := c.wordIDs[i]
		// The table lists words most frequent first, so the lowest row is the commonest form.
		if r, ok := vecs.Find(w); ok && (rows[id] < 0 || r < rows[id]) {
			rows[id] = r
		}
	}
	l := c.language()
	for i, w := range c.words {
		if r, _ := l.Rarity(w); r == 0 {
			rows[c.wordIDs[i]] = -1
		}
	}
	var out []rowTerm
	for id, r := range rows {
		if r >= 0 {
			out = append(out, rowTerm{row: r, id: int32(id)})
		}
	}
	slices.SortFunc(out, func(a, b rowTerm) int { return cmp.Or(cmp.Compare(a.row, b.row), cmp.Compare(a.id, b.id)) })
	return out
}

// neighbours returns the indexed terms nearest to word in meaning, with a similarity of at least minSimilarity,
// most similar first, at most maxNeighbours. One of the commonest words of English has none. The word vectors
// list each word's nearest words, so that only the terms of those words are compared with it.
func (ix *Index) neighbours(word string) []neighbour {
	if ix.vectorTerms == nil {
		return nil
	}
	l := ix.cache.language()
	if r, _ := l.Rarity(word); r == 0 {
		return nil
	}
	vecs := l.Vectors()
	row, ok := vecs.Row(word)
	if !ok {
		return nil
	}
	var near []rowTerm
	add := func(r int32) {
		i, _ := slices.BinarySearchFunc(ix.vectorTerms, r, func(t rowTerm, r int32) int { return cmp.Compare(t.row, r) })
		for ; i < len(ix.vectorTerms) && ix.vectorTerms[i].row == r; i++ {
			near = append(near, ix.vectorTerms[i])
		}
	}
	add(row)
	vecs.Nearest(row, add)
	// In the order of their IDs, the first of equally similar terms is kept.
	slices.SortFunc(near, func(a, b rowTerm) int { return cmp.Compare(a.id, b.id) })
	var out []neighbour
	for _, t := range near {
		s := vecs.Cosine(row, t.row)
		if s < minSimilarity || (len(out) == maxNeighbours && s <= out[len(out)-1].similarity) {
			continue
		}
		i := len(out)
		for i > 0 && s > out[i-1].similarity {
			i--
		}
		out = slices.Insert(out, i, neighbour{id: t.id, similarity: s})
		if len(out) > maxNeighbours {
			out = out[:maxNeighbours]
		}
	}
	return out
}
