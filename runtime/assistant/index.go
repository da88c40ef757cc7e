package assistant

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/parley-dev/parley/runtime/assistant/lang"
)

// minFuzzyLen is the shortest word that typo matching is tried for; shorter words have too many neighbours (the
// matches' weight, fuzzyFactor, is in weights.go).
const minFuzzyLen = 5

// Hit is an item found by a search with its BM25 relevance score.
type Hit struct {
	Item  Item
	Score float64
	// Confidence is how sure the retriever is, from 0 to 1, that the item answers the query (see confidence).
	Confidence float64
}

// Index is a BM25 index of a merchant's knowledge items over stemmed words of their titles, tags and content.
// It is built once per knowledge revision with NewIndex, never changes afterwards and is safe for concurrent use.
//
// Typo tolerance: a query word whose stem is not in the index (and that is at least minFuzzyLen letters long) is
// matched to the indexed words at Damerau-Levenshtein distance 1 (one letter added, removed, replaced, or two
// neighbours swapped) that start with the same letter, such as "retrun" to "return". Such a word is rare, so nothing
// is built for it ahead: its variants that keep the first letter are looked up in the indexed words when it is
// asked (see typoCandidates). Such matches count fuzzyFactor times as much as exact ones.
type Index struct {
	items []Item
	docs  []doc
	idf   []float64
	// postingDocs and postingWeights hold every term's postings, term after term: the documents term t occurs in
	// are postingDocs[postingsAt[t]:postingsAt[t+1]], with the term's precomputed BM25 weight in each at the same
	// positions of postingWeights. Two arrays, because a struct of the two would pad each posting to 16 bytes.
	postingDocs    []int32
	postingWeights []float64
	postingsAt     []int32
	// reversed lists the stems spelt backwards, in order, for matching compounds by their head (heads); only
	// indexes of languages that write compounds as one word keep it.
	reversed []string
	// alphabet holds the letters of the indexed words typo matching may find, after their first letter: the
	// only ones a variant of a query word needs to be tried with.
	alphabet []rune
	// pairKeys lists, in order, the pairs of terms (pairKey) of which the second directly follows the first,
	// stop words aside, in the title, a tag or the content of a document; the documents of pairKeys[i] are
	// pairDocs[pairAt[i]:pairAt[i+1]], in document order.
	pairKeys []uint64
	pairAt   []int32
	pairDocs []int32
	// cache is the vocabulary: it holds the stems of the indexed words and gives each stem its term ID, the
	// position in idf and postings.
	cache *stemCache
	// unknownIDF is the IDF a word found in no item would have.
	unknownIDF float64
	// questions holds the informative term IDs of each item's questions (Item.Questions), item by item, each
	// question's once, and questionOnly, document by document, the term IDs, in order, that a document (an
	// item's first passage) has only in its item's questions; both nil when no item has any.
	questions    [][][]int32
	questionOnly [][]int32
	// without are the heuristics the index does without (Options).
	without []Heuristic
	// vectors are the passages' embeddings, quantised; nil without any.
	vectors *vectorIndex
	// size is what Size returns, estimated once the index is built.
	size int64
	// scratch holds rank's per-document buffers between questions, so that a question allocates nothing per
	// item of the index.
	scratch sync.Pool
}

// doc is what the index keeps of one passage of an item besides the postings: an item is one passage, unless
// its content is longer than maxItemChars (see appendPassages).
type doc struct {
	// item is the position of the passage's item in items.
	item      int32
	sentences []sentence
	// title holds the term IDs of the title; it shares its array with the sentences' terms.
	title []int32
}

// sentence is one sentence of an item's content, a part of the item's Content, with the term IDs it contains.
type sentence struct {
	text  string
	terms []int32
}

// NewIndex builds an index of items written in English. The items are copied; the index never changes
// afterwards.
func NewIndex(items []Item) *Index { return NewIndexForLocale(items, "") }

// NewIndexForLocale builds an index of items written in the language of a BCP 47 locale, the merchant's widget
// locale: German ("de", "de-AT") is stemmed and searched as German, any other locale as English.
func NewIndexForLocale(items []Item, locale string) *Index {
	var b Builder
	return b.Build(items, locale)
}

