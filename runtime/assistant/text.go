package assistant

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
)

// tokenize splits text into lower-case words made of Unicode letters and digits. Apostrophes inside a word are
// dropped ("isn't" becomes "isnt", "O'Neil" "oneil"), except that a clitic after one is ("we'd" is "we", not the
// "wed" of "wedding"; "shop's" is "shop"); a currency sign becomes its name ("$75" is "dollar", "75"); every other
// character separates words. A word written in lower case in text is a part of text, not a copy.
func tokenize(text string) []string {
	// Room for words of four bytes and a separator on average, so that a question's words take one allocation
	// instead of one per doubling.
	return appendTokens(make([]string, 0, len(text)/5+1), text)
}

// appendTokens appends the words of text, as tokenize splits it, to words.
func appendTokens(words []string, text string) []string {
	start := -1 // where the current word starts, or -1 between words
	// copied is set when the current word differs from text[start:], and b holds it then.
	copied := false
	var b []byte
	flush := func(end int) {
		switch {
		case start < 0:
			return
		case copied:
			words = append(words, string(b))
		default:
			words = append(words, text[start:end])
		}
		start, copied = -1, false
	}
	// copyWord starts b with the current word up to i.
	copyWord := func(i int) {
		if !copied {
			b = append(b[:0], text[start:i]...)
			copied = true
		}
	}
	skip := 0 // text before skip is a clitic to leave out
	for i, r := range text {
		switch {
		case i < skip:
			continue
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if start < 0 {
				start = i
			}
			lower := unicode.ToLower(r)
			if lower != r {
				copyWord(i)
			}
			if copied {
				b = utf8.AppendRune(b, lower)
			}
		case isApostrophe(r) && start >= 0 && nextIsLetter(text[i+utf8.RuneLen(r):]):
			after := i + utf8.RuneLen(r)
			if n := cliticLen(text[after:]); n > 0 {
				flush(i)
				skip = after + n
				continue
			}
			// Part of a contraction or a name: skip it and keep the word together.
			copyWord(i)
		default:
			flush(i)
			if name, ok := currencyNames[r]; ok {
				words = append(words, name)
			}
		}
	}
	flush(len(text))
	return words
}

// maxCompoundParts is the most words a compound joins: longer runs of hyphenated words are phrases
// ("out-of-hours-only-please"), not spellings of one word.
const maxCompoundParts = 3

// appendCompounds appends to out the compounds of text, lower case: two or three words of letters joined by
// hyphens or slashes, written as one word ("X-rays" is "xrays", "wi-fi" "wifi"). Writers spell such words joined,
// hyphenated or apart ("check-out", "checkout"), so the index also keeps the joined form. A run with a digit
// ("24-hour") is no compound.
func appendCompounds(out []string, text string) []string {
	if !hasJoiner(text) {
		return out // the common case, without scanning
	}
	var b []byte
	parts := 0           // words in the current run
	inWord := false      // the last rune was a letter or digit
	afterJoiner := false // the last rune was a joiner that followed a word
	digit := false       // the current run has a digit
	flush := func() {
		if parts >= 2 && parts <= maxCompoundParts && !digit {
			out = append(out, string(b))
		}
		b, parts, digit = b[:0], 0, false
	}
	for _, r := range text {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if !inWord {
				if !afterJoiner {
					flush()
				}
				parts++
				inWord, afterJoiner = true, false
			}
			digit = digit || unicode.IsDigit(r)
			b = utf8.AppendRune(b, unicode.ToLower(r))
		case isJoiner(r) && inWord:
			inWord, afterJoiner = false, true
		default:
			flush()
			inWord, afterJoiner = false, false
		}
	}
	flush()
	return out
}

// hasJoiner reports whether text has a rune isJoiner reports. Searching for each byte sequence is several times
// faster than strings.ContainsAny with runes beyond ASCII, which decodes text rune by rune.
func hasJoiner(text string) bool {
	return strings.IndexByte(text, '-') >= 0 || strings.IndexByte(text, '/') >= 0 ||
		strings.Contains(text, "\u2010") || strings.Contains(text, "\u2011")
}

// isJoiner reports whether r joins the words of a compound: a hyphen or a slash.
func isJoiner(r rune) bool {
	return r == '-' || r == '/' || r == '\u2010' || r == '\u2011'
}

// clitics are the endings English attaches to a word with an apostrophe that are words of their own ("we'd",
// "they're", "I'm") or a possessive ("shop's").
var clitics = []string{"s", "d", "ll", "re", "ve", "m"}

