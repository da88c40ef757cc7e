package lang

import (
	_ "embed"
	"slices"
	"strings"
	"sync"
)

// derivedTable is lexicon/derived.txt: English words with the words WordNet 3.0 links to them as derivationally
// related forms in one of their senses ("pregnancy pregnant", "decide decision"), each pair once, under the word
// that sorts first, and only when Snowball stems the two apart (see hack/wordnet): so not the "-ant" words stemEnglish
// keeps apart from their root, deliberately.
//
//go:embed lexicon/derived.txt
var derivedTable string

// derivedStems parses derivedTable once (parseDerived).
var derivedStems = sync.OnceValue(func() map[string][]string { return parseDerived(derivedTable) })

// parseDerived returns the stems related to each stem by a table of derived forms, both ways.
func parseDerived(table string) map[string][]string {
	out := make(map[string][]string, 12000)
	add := func(a, b string) {
		if a != b && !slices.Contains(out[a], b) {
			out[a] = append(out[a], b)
		}
	}
	for line := range strings.Lines(table) {
		if strings.HasPrefix(line, "#") {
			continue
		}
		words := strings.Fields(line)
		if len(words) < 2 {
			panic("lang: malformed lexicon/derived.txt: " + line) // the table is generated and embedded
		}
		a := stemEnglish(words[0])
		for _, w := range words[1:] {
			b := stemEnglish(w)
			add(a, b)
			add(b, a)
		}
	}
	return out
}
