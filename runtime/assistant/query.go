package assistant

import (
	"slices"

	"github.com/parley-dev/parley/runtime/assistant/lang"
)

// alt is an index term a query word matches, with the share of the word's weight the match is worth.
type alt struct {
	id     int32
	factor float64
	// scale multiplies the term's BM25 weights: factor, further lowered when the term is rarer than the query
	// word itself, so that a synonym or a compound never counts for more than the word asked about.
	scale float64
}

// queryTerm is one informative word of a query with the index terms it matches.
type queryTerm struct {
	word string
	// alts are the index terms the word matches: its own stem (factor 1), its synonyms and derived forms, and,
	// when its own stem is unknown, the words one typo away and the compounds it is the head of.
	alts []alt
	// idf is how informative the word is: its IDF in the index, or for a word no item contains, the highest
	// possible IDF scaled by the word's rarity in its language (lang.Language.Rarity), or less when it is matched loosely
	// to a term of lower IDF.
	idf float64
	// numeric is true for words made of digits only.
	numeric bool
	// optional is set for a word an idiom put in the question ("refund" for "money back"): a guess at the words
	// help pages use, it counts for an item that has it but not against one that lacks it.
	optional bool
	// answerType is set for the marker of an answer type the question asks for (see lang/answertype.go), an optional
	// term that only reorders the documents the question's words found: a sentence giving times is no answer
	// to "when will I get my refund" unless it is about refunds.
	answerType bool
}

// query is a parsed search query.
type query struct {
	terms []queryTerm
	// pairs are the neighbouring query words both found in the index, with the bonus a document containing them
	// as neighbours earns.
	pairs []queryPair
	// weight is the sum of the idf of the terms but the optional ones, which a document must cover; optional is
	// that of the optional ones, which it may cover besides.
	weight, optional float64
}

// queryPair is two neighbouring query words.
type queryPair struct {
	key   uint64
	bonus float64
}

// match is a document's result for a query.
type match struct {
	doc   int32
	score float64
	// covered is the idf-weighted share of the query's words the document contains, from 0 to 1.
	covered float64
	// wordMatched is true when the document contains at least one non-numeric query word.
	wordMatched bool
	// asked is set when the query asks one of the questions listed for the document's item (see askedShare).
	asked bool
	// similarity is the cosine of the document's vector with the question's, when both have one; 0 otherwise.
	similarity float64
}

// parseQuery turns text into query terms, resolving each to index terms. Repeated stems count once.
func (ix *Index) parseQuery(text string) query {
	terms := ix.wordCache().queryTerms(text)
	// At most a pair and a term for each word.
	q := query{pairs: make([]queryPair, 0, len(terms)), terms: make([]queryTerm, 0, len(terms))}
	seen := make(map[string]bool)
	prev := int32(-1)
	var types []queryTerm
	story := ix.wordCache().language().StoryWords(text)
	for _, t := range terms {
		id, known := ix.stemID(t.stem)
		if lang.IsMarker(t.stem) {
			// An answer type the question asks for, which no pair holds; one the index lacks says nothing.
			if known && !seen[t.stem] {
				seen[t.stem] = true
				types = append(types, queryTerm{word: t.word, alts: []alt{{id: id, factor: 1, scale: answerTypeScale}},
					idf: ix.idf[id], optional: true, answerType: true})
			}
			continue
		}
		if known && prev >= 0 && ix.uses(Pairs) {
			bonus := pairBonus * min(ix.idf[prev], ix.idf[id])
			q.pairs = append(q.pairs, queryPair{key: pairKey(prev, id), bonus: bonus})
		}
		prev = -1
		if known {
			prev = id
		}
		if seen[t.stem] {
			continue
		}
		seen[t.stem] = true
		qt := ix.resolve(t)
		qt.optional = t.optional
		if slices.Contains(story, t.word) && !qt.exact() {
			qt.idf *= storyShare
		}
		q.add(qt)
		if pt, ok := ix.phrasalTerm(t); ok {
			q.add(pt)
		}
	}
	for _, qt := range types {
		q.add(qt) // last: rank counts them only for the documents the words found
	}
	return q
}

