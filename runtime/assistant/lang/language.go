// Package lang is what the offline assistant knows of words, whatever a knowledge base holds: how text splits into
// words and sentences, their stems, the words that say nothing about a question's topic, compounds, the idioms
// and answer types of questions, and the word tables of each language (frequencies, synonyms, irregular and
// derived forms, phrasal verbs) with their parsers. It knows nothing of an index: each
// language, declared in a file of its own (english.go, german.go), says which resources it has, and the engine in
// runtime/assistant asks it what it offers.
//
// The word tables in lexicon/ are generated, never edited by hand: `make lexicon` rebuilds them from the pinned
// packages of hack/lexicon/inputs, and `make verify-lexicon` fails when one differs from what its generator writes.
package lang

import (
	"iter"
	"slices"
	"strings"
	"unicode/utf8"
)

// Language is how the words of one language are indexed and searched. A resource the language lacks is nil, and
// its method returns nothing.
type Language struct {
	// stem reduces a lower-case word to its stem, and lemma, when the language has a table of irregular
	// inflections, first gives an irregular form's lemma ("spent" is "spend").
	stem  func(word string) string
	lemma func(word string) string
	// stopWords are the language's words that say nothing about a question's topic.
	stopWords map[string]struct{}
	// rarity says, from 0 to 1, how informative a lower-case word is in the language in general, and whether
	// the language's frequency list has it (see Rarity).
	rarity func(word string) (rarity float64, listed bool)
	// clauseBreaks are the words that may join two questions in one message ("and", "also"; see SplitClauses).
	clauseBreaks []string
	// askingWords are the words a clause that asks begins with: question words and the verbs a question is
	// turned with ("can", "is", "do"; see StoryWords); leadIns the words that may come before them ("so can I").
	askingWords, leadIns map[string]struct{}
	// idioms are the language's common phrasings of questions, rewritten before a question is searched.
	idioms []idiom
	// wordClasses are the classes of the language's words that detecting answer types relies on (see
	// AppendAnswerTypes).
	wordClasses map[string]wordClass
	// noAnswerTypes is set for a language run without its answer types (see Without).
	noAnswerTypes bool

	// The resources a language may lack.

	// synonyms maps a stem to the stems of the words used for the same thing (see synonyms.go).
	synonyms map[string][]string
	// derived returns the stems of the words derived from the same root as a stem (see derived.go).
	derived func() map[string][]string
	// phrasal returns, by the stem of a phrasal verb's verb and its particle, the stems of its meaning (see
	// phrasal.go).
	phrasal func() map[string]map[string][]string
	// compounds is how the language writes compounds as one word; nil for one that writes them apart.
	compounds *compounding
	// otherForm returns another form of a word that its stemmer stems apart from it (see OtherForm).
	otherForm func(word string) (string, bool)
}

// ForLocale returns the language of a BCP 47 locale such as "de-AT": German for German, English otherwise.
func ForLocale(locale string) *Language {
	lang, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(locale)), "-")
	lang, _, _ = strings.Cut(lang, "_")
	if lang == "de" {
		return German
	}
	return English
}

// Stem reduces a lower-case word to its stem.
func (l *Language) Stem(word string) string {
	if l.lemma != nil {
		word = l.lemma(word)
	}
	return l.stem(word)
}

// Informative reports whether a word says something about a question's topic: it is no stop word.
func (l *Language) Informative(word string) bool {
	_, stop := l.stopWords[word]
	return !stop
}

// Rarity says, from 0 to 1, how informative a lower-case word is in the language in general, whatever a
// knowledge base contains: 0 for the commonest words, 1 for rare ones, which the language's frequency list leaves
// out, and so for names, typos and jargon. listed reports whether the list has the word, which is then spelt
// right.
func (l *Language) Rarity(word string) (rarity float64, listed bool) { return l.rarity(word) }

// Synonyms returns the stems of the words used for the same thing as a stem's, from the language's curated list.
func (l *Language) Synonyms(stem string) []string { return l.synonyms[stem] }

// Derived returns the stems of the words derived from the same root as a stem's, often of another part of
// speech ("pregnant", "pregnancy").
func (l *Language) Derived(stem string) []string {
	if l.derived == nil {
		return nil
	}
	return l.derived()[stem]
}

// Phrasal returns the stems of the words of the meaning of the phrasal verb that the verb of stem verb makes with
// particle ("work" and "out": "exercise"), or nil.
func (l *Language) Phrasal(verb, particle string) []string {
	if l.phrasal == nil {
		return nil
	}
	return l.phrasal()[verb][particle]
}

// OtherForm returns another form of a word that the language's stemmer stems apart from it, when the language
// has one: German "Kurs" and "Kurse".
func (l *Language) OtherForm(word string) (string, bool) {
	if l.otherForm == nil {
		return "", false
	}
	return l.otherForm(word)
}