// Builder builds indexes as NewIndexForLocale does, reusing its buffers from one build to the next: most of the
// garbage of a build is the growth of its buffers. A Builder is not safe for concurrent use; the zero value is
// ready to use.
type Builder struct {
	// Options are the resources and heuristics the indexes are built without; the zero value has them all.
	Options Options
	c       counter
}

// maxKeptPairs bounds the buffers a Builder keeps between builds: those of a knowledge base past about 3,000
// items of 400 characters are dropped, so that one large merchant does not leave megabytes behind for good.
const maxKeptPairs = 1 << 16

// Build builds an index of items written in the language of locale, as NewIndexForLocale.
func (b *Builder) Build(items []Item, locale string) *Index {
	l := lang.ForLocale(locale)
	if len(b.Options.WithoutResources) > 0 {
		l = l.Without(b.Options.WithoutResources...)
	}
	ix := &Index{
		items:   slices.Clone(items),
		docs:    make([]doc, 0, len(items)),
		cache:   newStemCache(l),
		without: slices.Clone(b.Options.WithoutHeuristics),
	}
	c := &b.c
	c.reset()
	defer c.release()
	// Room for the pairs of neighbouring words at once: grown by appending, the buffer of a large base was copied
	// a dozen times over, 43 of the 115 MB that building 10,000 items allocated.
	c.pairs = slices.Grow(c.pairs, textBytes(items)/bytesPerPair)
	// The vocabulary grows in the builder's buffers; the index gets arrays of the exact size once it is complete.
	ix.cache.words, ix.cache.wordIDs, ix.cache.stems = c.words[:0], c.wordIDs[:0], c.stems[:0]
	passages := make([]int, len(ix.items))
	for i, it := range ix.items {
		if len(it.Questions) > 0 {
			if ix.questions == nil {
				ix.questions = make([][][]int32, len(ix.items))
			}
			ix.questions[i] = questionTerms(ix.cache, it.Questions, c)
		}
		text := it.Content
		if !utf8.ValidString(text) {
			text = string([]rune(text)) // each invalid byte becomes U+FFFD, as tokenizing does
		}
		c.passages = appendPassages(c.passages[:0], text)
		passages[i] = len(c.passages)
		for p, passage := range c.passages {
			if p == 1 {
				// The listed questions are the item's, indexed with its first passage only: copied into each,
				// they would cost as many times what the plan's characters ceiling counts them for once.
				it.Questions = nil
			}
			ix.docs = append(ix.docs, ix.addDoc(int32(len(ix.docs)), int32(i), it, passage, c)) //nolint:gosec // far fewer than 2^31 passages
		}
	}
	ix.computeWeights(c)
	ix.quantize(passages)
	ix.collectPairs(c.pairs)
	ix.alphabet = typoAlphabet(ix.cache.words)
	if ix.cache.language().WritesCompounds() {
		ix.reversed = make([]string, len(ix.cache.stems))
		for i, s := range ix.cache.stems {
			ix.reversed[i] = reverse(s)
		}
		slices.Sort(ix.reversed)
	}
	ix.cache.writable = false
	vc := ix.cache
	c.words, c.wordIDs, c.stems = vc.words, vc.wordIDs, vc.stems
	vc.words, vc.wordIDs, vc.stems = slices.Clone(vc.words), slices.Clone(vc.wordIDs), slices.Clone(vc.stems)
	ix.size = ix.estimateSize()
	return ix
}

// bytesPerPair is about the fewest bytes of text that hold a pair of neighbouring informative words: 8.7 to 10.3
// in the evaluation bases and the benchmarks' items, stop words being skipped.
const bytesPerPair = 8

// textBytes is the length of the text of items that is indexed as words: titles, tags and content.
func textBytes(items []Item) int {
	n := 0
	for _, it := range items {
		n += len(it.Title) + len(it.Content)
		for _, tag := range it.Tags {
			n += len(tag)
		}
	}
	return n
}

// Len returns the number of items in the index.
func (ix *Index) Len() int {
	if ix == nil {
		return 0
	}
	return len(ix.items)
}

