package lang

import (
	_ "embed"
	"strings"
	"sync"
)

// irregularTable is lexicon/irregular.txt: irregular English inflections with their lemmas ("spent spend",
// "children child"), from WordNet 3.0's exception lists (see hack/wordnet).
//
//go:embed lexicon/irregular.txt
var irregularTable string

// irregularLemmas parses irregularTable once.
var irregularLemmas = sync.OnceValue(func() map[string]string {
	out := make(map[string]string, 2500)
	for line := range strings.Lines(irregularTable) {
		if strings.HasPrefix(line, "#") {
			continue
		}
		form, lemma, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok {
			panic("lang: malformed lexicon/irregular.txt: " + line) // the table is generated and embedded
		}
		out[form] = lemma
	}
	return out
})

// lemma returns the dictionary form of an irregularly inflected lower-case word ("spent" is "spend", "mice" is
// "mouse"), which the stemmer cannot derive, and any other word unchanged.
func lemma(word string) string {
	if l, ok := irregularLemmas()[word]; ok {
		return l
	}
	return word
}
