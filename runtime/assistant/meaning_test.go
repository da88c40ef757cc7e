package assistant

import (
	"cmp"
	"context"
	"math"
	"slices"
	"testing"

	"github.com/parley-dev/parley/runtime/assistant/lang"
)

// Looking neighbours up in the table finds what comparing the word with every term of the index finds, on the
// evaluation bases with every word of their questions.
func TestNeighboursAsByScan(t *testing.T) {
	vecs := lang.English.Vectors()
	for _, qb := range qualityBases {
		if qb.locale != "" {
			continue
		}
		ix := NewIndex(baseItems(t, qb.name))
		byID := slices.Clone(ix.vectorTerms)
		slices.SortFunc(byID, func(a, b rowTerm) int { return int(a.id - b.id) })
		for _, part := range qualityParts {
			for _, q := range baseQuestions(t, qb.name, part) {
				for _, w := range lang.Tokenize(q.Q) {
					row, ok := vecs.Row(w)
					if r, _ := lang.English.Rarity(w); !ok || r == 0 {
						continue
					}
					var want []neighbour
					for _, tm := range byID {
						if s := vecs.Cosine(row, tm.row); s >= minSimilarity {
							want = append(want, neighbour{id: tm.id, similarity: s})
						}
					}
					slices.SortStableFunc(want, func(a, b neighbour) int { return cmp.Compare(b.similarity, a.similarity) })
					want = want[:min(len(want), maxNeighbours)]
					if got := ix.neighbours(w); !slices.Equal(got, want) {
						t.Errorf("%s: neighbours(%q) = %v, want %v", qb.name, w, got, want)
					}
				}
			}
		}
	}
}

func TestMeaningShare(t *testing.T) {
	tests := []struct{ similarity, want float64 }{
		{1, 1},
		{0.75, 0.5},
		{unrelatedSimilarity, 0},
		{minSimilarity, 0.2},
		{0.3, 0},
		{-0.2, 0},
	}
	for _, tt := range tests {
		if got := meaningShare(tt.similarity); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("meaningShare(%v) = %v, want %v", tt.similarity, got, tt.want)
		}
	}
}

// meaningItems is a small knowledge base for the matching by meaning.
var meaningItems = []Item{
	{ID: "clocking", Title: "Clocking in", Content: "Employees record the start of their shift on the tablet at the entrance."},
	{ID: "payslips", Title: "Payslips", Content: "Payslips are emailed on the last Friday of the month."},
	{ID: "holidays", Title: "Holiday requests", Content: "Request annual leave in the app at least two weeks ahead."},
}

// A question word the base lacks but whose near neighbour it has is matched to the neighbour, for a share, and
// is not counted as unknown; one with no neighbour in the base is.
func TestNeighbourIsNotUnknown(t *testing.T) {
	ix := NewIndex(meaningItems)
	employees, ok := ix.stemID(lang.English.Stem("employees"))
	if !ok {
		t.Fatal("the index lacks employees")
	}
	q := ix.parseQuery("workers")
	if len(q.terms) != 1 {
		t.Fatalf("parseQuery(workers) = %+v, want one term", q)
	}
	var share float64
	for _, a := range q.terms[0].alts {
		if a.id == employees {
			share = a.factor
		}
	}
	if share <= 0 || share >= 1 {
		t.Errorf("workers matches employees for a share of %v, want between 0 and 1", share)
	}
	m := ix.rank(q, 1)
	if len(m) == 0 || ix.items[m[0].doc].ID != "clocking" || m[0].covered <= 0 {
		t.Errorf("rank(workers) = %+v, want clocking, with the word partly explained", m)
	}
	if q := ix.parseQuery("tattoo"); len(q.terms) != 1 || len(q.terms[0].alts) != 0 {
		t.Errorf("parseQuery(tattoo) = %+v, want one term with no match", q)
	}
}

// The decline rule: a question whose informative word the base explains through a near neighbour is answered;
// one about what the base has nothing near to is declined, though it shares the same small words.
func TestDeclineByMeaning(t *testing.T) {
	ix := NewIndex(meaningItems)
	r := Retrieval{}
	for q, want := range map[string]string{
		"how do workers clock in":   "clocking", // declined if "workers" counted as unknown
		"where do I get a tattoo":   "",
		"do you sell bicycles":      "",
		"can my horse clock in too": "",
	} {
		reply, err := r.Respond(context.Background(), Request{Message: q, Index: ix})
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if reply.Kind == KindAnswer {
			got = reply.Sources[0].KnowledgeID
		}
		if got != want {
			t.Errorf("Respond(%q) = %s %q, want %q", q, reply.Kind, got, want)
		}
	}
}

// Without vectors, as for a German index, no word is matched by meaning.
func TestNoNeighboursInGerman(t *testing.T) {
	ix := NewIndexForLocale([]Item{{ID: "a", Title: "Mitarbeiter", Content: "Mitarbeiter stempeln am Eingang."}}, "de")
	if n := ix.neighbours("arbeiter"); n != nil || ix.vectorTerms != nil {
		t.Errorf("German index: neighbours = %v, vectorTerms = %v; want none", n, ix.vectorTerms)
	}
}

// The word vectors list each word's nearest words from a cosine no higher than minSimilarity, so that looking a
// word's neighbours up in the lists finds every indexed word near enough to count.
func TestNearestListedFromMinSimilarity(t *testing.T) {
	if c := lang.English.Vectors().NearCosine(); c > minSimilarity {
		t.Errorf("nearest words listed from a cosine of %g, above minSimilarity %g: write the table again (hack/wordvec)", c, minSimilarity)
	}
}

// BenchmarkNeighbours matches a word by meaning over an index of 1,000 items with a vocabulary like a merchant's
// thousand help pages (see withGeneralWords): some 12,000 terms with a word vector.
func BenchmarkNeighbours(b *testing.B) {
	ix := NewIndex(withGeneralWords(syntheticItems(b, 1000)))
	b.ReportMetric(float64(len(ix.vectorTerms)), "terms")
	for b.Loop() {
		ix.neighbours("voucher")
	}
}

// generalWord returns the word at a row of the English word vectors, which list the commonest words first.
func generalWord(row int) string { return lang.English.Vectors().Word(int32(row)) }

// An English word of the word vectors' vocabulary is spelt right: it is not matched as a typo of an indexed word
// one letter away ("parking" is no "packing"), while a misspelling still is ("pakcing").
func TestWordOfTheVectorsIsNoTypo(t *testing.T) {
	ix := NewIndex([]Item{{ID: "packing", Title: "Packing lists", Content: "What to bring on a hiking trip."}})
	packing, ok := ix.stemID(lang.English.Stem("packing"))
	if !ok {
		t.Fatal("the index lacks packing")
	}
	matches := func(word string) bool {
		q := ix.parseQuery(word)
		return len(q.terms) == 1 && slices.ContainsFunc(q.terms[0].alts, func(a alt) bool { return a.id == packing })
	}
	if !lang.English.SpelledRight("parking") || lang.English.SpelledRight("pakcing") {
		t.Fatalf("lang.English.SpelledRight(parking), lang.English.SpelledRight(pakcing) = %v, %v; want true, false", lang.English.SpelledRight("parking"), lang.English.SpelledRight("pakcing"))
	}
	if matches("parking") {
		t.Error("parking matches packing as a typo")
	}
	if !matches("pakcing") {
		t.Error("pakcing does not match packing as a typo")
	}
}
