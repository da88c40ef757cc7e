package assistant

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/parley-dev/parley/runtime/assistant/lang"
)

// A language that writes compounds as one word (lang.Language.WritesCompounds), as German does ("Hundeleine",
// "Kursgebühr"), makes a visitor's word often one the knowledge base has only in parts, or only inside a longer
// compound. Both are matched against the index's own vocabulary, with no dictionary: the language says how a word
// may be cut, and the vocabulary which of the parts it has.

// splitCompound splits w, a word the index lacks, into the words of a compound the index has: the longest head
// that is an indexed word, after a modifier the index has too, with or without a linking element; a modifier
// that is a stop word, as the particle of "mitbringen", is left out. A compound whose modifier the index lacks
// is not split: a "Schwimmkurs" is a "Kurs", but one the base says nothing about, and the whole word counts as
// unexplained. It returns nil when w has no such split.
func (c *stemCache) splitCompound(w string) []term {
	l := c.language()
	for mod, head := range l.CompoundSplits(w) {
		hs, hid := c.stem(head)
		if hid < 0 {
			continue
		}
		out := make([]term, 0, 2)
		if l.Informative(mod) {
			ms, mid := c.stem(mod)
			if mid < 0 {
				for m := range l.Unlinked(mod) {
					if s, id := c.stem(m); id >= 0 {
						mod, ms, mid = m, s, id
						break
					}
				}
			}
			if mid < 0 {
				continue
			}
			out = append(out, term{word: mod, stem: ms, id: mid})
		}
		return append(out, term{word: head, stem: hs, id: hid})
	}
	return nil
}

// zuInfinitive returns the infinitive of w, a word the index lacks, when w is the infinitive with an infix of a
// separable verb the index has ("vorzubereiten" of "vorbereiten"; see lang.Language.Infinitives).
func (c *stemCache) zuInfinitive(w string) (term, bool) {
	for inf := range c.language().Infinitives(w) {
		if s, id := c.stem(inf); id >= 0 {
			return term{word: inf, stem: s, id: id}, true
		}
	}
	return term{}, false
}

// heads returns the term IDs of the indexed stems that end with stem and have at least lang.MinCompoundModifier
// letters before it: the compounds whose head a word the index lacks may be ("Bahn" of "Straßenbahn"). It needs
// the index's reversed stems, which only indexes of languages that write compounds as one word keep.
func (ix *Index) heads(stem string) []int32 {
	n := utf8.RuneCountInString(stem)
	if len(ix.reversed) == 0 || n < lang.MinCompoundHead {
		return nil
	}
	rev := reverse(stem)
	var ids []int32
	i, _ := slices.BinarySearch(ix.reversed, rev)
	for ; i < len(ix.reversed) && strings.HasPrefix(ix.reversed[i], rev); i++ {
		if utf8.RuneCountInString(ix.reversed[i])-n >= lang.MinCompoundModifier {
			id, _ := ix.cache.stemID(reverse(ix.reversed[i]))
			ids = append(ids, id)
		}
	}
	return ids
}

// reverse returns s with its letters in reverse order.
func reverse(s string) string {
	r := []rune(s)
	slices.Reverse(r)
	return string(r)
}

// otherForm returns the term ID of another form of w that the language stems apart from it, when the index has
// it (see lang.Language.OtherForm): German "Kurse" for "Kurs".
func (c *stemCache) otherForm(w string) (int32, bool) {
	if c == nil {
		return -1, false
	}
	other, ok := c.lang.OtherForm(w)
	if !ok {
		return -1, false
	}
	_, id := c.stem(other)
	return id, id >= 0
}