// Search returns up to k items relevant to query, best first.
func (ix *Index) Search(query string, k int) []Hit {
	matches := ix.rank(ix.parseQuery(query), k)
	hits := make([]Hit, len(matches))
	for i, m := range matches {
		hits[i] = Hit{Item: ix.items[ix.docs[m.doc].item], Score: m.score, Confidence: ix.confidence(m)}
	}
	return hits
}

// postingsOf returns the documents a term occurs in and its weights there.
func (ix *Index) postingsOf(id int32) (docs []int32, weights []float64) {
	from, to := ix.postingsAt[id], ix.postingsAt[id+1]
	return ix.postingDocs[from:to], ix.postingWeights[from:to]
}

// counter gathers the term frequencies of the documents while an index is built.
type counter struct {
	// tf holds the current document's weighted frequency of each term, and terms the terms it has, in order.
	tf    []int32
	terms []int32
	// docTerms holds each document's terms with their frequencies, document after document; the terms of
	// document d are docTerms[docAt[d]:docAt[d+1]].
	docTerms []termCount
	docAt    []int32
	// lengths holds each document's weighted length.
	lengths []int
	// refs collects a document's title and sentence term IDs.
	refs []int32
	// pairs holds each pair of neighbouring terms with the document it is in, in document order.
	pairs []pairDoc
	// words, wordIDs and stems hold the vocabulary of the last index while it was built (see stemCache).
	words, stems []string
	wordIDs      []int32
	// passages holds the passages of the item being indexed.
	passages []string
	// tokens and text hold the words and the informative terms of the text being indexed, compounds and joined
	// its compounds.
	tokens, compounds []string
	text, joined      []term
	// types holds the markers of the answer types of the text being indexed.
	types []string
}

// reset empties the counter for a new index, keeping its buffers.
func (c *counter) reset() {
	c.tf, c.terms, c.docTerms, c.docAt = c.tf[:0], c.terms[:0], c.docTerms[:0], c.docAt[:0]
	c.lengths, c.refs, c.pairs = c.lengths[:0], c.refs[:0], c.pairs[:0]
}

// release forgets the strings of the last build, which would keep its items' text alive, and drops the buffers
// when they are past maxKeptPairs.
func (c *counter) release() {
	if cap(c.pairs) > maxKeptPairs {
		*c = counter{}
		return
	}
	clear(c.words[:cap(c.words)])
	clear(c.stems[:cap(c.stems)])
	clear(c.passages[:cap(c.passages)])
	clear(c.tokens[:cap(c.tokens)])
	clear(c.compounds[:cap(c.compounds)])
	clear(c.text[:cap(c.text)])
	clear(c.joined[:cap(c.joined)])
}

// informative returns the informative words of text, in the counter's buffers: they are valid until the next call.
func (c *counter) informative(cache *stemCache, text string) []term {
	c.tokens = lang.AppendTokens(c.tokens[:0], text)
	c.text = cache.appendInformative(c.text[:0], c.tokens)
	return c.text
}

// joinedCompounds returns the compounds of text (lang.AppendCompounds) as terms, in the counter's buffers: they are
// valid until the next call.
func (c *counter) joinedCompounds(cache *stemCache, text string) []term {
	c.compounds = lang.AppendCompounds(c.compounds[:0], text)
	c.joined = cache.appendInformative(c.joined[:0], c.compounds)
	return c.joined
}

// pairDoc says that the pair of terms key is in document doc.
type pairDoc struct {
	key uint64
	doc int32
}

// termCount is a term's weighted frequency in a document.
type termCount struct {
	id, tf int32
}