// wordCache returns the index's read-only stem cache; nil, which stems every word, for a nil index.
func (ix *Index) wordCache() *stemCache {
	if ix == nil {
		return nil
	}
	return ix.cache
}

// stemID returns the term ID of a stem, if the index has it.
func (ix *Index) stemID(stem string) (int32, bool) {
	if ix.Len() == 0 {
		return 0, false
	}
	return ix.cache.stemID(stem)
}

// resolve finds the index terms a query word matches: the word itself and the words related to it; for a word
// the index lacks, the looser matches that may explain it; then it scales each match by its worth and bounds the
// word's weight by how informative the language makes it.
func (ix *Index) resolve(t term) queryTerm {
	qt := queryTerm{word: t.word, numeric: lang.IsNumber(t.word)}
	if ix.Len() == 0 {
		return qt
	}
	known := ix.matchSelf(&qt, t)
	synonym := ix.matchRelated(&qt, t)
	rarity := 1.0 // for a word the base has, whose IDF in the base says how informative it is
	if !known {
		rarity = ix.matchUnknown(&qt, t)
	}
	ix.scaleMatches(&qt)
	if !synonym {
		// Nor does a common word the base lacks say more because it looks like one the base has ("spielen" like
		// "spielerisch" or "Beispiel"): when deciding whether the base explains the question (confidence), it
		// weighs no more than its rarity allows. A synonym says what the word means, and a match's weight in the
		// ranking (scale) is left as it is.
		qt.idf = min(qt.idf, ix.unknownIDF*rarity)
	}
	return qt
}

// matchSelf adds to qt the index terms that are the word itself: its stem and the stem of its other form
// (lang.Language.OtherForm). It reports whether the index has either; the word then weighs the first one's IDF,
// and otherwise the highest IDF there is.
func (ix *Index) matchSelf(qt *queryTerm, t term) bool {
	qt.idf = ix.unknownIDF
	id, known := ix.cache.stemID(t.stem)
	if known {
		qt.alts = append(qt.alts, alt{id: id, factor: 1})
		qt.idf = ix.idf[id]
	}
	if id, ok := ix.cache.otherForm(t.word); ok {
		qt.alts = addAlt(qt.alts, alt{id: id, factor: 1})
		if !known {
			known, qt.idf = true, ix.idf[id]
		}
	}
	return known
}

// matchRelated adds to qt the index terms related to the word whether the index has it or not: its synonyms and
// derived forms in the language. It reports whether a synonym was found.
func (ix *Index) matchRelated(qt *queryTerm, t term) (synonym bool) {
	l := ix.cache.language()
	for _, syn := range l.Synonyms(t.stem) {
		if id, ok := ix.cache.stemID(syn); ok {
			qt.alts = addAlt(qt.alts, alt{id: id, factor: synonymFactor})
			synonym = true
		}
	}
	for _, d := range l.Derived(t.stem) {
		if id, ok := ix.cache.stemID(d); ok {
			qt.alts = addAlt(qt.alts, alt{id: id, factor: derivedFactor})
		}
	}
	return synonym
}

// matchUnknown matches a word the index lacks to what may be another spelling of it (matchSpellings); the word
// weighs as its commonest match, or, unmatched, as the language makes it informative. It returns the word's rarity in the language (wordRarity).
func (ix *Index) matchUnknown(qt *queryTerm, t term) float64 {
	rarity, listed := ix.wordRarity(qt, t.word)
	ix.matchSpellings(qt, t, listed)
	for _, a := range qt.alts {
		qt.idf = min(qt.idf, ix.idf[a.id])
	}
	if len(qt.alts) == 0 {
		// A word the knowledge base has nothing for counts as unexplained as much as the language in general
		// makes it informative: "somewhere" or "even" in a paraphrase is not what the question is about,
		// "tattoo" or "casino" is.
		qt.idf *= rarity
	}
	return rarity
}