// cliticLen returns the length of the clitic s starts with, if its first word is one, and 0 otherwise.
func cliticLen(s string) int {
	end := strings.IndexFunc(s, func(r rune) bool { return !unicode.IsLetter(r) })
	if end < 0 {
		end = len(s)
	}
	for _, c := range clitics {
		if strings.EqualFold(s[:end], c) {
			return end
		}
	}
	return 0
}

// nextIsLetter reports whether s starts with a letter.
func nextIsLetter(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsLetter(r)
}

func isApostrophe(r rune) bool {
	return r == '\'' || r == '’' || r == 'ʼ'
}

// stem reduces an English word to its Snowball stem. An irregular form is stemmed as its lemma (lemma), so that
// "spent" finds "spending" and "children" finds "child". A word Snowball would reduce by a final "-ant" keeps it,
// less a plural "s": the suffix makes another word ("accountant" is no "account", "assistant" no "assist",
// "important" no "import"). Conflated, "account" counted the items about the accountant as well and weighed
// too little for "is it safe to give you access to my bank account" to be answered. Derived forms (derivedStems)
// leave such pairs out: "accountant" matched to "account" answers "can you recommend an accountant near me".
func stem(word string) string {
	l := lemma(word)
	s := english.Stem(l, true)
	if singular := strings.TrimSuffix(l, "s"); singular == s+"ant" {
		return singular
	}
	return s
}

