package assistant

import (
	"strings"

	"github.com/parley-dev/parley/runtime/assistant/internal/strtab"
	"github.com/parley-dev/parley/runtime/assistant/lang"
)

// term is an informative word of a text: its surface form, its stem and the stem's term ID in the index, or -1
// when the index has no such stem.
type term struct {
	word string
	stem string
	id   int32
	// optional is set for a query word an idiom put in: "refund" for "money back", or the marker of the answer
	// type a phrase asks for (see queryTerms).
	optional bool
	// phrasal holds, for a verb the question uses with a particle ("work out"), the stems of the words of the
	// phrasal verb's meaning ("exercise"; see lang.Language.Phrasal).
	phrasal []string
}

// stemCache is the vocabulary of an index in its language: the stem of each indexed word, as a term ID, and the
// term ID of each stem. It remembers the stems because stemming is the slowest part of building an index.
// NewIndex fills it; afterwards it is only read, so searches may share it. A nil cache stems every English word.
type stemCache struct {
	lang *lang.Language
	// words lists the indexed words, and wordIDs the term ID of each word's stem; wordTable finds a word.
	words     []string
	wordIDs   []int32
	wordTable strtab.Table
	// stems lists the stems, each at its term ID; stemTable finds a stem.
	stems     []string
	stemTable strtab.Table
	writable  bool
}

func newStemCache(l *lang.Language) *stemCache {
	return &stemCache{lang: l, wordTable: strtab.New(), stemTable: strtab.New(), writable: true}
}

// wordID returns the term ID of an indexed word's stem.
func (c *stemCache) wordID(word string) (int32, bool) {
	at, ok := c.wordTable.Find(c.words, word)
	if !ok {
		return -1, false
	}
	return c.wordIDs[at], true
}

// stemID returns the term ID of a stem.
func (c *stemCache) stemID(stem string) (int32, bool) { return c.stemTable.Find(c.stems, stem) }

// language returns the cache's language; English for a nil cache.
func (c *stemCache) language() *lang.Language {
	if c == nil {
		return lang.English
	}
	return c.lang
}

// stem returns the stem of word and its term ID, from the cache when it is there. While the cache is writable,
// a new word is added, and a new stem given the next term ID.
func (c *stemCache) stem(word string) (string, int32) {
	if c == nil {
		return lang.English.Stem(word), -1
	}
	if id, ok := c.wordID(word); ok {
		return c.stems[id], id
	}
	s := c.lang.Stem(word)
	id, ok := c.stemID(s)
	if c.writable {
		if !ok {
			id = c.addStem(s)
		}
		c.words, c.wordIDs = append(c.words, word), append(c.wordIDs, id)
		c.wordTable.Added(c.words)
	} else if !ok {
		id = -1
	}
	return s, id
}

// marker returns the term ID of an answer type's marker (see lang/answertype.go), which is its own stem; while the
// cache is writable, a new marker is given the next term ID. It is -1 for a marker the index lacks.
func (c *stemCache) marker(m string) int32 {
	if c == nil {
		return -1
	}
	id, ok := c.stemID(m)
	switch {
	case ok:
		return id
	case c.writable:
		return c.addStem(m)
	default:
		return -1
	}
}

// addStem gives a new stem the next term ID, while the cache is writable.
func (c *stemCache) addStem(s string) int32 {
	id := int32(len(c.stems)) //nolint:gosec // a knowledge base has far fewer than 2^31 distinct words
	c.stems = append(c.stems, s)
	c.stemTable.Added(c.stems)
	return id
}

// maxQueryWords is the most words of a message a search reads: the first and the last half of them. The longest
// question of the evaluation bases has 38 words; a message of 4,000 characters may have 700, which took 5 to 12 ms
// to parse over 1,000 items. A rambling message asks at its start or at its end, which the two halves keep.
const maxQueryWords = 80

// boundWords keeps the first and the last maxQueryWords/2 of words when there are more. The two words at the cut
// become neighbours, as two words do across the stop words a query drops.
func boundWords(words []string) []string { return keepEnds(words, maxQueryWords) }

// keepEnds keeps the first and the last n/2 elements of s when it has more than n.
func keepEnds[T any](s []T, n int) []T {
	if len(s) <= n {
		return s
	}
	return append(s[:n/2:n/2], s[len(s)-n/2:]...)
}

// queryTerms is terms for a visitor's question: the language's common phrasings (idioms) are first rewritten into
// the words help pages use, or followed by the marker of the answer type they ask for, which are marked optional
// (see queryTerm).
func (c *stemCache) queryTerms(text string) []term {
	l := c.language()
	words, fromIdiom := l.RewriteIdioms(boundWords(lang.Tokenize(text)))
	out := make([]term, 0, len(words))
	for i := range words {
		n := len(out)
		out = c.appendInformative(out, words[i:i+1])
		if fromIdiom != nil && fromIdiom[i] {
			for j := n; j < len(out); j++ {
				out[j].optional = true
			}
		}
		if len(out) == n+1 && i+1 < len(words) {
			out[n].phrasal = l.Phrasal(out[n].stem, words[i+1])
		}
		if len(out) > n && out[n].id < 0 && c != nil && l.WritesCompounds() {
			if inf, ok := c.zuInfinitive(out[n].word); ok {
				out[n] = inf
			} else if parts := c.splitCompound(out[n].word); parts != nil {
				out = append(out[:n], parts...)
			}
		}
	}
	return out
}

// appendInformative appends the informative words of a list of words to out, in order, with their stems; stop
// words are left out.
func (c *stemCache) appendInformative(out []term, words []string) []term {
	l := c.language()
	for _, w := range words {
		if !l.Informative(w) {
			continue
		}
		if lang.IsMarker(w) {
			out = append(out, term{word: w, stem: w, id: c.marker(w)})
			continue
		}
		s, id := c.stem(w)
		out = append(out, term{word: w, stem: s, id: id})
	}
	return out
}

// An item whose content is longer than maxItemChars, a few paragraphs, is indexed as passages of about
// passageChars: BM25 would otherwise weigh a word the long item uses once as little as its length makes it, and
// the answer quotes the passage that matches.
const (
	maxItemChars = 1500
	passageChars = 800
)

// appendPassages appends to out the passages of an item's content, parts of text: text itself when it is at most
// maxItemChars long, else runs of whole sentences of up to passageChars (a longer sentence is a passage alone),
// ended at the end of a paragraph when one ends past half that.
func appendPassages(out []string, text string) []string {
	if len(text) <= maxItemChars {
		return append(out, text)
	}
	start, end, pos := -1, 0, 0
	for _, s := range lang.SplitSentences(text) {
		at := pos + strings.Index(text[pos:], s) // sentences are parts of text, in order
		pos = at + len(s)
		if start >= 0 && pos-start > passageChars {
			out = append(out, text[start:end])
			start = -1
		}
		if start < 0 {
			start = at
		}
		end = pos
		if paragraphEnds(text[end:]) && end-start >= passageChars/2 {
			out = append(out, text[start:end])
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, text[start:end])
	}
	return out
}

// paragraphEnds reports whether rest, the text after a sentence, starts with a blank line.
func paragraphEnds(rest string) bool {
	first, after, ok := strings.Cut(rest, "\n")
	if !ok || strings.TrimSpace(first) != "" {
		return false
	}
	line, _, _ := strings.Cut(after, "\n")
	return strings.TrimSpace(line) == ""
}
