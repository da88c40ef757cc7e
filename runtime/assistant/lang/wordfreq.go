package lang

import (
	_ "embed"
	"math"
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
			panic("lang: malformed lexicon/wordfreq.txt: " + line) // the table is generated and embedded
		}
		for _, w := range fields[1:] {
			out[w] = z
		}
	}
	return out
})

// generalRarity says, from 0 to 1, how informative a lower-case word is in general English, whatever a
// knowledge base contains: 0 for the commonest words, 1 for rare ones, which the table leaves out, and so for
// names, typos and jargon. listed reports whether the table has the word, which is then spelt right.
func generalRarity(word string) (rarity float64, listed bool) {
	z, ok := zipfs()[word]
	if !ok {
		return 1, false
	}
	return min(1, max(0, (commonZipf-z)/(commonZipf-rareZipf))), true
}

// wordfreqGermanTable is lexicon/wordfreq-de.txt: the commonest words of general German, most frequent first (see
// hack/wordfreqde). The source gives their order, not their counts.
//
//go:embed lexicon/wordfreq-de.txt
var wordfreqGermanTable string

// Ranks bounding how informative a German word is, as commonZipf and rareZipf do for English: a word among the
// germanCommonRank commonest ("leute", "passiert", "genug") says next to nothing about a question's topic, and one
// ranked germanRareRank or lower ("ausgebucht"), or not in the table, says as much as a word can. The
// ranks are further apart than English's: German spreads a word's occurrences over its inflected forms and
// writes compounds as one word, so a common German word ranks lower than its English equivalent.
const (
	germanCommonRank = 300
	germanRareRank   = 12000
)

// germanRanks parses wordfreqGermanTable once.
var germanRanks = sync.OnceValue(func() map[string]int {
	out := make(map[string]int, 12000)
	for line := range strings.Lines(wordfreqGermanTable) {
		if strings.HasPrefix(line, "#") {
			continue
		}
		if w := strings.TrimSpace(line); w != "" {
			out[w] = len(out) + 1
		}
	}
	return out
})

// germanRarity is generalRarity for German: 0 for the commonest words, 1 for rare ones, and in between by the
// logarithm of the rank, as Zipf values are logarithms of frequencies.
func germanRarity(word string) (rarity float64, listed bool) {
	rank, ok := germanRanks()[word]
	if !ok {
		return 1, false
	}
	return min(1, max(0, math.Log(float64(rank)/germanCommonRank)/math.Log(float64(germanRareRank)/germanCommonRank))), true
}