// addDoc indexes passage d, a part of the content of item number item, with the item's title and tags: it adds
// its terms to the vocabulary, counts them in c, records its pairs of neighbouring words, and returns what the
// index keeps of it. The passage is tokenized once, sentence by sentence; its words are the words of its
// sentences, since sentences end only where words do.
func (ix *Index) addDoc(d, item int32, it Item, passage string, c *counter) doc {
	length := 0
	prev := int32(-1)
	l := ix.cache.language()
	priced := false // the title names prices (namesPrices)
	// count counts a term with weight and, when refs is set, appends its ID to c.refs unless it is there after
	// start.
	count := func(id, weight int32, refs bool, start int) {
		if n := int(id) + 1; n > len(c.tf) {
			c.tf = append(c.tf, make([]int32, n-len(c.tf))...) // new terms, those of listed questions among them
		}
		if c.tf[id] == 0 {
			c.terms = append(c.terms, id)
		}
		c.tf[id] += weight
		if refs && !slices.Contains(c.refs[start:], id) {
			c.refs = append(c.refs, id)
		}
	}
	// add counts the words and compounds of a text with weight, the words as neighbours of each other, and, when
	// refs is set, appends their IDs to c.refs, each once; it returns the end of c.refs. A compound is counted
	// besides its parts but adds nothing to the length: it is another spelling of words already counted.
	add := func(text string, weight int32, refs bool) int {
		start := len(c.refs)
		for _, t := range c.informative(ix.cache, text) {
			count(t.id, weight, refs, start)
			length += int(weight)
			if prev >= 0 {
				c.pairs = append(c.pairs, pairDoc{key: pairKey(prev, t.id), doc: d})
			}
			prev = t.id
		}
		for _, t := range c.joinedCompounds(ix.cache, text) {
			count(t.id, weight, refs, start)
		}
		// The answer types of which the text holds a value, as its compounds: no words of their own.
		c.types = l.AppendAnswerTypes(c.types[:0], c.tokens, text, priced)
		for _, m := range c.types {
			count(ix.cache.marker(m), weight, refs, start)
		}
		return len(c.refs)
	}
	c.refs = c.refs[:0]
	titleEnd := add(it.Title, titleWeight, true)
	priced = l.NamesPrices(c.tokens)
	for _, tag := range it.Tags {
		prev = -1
		add(tag, tagWeight, false)
	}
	prev = -1
	texts := lang.SplitSentences(passage)
	bounds := make([]int, len(texts)+1)
	bounds[0] = titleEnd
	for i, s := range texts {
		bounds[i+1] = add(s, 1, true)
	}
	refs := slices.Clone(c.refs)
	dc := doc{item: item, title: refs[:titleEnd:titleEnd]}
	// The listed questions last, so that the terms they alone bring are those not counted yet.
	known := len(c.terms)
	for _, question := range it.Questions {
		prev = -1
		add(question, questionWeight, false)
	}
	if len(c.terms) > known {
		ix.questionOnly = append(ix.questionOnly, make([][]int32, int(d)-len(ix.questionOnly))...)
		ix.questionOnly = append(ix.questionOnly, slices.Sorted(slices.Values(c.terms[known:])))
	}
	if len(texts) > 0 {
		dc.sentences = make([]sentence, len(texts))
		for i, s := range texts {
			dc.sentences[i] = sentence{text: s, terms: refs[bounds[i]:bounds[i+1]:bounds[i+1]]}
		}
	}
	c.docAt = append(c.docAt, int32(len(c.docTerms))) //nolint:gosec // far fewer than 2^31 postings
	for _, id := range c.terms {
		c.docTerms = append(c.docTerms, termCount{id: id, tf: c.tf[id]})
		c.tf[id] = 0
	}
	c.terms = c.terms[:0]
	c.lengths = append(c.lengths, length)
	return dc
}

// collectPairs fills pairKeys, pairAt and pairDocs with the pairs, each document once per pair.
func (ix *Index) collectPairs(pairs []pairDoc) {
	sortPairs(pairs, len(ix.cache.stems), len(ix.docs))
	keys, docs := 0, 0
	for i, p := range pairs {
		if i == 0 || p.key != pairs[i-1].key {
			keys++
			docs++
		} else if p.doc != pairs[i-1].doc {
			docs++
		}
	}
	ix.pairKeys = make([]uint64, 0, keys)
	ix.pairAt = make([]int32, 0, keys+1)
	ix.pairDocs = make([]int32, 0, docs)
	for i, p := range pairs {
		switch {
		case i == 0 || p.key != pairs[i-1].key:
			ix.pairKeys = append(ix.pairKeys, p.key)
			ix.pairAt = append(ix.pairAt, int32(len(ix.pairDocs))) //nolint:gosec // far fewer than 2^31 pairs
		case p.doc == pairs[i-1].doc:
			continue
		}
		ix.pairDocs = append(ix.pairDocs, p.doc)
	}
	ix.pairAt = append(ix.pairAt, int32(len(ix.pairDocs))) //nolint:gosec // far fewer than 2^31 pairs
}

