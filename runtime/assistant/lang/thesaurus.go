package lang

import (
	"cmp"
	_ "embed"
	"slices"
	"strings"
	"sync"
)

// germanThesaurusTable is lexicon/thesaurus-de.txt: groups of German words of the same meaning, one a line, from
// OpenThesaurus (see hack/thesaurusde).
//
//go:embed lexicon/thesaurus-de.txt
var germanThesaurusTable string

// Thesaurus holds groups of stems of the same meaning. It is kept in three arrays rather than a map of each stem
// to its groups, which took four times the memory (9.6 MB for the German table): the stems of group g are
// stems[groupAt[g]:groupAt[g+1]], and entries lists every stem of every group with the group, in the order of
// the stems, to be searched by binary search.
type Thesaurus struct {
	stems   []string
	groupAt []int32
	entries []thesaurusEntry
}

// thesaurusEntry says that a stem is in a group.
type thesaurusEntry struct {
	stem  string
	group int32
}

// germanThesaurus parses germanThesaurusTable once, the first time a German question needs it.
var germanThesaurus = sync.OnceValue(func() *Thesaurus { return parseThesaurus(germanThesaurusTable, stemGerman) })

// parseThesaurus reads a table of groups of synonyms, one a line, stemming each word with stem. A group whose
// words share one stem says nothing and is dropped.
func parseThesaurus(table string, stem func(string) string) *Thesaurus {
	th := &Thesaurus{groupAt: []int32{0}}
	for line := range strings.Lines(table) {
		if strings.HasPrefix(line, "#") {
			continue
		}
		start := len(th.stems)
		for _, w := range strings.Fields(line) {
			if s := stem(w); !slices.Contains(th.stems[start:], s) {
				th.stems = append(th.stems, s)
			}
		}
		if len(th.stems)-start < 2 {
			th.stems = th.stems[:start]
			continue
		}
		th.groupAt = append(th.groupAt, int32(len(th.stems))) //nolint:gosec // far fewer than 2^31 words
	}
	th.stems = slices.Clip(th.stems)
	th.entries = make([]thesaurusEntry, 0, len(th.stems))
	for g := range len(th.groupAt) - 1 {
		for _, s := range th.stems[th.groupAt[g]:th.groupAt[g+1]] {
			th.entries = append(th.entries, thesaurusEntry{stem: s, group: int32(g)})
		}
	}
	slices.SortFunc(th.entries, func(a, b thesaurusEntry) int {
		return cmp.Or(strings.Compare(a.stem, b.stem), cmp.Compare(a.group, b.group))
	})
	return th
}

// Synonyms calls fn with each stem that shares a group with stem, once each.
func (th *Thesaurus) Synonyms(stem string, fn func(string)) {
	at, _ := slices.BinarySearchFunc(th.entries, stem, func(e thesaurusEntry, s string) int { return strings.Compare(e.stem, s) })
	var seen []string
	for _, e := range th.entries[at:] {
		if e.stem != stem {
			break
		}
		for _, s := range th.stems[th.groupAt[e.group]:th.groupAt[e.group+1]] {
			if s != stem && !slices.Contains(seen, s) {
				seen = append(seen, s)
				fn(s)
			}
		}
	}
}
