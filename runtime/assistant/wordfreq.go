package assistant

import (
	_ "embed"
	"strconv"
	"strings"
	"sync"
)

// wordfreqTable is lexicon/wordfreq.txt: the commonest words of general English with their Zipf values, the
// log10 of their occurrences per billion words (see hack/wordfreq).
//
//go:embed lexicon/wordfreq.txt
var wordfreqTable string

// Zipf values bounding how informative a word is: a word at least as frequent as commonZipf ("even", "night",
// "leave": about once in 1,600 words) says next to nothing about a question's topic, and one at most as frequent
// as rareZipf ("dog", "food", "horse"), or not in the table at all, says as much as a word can.
const (
	commonZipf = 5.8
	rareZipf   = 5.3
)

// zipfs parses wordfreqTable once.
var zipfs = sync.OnceValue(func() map[string]float64 {
	out := make(map[string]float64, 1000)
	for line := range strings.Lines(wordfreqTable) {
		if strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		z, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			panic("assistant: malformed lexicon/wordfreq.txt: " + line) // the table is generated and embedded
		}
		for _, w := range fields[1:] {
			out[w] = z
		}
	}
	return out
})

// generalRarity says, from 0 to 1, how informative a lower-case word is in general English, whatever a
// knowledge base contains: 0 for the commonest words, 1 for rare ones, which the table leaves out, and so for
// names, typos and jargon.
func generalRarity(word string) float64 {
	z, ok := zipfs()[word]
	if !ok {
		return 1
	}
	return min(1, max(0, (commonZipf-z)/(commonZipf-rareZipf)))
}