// wordRarity returns how informative the language makes a word the index lacks (lang.Language.Rarity), and
// whether the word is spelt right: a word of the language's frequency list is ("Wetter" is weather, not a typo
// of "weiter", and "house" no "horse").
func (ix *Index) wordRarity(qt *queryTerm, word string) (rarity float64, listed bool) {
	if qt.numeric || lang.ClockToken(word) {
		// A number or a time of day the base lacks ("12 rooms", "at 5am") is a detail of the question, not what
		// it is about: it counts neither for an item nor against one.
		return 0, true
	}
	return ix.cache.language().Rarity(word)
}

// matchSpellings adds to qt the index terms a word the index lacks may be another spelling of: the words one
// typo away, unless the word is spelt right (listed), and the compounds it may be the head of.
func (ix *Index) matchSpellings(qt *queryTerm, t term, listed bool) {
	if !listed && ix.uses(Typos) {
		for _, id := range ix.typoCandidates(t.word) {
			qt.alts = addAlt(qt.alts, alt{id: id, factor: fuzzyFactor})
		}
	}
	for _, id := range ix.heads(t.stem) {
		qt.alts = addAlt(qt.alts, alt{id: id, factor: headFactor})
	}
}

// scaleMatches sets the scale of each of qt's matches: the match's factor, lowered when its term is rarer than
// the word, so that a looser match never counts for more than the word asked about.
func (ix *Index) scaleMatches(qt *queryTerm) {
	for i, a := range qt.alts {
		qt.alts[i].scale = a.factor * min(1, qt.idf/ix.idf[a.id])
	}
}

// addAlt adds a to alts unless its term is there already; then it keeps the larger factor.
func addAlt(alts []alt, a alt) []alt {
	for i, b := range alts {
		if b.id == a.id {
			alts[i].factor = max(b.factor, a.factor)
			return alts
		}
	}
	return append(alts, a)
}

// exact reports whether the term matches an index term as itself: its own stem or its other form, not merely a
// word like it.
func (qt queryTerm) exact() bool {
	return slices.ContainsFunc(qt.alts, func(a alt) bool { return a.factor == 1 })
}

// docScore accumulates a document's result while ranking: covered sums the idf of the query words it contains,
// optional that of the optional ones among them. seen marks a document rank has listed in its scored documents.
type docScore struct {
	score, covered, optional float64
	// listed is the part of covered that words found only in the item's listed questions cover.
	listed            float64
	wordMatched, seen bool
}

// termScore is what a query term adds to each document that contains it, besides its hit there.
type termScore struct {
	idf, optional float64 // optional is the term's idf if it is optional, else 0
	word          bool    // the term is not a number
}

func scoreOf(qt queryTerm) termScore {
	t := termScore{idf: qt.idf, word: !qt.numeric}
	if qt.optional {
		t.optional = qt.idf
	}
	return t
}

// add adds a term's hit h to document d's score, appending d to scored when the document is new to it.
func (a *docScore) add(d int32, h termHit, t termScore, scored []int32) []int32 {
	if !a.seen {
		a.seen = true
		scored = append(scored, d)
	}
	a.score += h.weight
	a.covered += t.idf * h.factor
	if h.listed {
		a.listed += t.idf * h.factor
	}
	a.optional += t.optional
	if t.word {
		a.wordMatched = true
	}
	return scored
}

// termHit is a query term's best match in one document.
type termHit struct {
	weight, factor float64
	// listed is set when the term is one the document has only in its item's listed questions.
	listed bool
}

// rankScratch is rank's working memory: per-document accumulators, kept zero between uses, and the documents
// touched.
type rankScratch struct {
	acc     []docScore
	hits    []termHit
	touched []int32
	scored  []int32
}

