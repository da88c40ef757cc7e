package assistant

import (
	"runtime"
	"slices"
	"strings"
	"testing"
)

// synonymsOf returns the stems th gives as synonyms of word's stem, in the order it gives them.
func synonymsOf(th *thesaurus, word string) []string {
	var out []string
	th.synonyms(stemGerman(strings.ToLower(word)), func(s string) { out = append(out, s) })
	return out
}

func TestParseThesaurus(t *testing.T) {
	th := parseThesaurus("# a comment\naufzug fahrstuhl lift\nkunde kunden\nlift mitfahrgelegenheit\n", stemGerman)
	tests := []struct {
		word string
		want []string
	}{
		{"Fahrstuhl", []string{stemGerman("aufzug"), stemGerman("lift")}},
		// A word of two groups has the words of both, once each and not itself.
		{"Lift", []string{stemGerman("aufzug"), stemGerman("fahrstuhl"), stemGerman("mitfahrgelegenheit")}},
		// "Kunde" and "Kunden" share a stem: their group says nothing.
		{"Kunde", nil},
		{"Hund", nil},
	}
	for _, tt := range tests {
		if got := synonymsOf(th, tt.word); !slices.Equal(got, tt.want) {
			t.Errorf("synonyms(%q) = %q, want %q", tt.word, got, tt.want)
		}
	}
	if groups := len(th.groupAt) - 1; groups != 2 {
		t.Errorf("parsed %d groups, want 2 (the comment and the group of one stem dropped)", groups)
	}
}

// The table generated from OpenThesaurus has the synonyms of everyday German, and not the broader terms it
// lists beside them.
func TestGermanThesaurusTable(t *testing.T) {
	th := germanThesaurus()
	for _, p := range [][2]string{{"fahrstuhl", "aufzug"}, {"büro", "sekretariat"}, {"angestellter", "mitarbeiter"}, {"nachlass", "rabatt"}} {
		if !slices.Contains(synonymsOf(th, p[0]), stemGerman(p[1])) {
			t.Errorf("the thesaurus lacks %q as a synonym of %q", p[1], p[0])
		}
	}
	// OpenThesaurus lists "Währung" as a broader term of "Dollar", not as its synonym.
	if slices.Contains(synonymsOf(th, "dollar"), stemGerman("währung")) {
		t.Error("the thesaurus has the broader term Währung as a synonym of Dollar")
	}
}

// A German question word the base lacks but a synonym of which it has is matched to the synonym at
// synonymFactor and is not counted as unknown: "Fahrstuhl" finds the item that says "Aufzug", and the question is
// answered. A word with neither is unknown, and the question declined. English indexes have no thesaurus.
func TestGermanSynonymIsNotUnknown(t *testing.T) {
	items := append(slices.Clone(dogsItems), Item{ID: "zugang", Title: "Barrierefreiheit",
		Content: "Alle Räume erreichen Sie mit dem Aufzug, auch im Rollstuhl."})
	ix := NewIndexForLocale(items, "de")
	aufzug, ok := ix.stemID(stemGerman("aufzug"))
	if !ok {
		t.Fatal("the index lacks Aufzug")
	}
	q := ix.parseQuery("Fahrstuhl")
	if len(q.terms) != 1 || !slices.ContainsFunc(q.terms[0].alts, func(a alt) bool { return a.id == aufzug && a.factor == synonymFactor }) {
		t.Fatalf("parseQuery(Fahrstuhl) = %+v, want Aufzug as a synonym", q.terms)
	}
	if !q.allMatched() {
		t.Error("parseQuery(Fahrstuhl): a word with a synonym in the base counted as unknown")
	}
	checkAnswers(t, ix, "de", []answerCase{
		{"Gibt es bei euch einen Fahrstuhl?", "zugang"},
		{"Gibt es bei euch einen Paternoster?", ""},
	})
	// One of the commonest German words weighs nothing and has too many senses to be matched by its synonyms:
	// "Leute" is not the "Personen" of the base.
	withPersons := NewIndexForLocale(append(items, Item{ID: "gruppen", Title: "Gruppen", Content: "Eine Gruppe hat zwölf Personen."}), "de")
	if _, ok := withPersons.stemID(stemGerman("personen")); !ok || !slices.Contains(synonymsOf(germanThesaurus(), "leute"), stemGerman("personen")) {
		t.Fatal("the test needs Personen in the index and as a synonym of Leute")
	}
	if q := withPersons.parseQuery("Leute"); len(q.terms) != 1 || len(q.terms[0].alts) != 0 {
		t.Errorf("parseQuery(Leute) = %+v, want no match for one of the commonest words", q.terms)
	}
	if q := NewIndex(items).parseQuery("Fahrstuhl"); len(q.terms) != 1 || len(q.terms[0].alts) != 0 {
		t.Errorf("English parseQuery(Fahrstuhl) = %+v, want no match", q.terms)
	}
}

// BenchmarkGermanThesaurus measures what parsing the table costs the first German question of a process, and
// reports the heap the parsed table keeps (kept-bytes).
func BenchmarkGermanThesaurus(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		parseThesaurus(germanThesaurusTable, stemGerman)
	}
	b.StopTimer()
	before := heapInUse()
	th := parseThesaurus(germanThesaurusTable, stemGerman)
	b.ReportMetric(float64(heapInUse()-before), "kept-bytes")
	runtime.KeepAlive(th)
}