// isNumber reports whether a word is made of digits only.
func isNumber(word string) bool {
	for _, r := range word {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return word != ""
}

// term is an informative word of a text: its surface form, its stem and the stem's term ID in the index, or -1
// when the index has no such stem.
type term struct {
	word string
	stem string
	id   int32
	// joins holds, for a query word, the words it forms with a neighbour written as one ("log in" as "login";
	// see queryTerms).
	joins []join
	// optional is set for a query word an idiom put in: "refund" for "money back", or the marker of the answer
	// type a phrase asks for (see queryTerms).
	optional bool
	// phrasal holds, for an English verb the question uses with a particle ("work out"), the stems of the words
	// of the phrasal verb's meaning ("exercise"; see phrasalStems).
	phrasal []string
}

// join is an indexed word that a query word forms with a neighbour, with the share of the word's BM25 weight
// the query word earns: all of it, or half when the neighbour is informative too and earns the other half.
type join struct {
	id    int32
	share float64
}

// stemCache is the vocabulary of an index in its language: the stem of each indexed word, as a term ID, and the
// term ID of each stem. It remembers the stems because stemming is the slowest part of building an index.
// NewIndex fills it; afterwards it is only read, so searches may share it. A nil cache stems every English word.
type stemCache struct {
	lang *language
	// words lists the indexed words, and wordIDs the term ID of each word's stem; wordTable finds a word.
	words     []string
	wordIDs   []int32
	wordTable stringTable
	// stems lists the stems, each at its term ID; stemTable finds a stem.
	stems     []string
	stemTable stringTable
	// sorted lists the term IDs in the order of their stems, for prefix matching; the index shares it.
	sorted   []int32
	writable bool
}

func newStemCache(lang *language) *stemCache {
	return &stemCache{lang: lang, wordTable: newStringTable(), stemTable: newStringTable(), writable: true}
}

// wordID returns the term ID of an indexed word's stem.
func (c *stemCache) wordID(word string) (int32, bool) {
	at, ok := c.wordTable.find(c.words, word)
	if !ok {
		return -1, false
	}
	return c.wordIDs[at], true
}

// sortedIDs returns the term IDs in the order of their stems.
func (c *stemCache) sortedIDs() []int32 {
	ids := make([]int32, len(c.stems))
	for i := range ids {
		ids[i] = int32(i)
	}
	slices.SortFunc(ids, func(a, b int32) int { return strings.Compare(c.stems[a], c.stems[b]) })
	return ids
}

// firstSorted returns the position in sorted of the first stem at or after s in order.
func (c *stemCache) firstSorted(s string) int {
	at, _ := slices.BinarySearchFunc(c.sorted, s, func(id int32, s string) int { return strings.Compare(c.stems[id], s) })
	return at
}

// stemID returns the term ID of a stem.
func (c *stemCache) stemID(stem string) (int32, bool) { return c.stemTable.find(c.stems, stem) }

// language returns the cache's language; English for a nil cache.
func (c *stemCache) language() *language {
	if c == nil {
		return englishLanguage
	}
	return c.lang
}

// stem returns the stem of word and its term ID, from the cache when it is there. While the cache is writable,
// a new word is added, and a new stem given the next term ID.
func (c *stemCache) stem(word string) (string, int32) {
	if c == nil {
		return englishLanguage.stem(word), -1
	}
	if id, ok := c.wordID(word); ok {
		return c.stems[id], id
	}
	s := c.lang.stem(word)
	id, ok := c.stemID(s)
	if c.writable {
		if !ok {
			id = c.addStem(s)
		}
		c.words, c.wordIDs = append(c.words, word), append(c.wordIDs, id)
		c.wordTable.added(c.words)
	} else if !ok {
		id = -1
	}
	return s, id
}

// marker returns the term ID of an answer type's marker (see answertype.go), which is its own stem; while the
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
	c.stemTable.added(c.stems)
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
//
// Two neighbouring words the index has written as one ("log in" for "login", "x ray" for the "x-rays" indexed as
// "xrays") give each of them that word as a further match (joins); so does a hyphenated one, which tokenizing
// splits. The joined word is worth its own weight, not the part's: it matches more of the question than the
// part does alone, and its weight is shared between the parts so that it counts once.
func (c *stemCache) queryTerms(text string) []term {
	words := boundWords(tokenize(text))
	words, fromIdiom := rewriteIdioms(words, c.language().idioms)
	out := make([]term, 0, len(words))
	next := int32(-1) // the join of words[i] and words[i+1]
	for i := range words {
		prev := next
		next = c.joined(words, i)
		n := len(out)
		out = c.appendInformative(out, words[i:i+1])
		if fromIdiom != nil && fromIdiom[i] {
			for j := n; j < len(out); j++ {
				out[j].optional = true
			}
		}
		if len(out) == n+1 && i+1 < len(words) && c.language().english {
			out[n].phrasal = phrasalStems()[out[n].stem][words[i+1]]
		}
		if len(out) > n && out[n].id < 0 && c != nil && c.language().compounds {
			if inf, ok := c.zuInfinitive(out[n].word); ok {
				out[n] = inf
			} else if parts := c.splitCompound(out[n].word); parts != nil {
				out = append(out[:n], parts...)
			}
		}
		for at, id := range [2]int32{prev, next} {
			at += i - 1 // the first of the two words joined
			if id < 0 {
				continue
			}
			share := 1.0
			if c.language().informative(words[at]) && c.language().informative(words[at+1]) {
				share = 0.5
			}
			for j := n; j < len(out); j++ {
				out[j].joins = append(out[j].joins, join{id: id, share: share})
			}
		}
	}
	return out
}

// joined returns the term ID of words[i] and words[i+1] written as one word, or -1 when there are no such words,
// either is not a compound part (compoundPart) or the index lacks the joined word. Stemming is the costly part,
// so the joined word is only stemmed when some indexed stem starts with the first word and the second's first
// letter, as its stem would.
func (c *stemCache) joined(words []string, i int) int32 {
	if c == nil || i+1 >= len(words) || !c.compoundPart(words[i]) || !c.compoundPart(words[i+1]) {
		return -1
	}
	w := words[i] + words[i+1]
	if id, ok := c.wordID(w); ok {
		return id
	}
	_, first := utf8.DecodeRuneInString(words[i+1])
	prefix := w[:len(words[i])+first]
	if at := c.firstSorted(prefix); at == len(c.sorted) || !strings.HasPrefix(c.stems[c.sorted[at]], prefix) {
		return -1
	}
	_, id := c.stem(w)
	return id
}

// compoundPart reports whether w may be a part of a compound written apart: a word of letters, and at least two
// of them unless it is no stop word ("x ray", but not "a way" for "away").
func (c *stemCache) compoundPart(w string) bool {
	for _, r := range w {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	if utf8.RuneCountInString(w) >= 2 {
		return true
	}
	return c.language().informative(w)
}

// appendInformative appends the informative words of a list of words to out, in order, with their stems; stop
// words are left out.
func (c *stemCache) appendInformative(out []term, words []string) []term {
	lang := c.language()
	for _, w := range words {
		if _, stop := lang.stopWords[w]; stop {
			continue
		}
		if isMarker(w) {
			out = append(out, term{word: w, stem: w, id: c.marker(w)})
			continue
		}
		s, id := c.stem(w)
		out = append(out, term{word: w, stem: s, id: id})
	}
	return out
}

// splitSentences splits text into sentences at '.', '!' or '?' followed by white space, and at line breaks. A
// full stop followed by a lower-case word ("e.g. a tent", "approx. two") does not end a sentence, nor one inside a
// number ("0.1"). The sentences are parts of text, trimmed of white space.
func splitSentences(text string) []string {
	var out []string
	start := 0
	flush := func(end int) {
		if s := strings.TrimSpace(text[start:end]); s != "" {
			out = append(out, s)
		}
		start = end
	}
	for i, r := range text {
		switch r {
		case '\n':
			flush(i + 1)
		case '.', '!', '?':
			rest := text[i+1:]
			if next, _ := utf8.DecodeRuneInString(rest); rest != "" && !unicode.IsSpace(next) {
				continue
			}
			if next := nextNonSpace(rest); next != 0 && unicode.IsLower(next) {
				continue
			}
			flush(i + 1)
		}
	}
	flush(len(text))
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
	for _, s := range splitSentences(text) {
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

// nextNonSpace returns the first rune of s that is not white space, or 0.
func nextNonSpace(s string) rune {
	for _, r := range s {
		if !unicode.IsSpace(r) {
			return r
		}
	}
	return 0
}

// currencyNames are the words for currency signs.
var currencyNames = map[rune]string{'$': "dollar", '€': "euro", '£': "pound"}

// Acronyms of names: a visitor writes "UK" or "EU" where help pages write "United Kingdom" or "European Union".
const (
	// minAcronym and maxAcronym are the fewest and most words of a name that an acronym is made of.
	minAcronym, maxAcronym = 2, 5
)

// appendAcronyms appends to out, lower-cased, the acronyms of the names in text: runs of minAcronym to maxAcronym
// words that each start with a capital letter, with only spaces between them ("United Kingdom" gives "uk", "Rocky
// Mountain National Park" "rmnp"). Two words that start a sentence are no name ("Call Anna"), as its first word
// has a capital anyway. A title written in capitals gives an acronym that nobody types, which costs nothing.
func appendAcronyms(out []string, text string) []string {
	var initials []byte
	sentenceStart := true   // the next word starts a sentence
	startsSentence := false // the current run starts a sentence
	flush := func() {
		n := len(initials)
		if n >= minAcronym && n <= maxAcronym && (n > minAcronym || !startsSentence) {
			out = append(out, strings.ToLower(string(initials)))
		}
		initials = initials[:0]
	}
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !unicode.IsLetter(r) {
			if r != ' ' {
				flush()
			}
			if r == '.' || r == '!' || r == '?' || r == '\n' {
				sentenceStart = true
			}
			i += size
			continue
		}
		if len(initials) == 0 {
			startsSentence = sentenceStart
		}
		sentenceStart = false
		end := i + size
		for end < len(text) {
			r2, s2 := utf8.DecodeRuneInString(text[end:])
			if !unicode.IsLetter(r2) && r2 != '-' && r2 != '\'' {
				break
			}
			end += s2
		}
		if unicode.IsUpper(r) && r < utf8.RuneSelf {
			initials = append(initials, text[i]) // the capital, one byte in UTF-8
		} else {
			flush()
		}
		i = end
	}
	flush()
	return out
}

// stopWords are common English words, question words and chat filler that say nothing about the topic. Verbs
// such as "offer", "sell", "find" and "work" are not among them: they name what some businesses do ("we sell used
// bikes", "I found it cheaper elsewhere"). Keeping them changed nothing on the demo shop or the evaluation bases
// but one ranking, for the better: "I found the same tent cheaper somewhere else" finds the price match. The
// contractions visitors type without their apostrophe ("wheres", "hows") are stop words as their words are: taken
// for words the base lacks, they were matched by their word vectors, poor for such rare spellings, to words such
// as "one" and "even".
var stopWords = toSet(`a about above after again against aint all also am an and any anyone anything are arent as
	at be because been before being below between both but by can cannot cant could couldnt couldve
	did didnt do does doesnt doing dont during each either else ever every few for from further
	get getting go going got gonna
	had hadnt has hasnt have havent having he hello her here heres hers herself hes hey hi him himself his how
	however hows i id if ill im in into is isnt it its itll itself ive just know let lets like looking may me might
	more most much many must mustnt my myself need needs neednt
	no nor not now of off oh ok okay on once one only or other ought our ours ourselves out over own
	please pls really s same shall she shes should shouldnt shouldve so some someone something such sure
	t tell than thank thanks that thatll thats the their theirs them themselves then there theres these they theyd
	theyll theyre theyve this those tho through thru thx til to too u under until up ur us very wanna want was wasnt we werent
	weve were what whats when whens where wheres whether which while who wholl whom whos why whys will with wont
	would wouldnt wouldve yall yes yet you youd youll your youre yours yourself yourselves youve`)

// toSet turns a space-separated list of words into a set.
func toSet(words string) map[string]struct{} {
	set := make(map[string]struct{})
	for _, w := range strings.Fields(words) {
		set[w] = struct{}{}
	}
	return set
}