// rank scores every document containing a query term and returns the best k, best first, those naming their
// title moved up (see byTitle).
func (ix *Index) rank(q query, k int) []match {
	if ix.Len() == 0 || k <= 0 || q.weight+q.optional == 0 {
		return nil
	}
	s, _ := ix.scratch.Get().(*rankScratch)
	if s == nil {
		s = &rankScratch{acc: make([]docScore, len(ix.docs)), hits: make([]termHit, len(ix.docs))}
	}
	defer ix.scratch.Put(s)
	acc, scored := s.acc, s.scored[:0]
	for _, qt := range q.terms {
		t := scoreOf(qt)
		if qt.answerType {
			scored = ix.addAnswerType(qt, t, acc, scored)
			continue
		}
		if len(qt.alts) == 1 {
			// One index term: each of its documents once, its hit read straight off the postings, without
			// termHits' per-document best.
			a := qt.alts[0]
			docs, weights := ix.postingsOf(a.id)
			for i, d := range docs {
				var h termHit
				if w := weights[i] * a.scale; w > 0 {
					h = termHit{weight: w, factor: a.factor, listed: ix.listedOnly(d, a.id)}
				}
				scored = acc[d].add(d, h, t, scored)
			}
			continue
		}
		s.touched = ix.termHits(qt, s.hits, s.touched[:0])
		for _, d := range s.touched {
			scored = acc[d].add(d, s.hits[d], t, scored)
			s.hits[d] = termHit{}
		}
	}
	for _, p := range q.pairs {
		for _, d := range ix.pairDocsOf(p.key) {
			scored = acc[d].add(d, termHit{weight: p.bonus}, termScore{}, scored)
		}
	}
	top := topK(acc, scored, ix.docs, q.weight, k+titleCandidates)
	for _, d := range scored {
		acc[d] = docScore{}
	}
	s.scored = scored
	return ix.byTitle(q, top, k)
}

// addAnswerType adds an answer type's term qt, of score t, to the documents already scored, and only to them.
func (ix *Index) addAnswerType(qt queryTerm, t termScore, acc []docScore, scored []int32) []int32 {
	a := qt.alts[0]
	docs, weights := ix.postingsOf(a.id)
	for i, d := range docs {
		if acc[d].seen {
			scored = acc[d].add(d, termHit{weight: weights[i] * a.scale, factor: a.factor}, t, scored)
		}
	}
	return scored
}

// titleCandidates is how many documents beyond those asked for may move up by their title (see titleBonus).
const titleCandidates = 5

