package lang

import (
	_ "embed"
	"slices"
	"strings"
	"sync"
)

// phrasalTable is lexicon/phrasal.txt: English phrasal verbs, two words joined by an underscore ("punch_in"),
// each with the single words WordNet 3.0 puts in their commonest senses, or the verb of a phrasal verb it puts
// there ("clock" of "clock_in"; see hack/wordnet).
//
//go:embed lexicon/phrasal.txt
var phrasalTable string

// phrasalStems parses phrasalTable once (parsePhrasal).
var phrasalStems = sync.OnceValue(func() map[string]map[string][]string { return parsePhrasal(phrasalTable) })

// parsePhrasal returns, by the stem of a phrasal verb's verb and then its particle ("punch", "in"), the stems of
// the words of its meaning ("clock"); the commonest words of English ("get", "come") are left out, as they say
// nothing about a question's topic.
func parsePhrasal(table string) map[string]map[string][]string {
	out := make(map[string]map[string][]string, 1000)
	for line := range strings.Lines(table) {
		if strings.HasPrefix(line, "#") {
			continue
		}
		words := strings.Fields(line)
		if len(words) < 2 || !strings.Contains(words[0], "_") {
			panic("lang: malformed lexicon/phrasal.txt: " + line) // the table is generated and embedded
		}
		verb, particle, _ := strings.Cut(words[0], "_")
		v := stemEnglish(verb)
		if out[v] == nil {
			out[v] = make(map[string][]string, 1)
		}
		for _, w := range words[1:] {
			if r, _ := generalRarity(w); r == 0 {
				continue
			}
			if s := stemEnglish(w); !slices.Contains(out[v][particle], s) {
				out[v][particle] = append(out[v][particle], s)
			}
		}
	}
	return out
}
