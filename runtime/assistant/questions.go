package assistant

import "slices"

// Questions the merchant lists for an item (Item.Questions) are the knowledge base's own paraphrases: help pages
// say "Opening hours", visitors ask "when do you close on weekdays?". They count three ways:
//   - their words are indexed with the item, as its tags are (questionWeight);
//   - a question that names all of one of them is about the item, as one that names its title (titleShare,
//     namesTitle);
//   - a question that asks one of them, naming its words and bringing few of its own, is answered from the
//     item before anything else (asked): the merchant said so.
//
// How much they count is in weights.go (questionWeight, askedShare, listedCoverage).

// listedOnly reports whether term id is one document d has only in its item's listed questions. It is asked for
// each posting a question's words reach, and an item may list hundreds of words: a binary search.
func (ix *Index) listedOnly(d, id int32) bool {
	_, found := slices.BinarySearch(ix.questionOnlyOf(d), id)
	return found
}

// questionOnlyOf returns the term IDs document d has only in its item's listed questions, in order.
func (ix *Index) questionOnlyOf(d int32) []int32 {
	if int(d) >= len(ix.questionOnly) {
		return nil
	}
	return ix.questionOnly[d]
}

// questionTerms returns the informative term IDs of each of questions, each once, adding new ones to the
// vocabulary.
func questionTerms(cache *stemCache, questions []string, c *counter) [][]int32 {
	out := make([][]int32, 0, len(questions))
	for _, q := range questions {
		var ids []int32
		for _, t := range c.informative(cache, q) {
			if !slices.Contains(ids, t.id) {
				ids = append(ids, t.id)
			}
		}
		if len(ids) > 0 {
			out = append(out, ids)
		}
	}
	return out
}

// questionsOf returns the term IDs of the listed questions of document d's item.
func (ix *Index) questionsOf(d int32) [][]int32 {
	if ix.questions == nil {
		return nil
	}
	return ix.questions[ix.docs[d].item]
}

// questionMatch says how much of the listed questions of document d's item q names: named is the largest
// IDF-weighted share of one listed question's words that q names (as titleShare), asked whether q asks one of
// them (askedShare).
func (ix *Index) questionMatch(q query, d int32) (named float64, asked bool) {
	for _, ids := range ix.questionsOf(d) {
		share := ix.namedShare(q, ids)
		named = max(named, share)
		if share >= askedShare && q.weight > 0 && ix.foundShare(q, ids) >= askedShare {
			asked = true
		}
	}
	return named, asked
}

// namedShare is the IDF-weighted share of the terms ids that q names, each by its best match.
func (ix *Index) namedShare(q query, ids []int32) float64 {
	total, named := 0.0, 0.0
	for _, id := range ids {
		best := 0.0
		for _, qt := range q.terms {
			for _, a := range qt.alts {
				if a.id == id {
					best = max(best, a.factor)
				}
			}
		}
		total += ix.idf[id]
		named += best * ix.idf[id]
	}
	if total == 0 {
		return 0
	}
	return named / total
}

// foundShare is the IDF-weighted share of q's words, but the optional ones, that match one of the terms ids.
func (ix *Index) foundShare(q query, ids []int32) float64 {
	found := 0.0
	for _, qt := range q.terms {
		if qt.optional {
			continue
		}
		best := 0.0
		for _, a := range qt.alts {
			if slices.Contains(ids, a.id) {
				best = max(best, a.factor)
			}
		}
		found += qt.idf * best
	}
	return found / q.weight
}

// namesAll reports whether q names every one of the terms ids, by the word itself or one of its close matches
// (minTitleShare).
func namesAll(q query, ids []int32) bool {
	for _, id := range ids {
		named := slices.ContainsFunc(q.terms, func(qt queryTerm) bool {
			return slices.ContainsFunc(qt.alts, func(a alt) bool { return a.id == id && a.factor >= minTitleShare })
		})
		if !named {
			return false
		}
	}
	return true
}