// byTitle returns the k best of top, reordered by their scores plus the title bonus (see titleBonus), for the
// title or for the listed question of the item q names most of; first of all come the matches whose listed
// question q asks (see askedShare). The scores themselves, which confidence and citing compare, stay BM25's.
func (ix *Index) byTitle(q query, top []match, k int) []match {
	// Each document's order once, not once a comparison; sorted by insertion, stable as slices.SortStableFunc
	// (top holds k+titleCandidates documents at most).
	var buf [2 * (candidates + titleCandidates)]float64
	order := buf[:0]
	for i, m := range top {
		named, asked := ix.questionMatch(q, m.doc)
		top[i].asked = asked && ix.uses(Asked)
		order = append(order, m.score)
		if ix.uses(TitleBonus) {
			order[i] += titleBonus * ix.unknownIDF * max(ix.titleShare(q, m.doc), named)
		}
	}
	for i := 1; i < len(top); i++ {
		for j := i; j > 0 && ahead(top[j], order[j], top[j-1], order[j-1]); j-- {
			top[j], top[j-1] = top[j-1], top[j]
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
	return top[:min(k, len(top))]
}

// ahead reports whether match a, ordered by x, goes before match b, ordered by y: a asks its item's listed
// question and b does not, or both or neither do and x is larger.
func ahead(a match, x float64, b match, y float64) bool {
	if a.asked != b.asked {
		return a.asked
	}
	return x > y
}

// titleShare is the IDF-weighted share of the informative words of document d's title that q names, each by its
// best match.
func (ix *Index) titleShare(q query, d int32) float64 { return ix.namedShare(q, ix.docs[d].title) }

// termHits records in hits a query term's BM25 contribution to each document containing it, the best over the
// index terms it matches, and appends the documents to touched.
func (ix *Index) termHits(qt queryTerm, hits []termHit, touched []int32) []int32 {
	for _, a := range qt.alts {
		docs, weights := ix.postingsOf(a.id)
		for i, d := range docs {
			w := weights[i] * a.scale
			if hits[d].weight == 0 {
				touched = append(touched, d)
			}
			if w > hits[d].weight {
				hits[d] = termHit{weight: w, factor: a.factor, listed: ix.listedOnly(d, a.id)}
			}
		}
	}
	return touched
}

// topK returns the k best of the scored documents (in any order), best first, each the best passage of a
// different item, with the share of weight and of the optional words it contains that it covers; ties go to the
// earlier document. Comparing document numbers on ties, rather than sorting the scored documents first, keeps the
// order of the result independent of the order of scored.
func topK(acc []docScore, scored []int32, docs []doc, weight float64, k int) []match {
	top := make([]match, 0, k+1)
	for _, d := range scored {
		a := &acc[d]
		if a.score <= 0 || (len(top) == k && !better(a.score, d, top[k-1])) {
			continue
		}
		if j := slices.IndexFunc(top, func(m match) bool { return docs[m.doc].item == docs[d].item }); j >= 0 {
			if !better(a.score, d, top[j]) {
				continue // the item's better passage is in already
			}
			top = slices.Delete(top, j, j+1)
		}
		i := len(top)
		for i > 0 && better(a.score, d, top[i-1]) {
			i--
		}
		covered := 0.0
		if w := weight + a.optional; w > 0 { // zero for a document matching only words of no weight
			covered = (a.covered - (1-listedCoverage)*a.listed) / w
		}
		top = slices.Insert(top, i, match{doc: d, score: a.score, covered: covered, wordMatched: a.wordMatched})
		if len(top) > k {
			top = top[:k]
		}
	}
	return top
}

// better reports whether document d with score ranks before m: a higher score, or the same and an earlier
// document.
func better(score float64, d int32, m match) bool {
	return score > m.score || (score == m.score && d < m.doc)
}

// add appends a term to q and its weight to q's.
func (q *query) add(qt queryTerm) {
	q.terms = append(q.terms, qt)
	if qt.optional {
		q.optional += qt.idf
	} else {
		q.weight += qt.idf
	}
}

// phrasalTerm returns the optional query term of the phrasal verb that t begins ("work out"): the indexed
// words of its meaning ("exercise"), each at phrasalFactor. Like a word an idiom puts in, it counts for an item
// that has one of them but not against one that has none: a phrasal verb has several senses, and the question
// may mean another.
func (ix *Index) phrasalTerm(t term) (queryTerm, bool) {
	qt := queryTerm{word: t.word, optional: true}
	for _, p := range t.phrasal {
		if id, ok := ix.cache.stemID(p); ok {
			qt.alts = addAlt(qt.alts, alt{id: id, factor: phrasalFactor})
		}
	}
	if len(qt.alts) == 0 {
		return qt, false
	}
	// It weighs as its commonest word, as a typo matching several words does.
	qt.idf = ix.idf[qt.alts[0].id]
	for _, a := range qt.alts[1:] {
		qt.idf = min(qt.idf, ix.idf[a.id])
	}
	for i, a := range qt.alts {
		qt.alts[i].scale = a.factor * min(1, qt.idf/ix.idf[a.id])
	}
	return qt, true
}