// compounding is how a language writes compounds as one word ("Hundeleine", "Kursgebühr"), so that a visitor's
// word may be one a knowledge base has only in parts: a compound's last part, its head, says what it is (a
// "Hundeleine" is a "Leine"), and the parts before it narrow it down.
type compounding struct {
	// linking are the letters the language may put between the parts of a compound ("Prüfung-s-ergebnis",
	// "Hund-e-leine"), longest first.
	linking []string
	// infix is what the language puts between the particle and the verb of a separable verb's infinitive
	// ("vor-zu-bereiten" of "vorbereiten"); "" for none.
	infix string
}

// The fewest letters of the parts of a compound: the head, and the part before it, the modifier. Shorter parts
// would split ordinary words.
const (
	MinCompoundHead     = 4
	MinCompoundModifier = 3
)

// WritesCompounds reports whether the language writes compounds as one word, whose parts are matched.
func (l *Language) WritesCompounds() bool { return l.compounds != nil }

// CompoundSplits yields the ways of cutting w into a modifier and a head of a compound, longest head first.
func (l *Language) CompoundSplits(w string) iter.Seq2[string, string] {
	return func(yield func(modifier, head string) bool) {
		if l.compounds == nil {
			return
		}
		r := []rune(w)
		for i := MinCompoundModifier; i <= len(r)-MinCompoundHead; i++ {
			if !yield(string(r[:i]), string(r[i:])) {
				return
			}
		}
	}
}

// Unlinked yields the forms of a compound's modifier without a linking element it ends with ("Hunde" is
// "Hund"), in the order of the language's linking elements.
func (l *Language) Unlinked(modifier string) iter.Seq[string] {
	return func(yield func(string) bool) {
		if l.compounds == nil {
			return
		}
		for _, link := range l.compounds.linking {
			if m, ok := strings.CutSuffix(modifier, link); ok && utf8.RuneCountInString(m) >= MinCompoundModifier {
				if !yield(m) {
					return
				}
			}
		}
	}
}

// Infinitives yields the infinitives w may be the infinitive-with-infix of ("vorzubereiten" of "vorbereiten",
// "anzumelden" of "anmelden"): the language puts the infix between the particle and the verb, so the word its
// stemmer stems is neither form.
func (l *Language) Infinitives(w string) iter.Seq[string] {
	return func(yield func(string) bool) {
		if l.compounds == nil || l.compounds.infix == "" {
			return
		}
		infix := l.compounds.infix
		for i := 2; i+len(infix)+MinCompoundHead <= len(w); i++ {
			if w[i:i+len(infix)] == infix && !yield(w[:i]+w[i+len(infix):]) {
				return
			}
		}
	}
}

// StoryWords returns the words of message that it uses only in clauses that tell rather than ask, when it has
// both: "my chain snapped on the way to work" of "my chain snapped on the way to work, can I just drop in and
// get a new one put on now?". A clause asks when it begins with one of the language's asking words, after a
// lead-in or not; clauses end at punctuation. A message of one clause, or of no clause that asks, has none.
func (l *Language) StoryWords(message string) []string {
	var asking, telling []string
	for clause := range strings.FieldsFuncSeq(message, func(r rune) bool { return strings.ContainsRune(",;:.?!\n", r) }) {
		words := Tokenize(clause)
		if len(words) == 0 {
			continue
		}
		if l.asks(words) {
			asking = append(asking, words...)
		} else {
			telling = append(telling, words...)
		}
	}
	if len(asking) == 0 {
		return nil
	}
	return slices.DeleteFunc(telling, func(w string) bool { return slices.Contains(asking, w) })
}

// asks reports whether a clause of these words asks: its first word, or the first after a lead-in, is an asking
// word.
func (l *Language) asks(words []string) bool {
	first := words[0]
	if _, lead := l.leadIns[first]; lead && len(words) > 1 {
		first = words[1]
	}
	_, ok := l.askingWords[first]
	return ok
}

// minClauseWords is the fewest words a clause needs to be asked on its own: "sleeping bag and tent" is one
// question, "can I bring my dog and is breakfast included" two.
const minClauseWords = 3

// SplitClauses splits a message into the questions it asks: at sentence ends, and at a word of the language that
// joins two questions (clauseBreaks) when both sides have at least minClauseWords words. A message that asks one
// thing is one clause.
func (l *Language) SplitClauses(message string) []string {
	var out []string
	for _, sentence := range strings.FieldsFunc(message, func(r rune) bool { return strings.ContainsRune("?!;.\n", r) }) {
		words := strings.Fields(sentence)
		start := 0
		for i, w := range words {
			w = strings.ToLower(strings.Trim(w, ",:"))
			if slices.Contains(l.clauseBreaks, w) && i-start >= minClauseWords && len(words)-i-1 >= minClauseWords {
				out = append(out, strings.TrimRight(strings.Join(words[start:i], " "), ",:"))
				start = i + 1
			}
		}
		if start < len(words) {
			out = append(out, strings.Join(words[start:], " "))
		}
	}
	return out
}