// A pair packs into 64 bits, its two terms in 20 bits each and its document in 24, when the index has no more
// terms and documents than these bits hold: an index of up to some hundred thousand help pages.
const (
	packedTermBits = 20
	packedDocBits  = 24
)

// sortPairs sorts pairs by key, then document, of an index of terms terms and docs documents. Sorting the pairs
// packed into integers builds an index of 10,000 items 10 to 25% faster than comparing them as structs.
func sortPairs(pairs []pairDoc, terms, docs int) {
	if terms > 1<<packedTermBits || docs > 1<<packedDocBits {
		slices.SortFunc(pairs, func(a, b pairDoc) int {
			return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.doc, b.doc))
		})
		return
	}
	const termMask, docMask = 1<<packedTermBits - 1, 1<<packedDocBits - 1
	packed := make([]uint64, len(pairs))
	for i, p := range pairs {
		packed[i] = (p.key>>32)<<(packedTermBits+packedDocBits) | (p.key&termMask)<<packedDocBits | uint64(p.doc) //nolint:gosec // documents are non-negative
	}
	slices.Sort(packed)
	for i, x := range packed {
		pairs[i] = pairDoc{key: pairKey(int32(x>>(packedTermBits+packedDocBits)), int32(x>>packedDocBits&termMask)), doc: int32(x & docMask)}
	}
}

// pairDocsOf returns the documents in which the pair of terms key occurs, in document order.
func (ix *Index) pairDocsOf(key uint64) []int32 {
	i, ok := slices.BinarySearch(ix.pairKeys, key)
	if !ok {
		return nil
	}
	return ix.pairDocs[ix.pairAt[i]:ix.pairAt[i+1]]
}

// pairKey identifies an ordered pair of terms.
func pairKey(a, b int32) uint64 {
	return uint64(uint32(a))<<32 | uint64(uint32(b)) //nolint:gosec // term IDs are non-negative
}

// computeWeights fills idf and the postings with each term's full BM25 weight in each document, so that a search
// only adds numbers up. The postings are laid out term after term, each term's in document order.
func (ix *Index) computeWeights(c *counter) {
	n := float64(len(ix.docs))
	idfN := max(n, minCollection)
	total := 0
	for _, l := range c.lengths {
		total += l
	}
	avgLen := 1.0
	if total > 0 {
		avgLen = float64(total) / n
	}
	c.docAt = append(c.docAt, int32(len(c.docTerms))) //nolint:gosec // far fewer than 2^31 postings
	ix.postingsAt = make([]int32, len(ix.cache.stems)+1)
	for _, tc := range c.docTerms {
		ix.postingsAt[tc.id+1]++
	}
	ix.idf = make([]float64, len(ix.cache.stems))
	for id := range ix.idf {
		df := float64(ix.postingsAt[id+1])
		ix.idf[id] = math.Log(1 + (idfN-df+0.5)/(df+0.5))
		ix.postingsAt[id+1] += ix.postingsAt[id]
	}
	ix.postingDocs, ix.postingWeights = make([]int32, len(c.docTerms)), make([]float64, len(c.docTerms))
	next := slices.Clone(ix.postingsAt[:len(ix.cache.stems)])
	for d := range c.lengths {
		norm := bm25K1 * (1 - bm25B + bm25B*float64(c.lengths[d])/avgLen)
		for _, tc := range c.docTerms[c.docAt[d]:c.docAt[d+1]] {
			tf := float64(tc.tf)
			ix.postingDocs[next[tc.id]] = int32(d)
			ix.postingWeights[next[tc.id]] = ix.idf[tc.id] * tf * (bm25K1 + 1) / (tf + norm)
			next[tc.id]++
		}
	}
	ix.unknownIDF = math.Log(1 + (idfN+0.5)/0.5)
}

