package lang

import (
	"runtime"
	"slices"
	"strings"
	"testing"
)

// synonymsOf returns the stems th gives as synonyms of word's stem, in the order it gives them.
func synonymsOf(th *Thesaurus, word string) []string {
	var out []string
	th.Synonyms(stemGerman(strings.ToLower(word)), func(s string) { out = append(out, s) })
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

// heapInUse is the bytes of live heap objects after a full collection.
func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
