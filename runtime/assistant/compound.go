package assistant

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// German writes compounds as one word ("Hundeleine", "Kursgebühr"), so a visitor's word is often one the
// knowledge base has only in parts, or only inside a longer compound. Both are matched against the index's own
// vocabulary, with no dictionary: a compound's last part, its head, says what it is (a "Hundeleine" is a
// "Leine"), and the parts before it narrow it down.
const (
	// minCompoundHead is the fewest letters the head of a split compound has, and minCompoundModifier the
	// fewest the part before it has: shorter parts would split ordinary words.
	minCompoundHead     = 4
	minCompoundModifier = 3
)

// linkingElements are the letters German puts between the parts of a compound ("Prüfung-s-ergebnis",
// "Hund-e-leine", "Straße-n-bahn"), tried off a modifier the index lacks, longest first.
var linkingElements = []string{"es", "en", "er", "s", "n", "e"}

// splitCompound splits w, a word the index lacks, into the words of a compound the index has: the longest head
// that is an indexed word, after a modifier the index has too, with or without a linking element; a modifier
// that is a stop word, as the particle of "mitbringen", is left out. A compound whose modifier the index lacks
// is not split: a "Schwimmkurs" is a "Kurs", but one the base says nothing about, and the whole word counts as
// unexplained. It returns nil when w has no such split.
func (c *stemCache) splitCompound(w string) []term {
	r := []rune(w)
	for i := minCompoundModifier; i <= len(r)-minCompoundHead; i++ {
		head := string(r[i:])
		hs, hid := c.stem(head)
		if hid < 0 {
			continue
		}
		out := make([]term, 0, 2)
		mod := string(r[:i])
		if c.language().informative(mod) {
			ms, mid := c.stem(mod)
			for _, l := range linkingElements {
				if mid >= 0 {
					break
				}
				if m, ok := strings.CutSuffix(mod, l); ok && utf8.RuneCountInString(m) >= minCompoundModifier {
					if s, id := c.stem(m); id >= 0 {
						mod, ms, mid = m, s, id
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

// zuInfinitive returns the infinitive of w, a word the index lacks, when w is the zu-infinitive of a separable
// verb the index has ("vorzubereiten" of "vorbereiten", "anzumelden" of "anmelden"): German puts the "zu"
// between the particle and the verb, so the word Snowball stems is neither form.
func (c *stemCache) zuInfinitive(w string) (term, bool) {
	for i := 2; i+2+minCompoundHead <= len(w); i++ {
		if w[i:i+2] != "zu" {
			continue
		}
		inf := w[:i] + w[i+2:]
		if s, id := c.stem(inf); id >= 0 {
			return term{word: inf, stem: s, id: id}, true
		}
	}
	return term{}, false
}

// heads returns the term IDs of the indexed stems that end with stem and have at least minCompoundModifier
// letters before it: the compounds whose head a word the index lacks may be ("Bahn" of "Straßenbahn"). It needs
// the index's reversed stems, which only German indexes keep.
func (ix *Index) heads(stem string) []int32 {
	n := utf8.RuneCountInString(stem)
	if len(ix.reversed) == 0 || n < minCompoundHead {
		return nil
	}
	rev := reverse(stem)
	var ids []int32
	i, _ := slices.BinarySearch(ix.reversed, rev)
	for ; i < len(ix.reversed) && strings.HasPrefix(ix.reversed[i], rev); i++ {
		if utf8.RuneCountInString(ix.reversed[i])-n >= minCompoundModifier {
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

// eVariant returns the term ID of the other form of a German word, with or without a final "e", when the index
// has it under another stem. Snowball strips a final "s" after some letters but not the "s" of a final "se", so
// it stems the singular "Kurs" as "kur" and the plural "Kurse" as "kurs"; trying the other form relates them.
func (c *stemCache) eVariant(w string) (int32, bool) {
	if c == nil || c.lang != germanLanguage || utf8.RuneCountInString(w) < minCompoundHead {
		return -1, false
	}
	other := w + "e"
	if base, ok := strings.CutSuffix(w, "e"); ok {
		other = base
	}
	_, id := c.stem(other)
	return id, id >= 0
}