// typoAlphabet returns the letters that follow the first one in the words typo matching may find, in order.
func typoAlphabet(words []string) []rune {
	seen := make(map[rune]struct{})
	for _, w := range words {
		if !fuzzyWord(w) {
			continue
		}
		_, first := utf8.DecodeRuneInString(w)
		for _, r := range w[first:] {
			seen[r] = struct{}{}
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// fuzzyWord reports whether typo matching is tried for w, as a query word or as the indexed word it may find:
// words shorter than minFuzzyLen have too many neighbours, and a number with a wrong digit is another number.
func fuzzyWord(w string) bool {
	return utf8.RuneCountInString(w) >= minFuzzyLen && !lang.IsNumber(w)
}

// typoCandidates returns the term IDs of the indexed words at Damerau-Levenshtein distance 1 from w that start
// with the same letter. It looks up each variant of w that keeps its first letter (a letter deleted, two neighbours
// swapped, a letter of the alphabet replacing one or inserted), a few hundred map reads; when the index has fewer
// words than that, as with a large alphabet, it compares w with each of them instead. Both find the same words.
func (ix *Index) typoCandidates(w string) []int32 {
	if !fuzzyWord(w) {
		return nil
	}
	r := []rune(w)
	n, a := len(r), len(ix.alphabet)
	if variants := 2*n - 3 + (2*n-1)*a; variants > len(ix.cache.words) {
		return ix.scanTypos(w)
	}
	var ids []int32
	v := make([]rune, 0, n+1)
	buf := make([]byte, 0, len(w)+utf8.UTFMax)
	try := func(v []rune) {
		buf = buf[:0]
		for _, c := range v {
			buf = utf8.AppendRune(buf, c)
		}
		// The conversion does not escape: for a word of up to 32 bytes it allocates nothing.
		if id, ok := ix.cache.wordID(string(buf)); ok && !slices.Contains(ids, id) && fuzzyWord(string(buf)) {
			ids = append(ids, id)
		}
	}
	for i := 1; i < n; i++ {
		try(append(append(v[:0], r[:i]...), r[i+1:]...)) // deleted
		if i+1 < n && r[i] != r[i+1] {
			v = append(v[:0], r...)
			v[i], v[i+1] = v[i+1], v[i]
			try(v) // swapped
		}
		v = append(v[:0], r...)
		for _, c := range ix.alphabet {
			if c != r[i] {
				v[i] = c
				try(v) // replaced
			}
		}
	}
	for i := 1; i <= n; i++ {
		v = append(append(v[:0], r[:i]...), 0)
		v = append(v, r[i:]...)
		for _, c := range ix.alphabet {
			v[i] = c
			try(v) // inserted
		}
	}
	return ids
}

// scanTypos is typoCandidates by comparing w with every indexed word.
func (ix *Index) scanTypos(w string) []int32 {
	var ids []int32
	for i, cand := range ix.cache.words {
		if id := ix.cache.wordIDs[i]; !slices.Contains(ids, id) && fuzzyWord(cand) && sameFirstLetter(w, cand) && editDistanceOne(w, cand) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// sameFirstLetter reports whether a and b start with the same letter. Typos rarely hit the first letter, and
// requiring it avoids matching real words to their neighbours, such as "weather" to "leather".
func sameFirstLetter(a, b string) bool {
	ra, _ := utf8.DecodeRuneInString(a)
	rb, _ := utf8.DecodeRuneInString(b)
	return ra == rb
}

// editDistanceOne reports whether a and b differ by exactly one inserted, deleted or replaced letter, or by two
// swapped neighbouring letters.
func editDistanceOne(a, b string) bool {
	x, y := []rune(a), []rune(b)
	if len(x) < len(y) {
		x, y = y, x
	}
	if len(x)-len(y) > 1 {
		return false
	}
	i := 0
	for i < len(y) && x[i] == y[i] {
		i++
	}
	if i == len(y) {
		return len(x) != len(y) // identical strings are not at distance 1
	}
	if len(x) > len(y) {
		return slices.Equal(x[i+1:], y[i:])
	}
	if slices.Equal(x[i+1:], y[i+1:]) {
		return true // one replaced letter
	}
	return i+1 < len(x) && x[i] == y[i+1] && x[i+1] == y[i] && slices.Equal(x[i+2:], y[i+2:])
}
