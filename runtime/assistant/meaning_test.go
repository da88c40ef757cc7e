package assistant

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strings"
	"testing"
)

// similarity returns the cosine similarity of two words, and false when the table lacks either.
func (v *wordVectors) similarity(a, b string) (float64, bool) {
	ra, ok := v.row(a)
	if !ok {
		return 0, false
	}
	rb, ok := v.row(b)
	if !ok {
		return 0, false
	}
	return v.cosine(ra, rb), true
}

// Words alike in meaning are nearer than unrelated ones, and the table finds a form it lacks through its stem.
func TestWordVectorsNeighbours(t *testing.T) {
	vecs := vectors()
	tests := []struct {
		word, near string
		far        []string
	}{
		{"close", "closing", []string{"banana", "voucher", "dentist"}},
		{"close", "shut", []string{"banana", "voucher", "invoice"}},
		{"voucher", "coupon", []string{"banana", "tent", "dentist"}},
		{"workers", "employees", []string{"tent", "banana", "breakfast"}},
		{"physician", "doctor", []string{"invoice", "parking", "tent"}},
		{"purchase", "buy", []string{"dentist", "weather", "banana"}},
	}
	for _, tt := range tests {
		near, ok := vecs.similarity(tt.word, tt.near)
		if !ok {
			t.Fatalf("similarity(%q, %q): a word is missing from the table", tt.word, tt.near)
		}
		for _, far := range tt.far {
			if s, ok := vecs.similarity(tt.word, far); !ok || s >= near {
				t.Errorf("similarity(%q, %q) = %.2f, want below similarity(%q, %q) = %.2f", tt.word, far, s, tt.word,
					tt.near, near)
			}
		}
	}
	if s, ok := vecs.similarity("refundable", "refund"); !ok || s < 0.99 {
		t.Errorf("similarity(refundable, refund) = %.2f, %v; want the stem's own vector", s, ok)
	}
	if _, ok := vecs.similarity("qwxzzy", "refund"); ok {
		t.Error("similarity of a word the table lacks: want false")
	}
}

func TestParseWordVectors(t *testing.T) {
	// Two words of four dimensions: "a" is (1, -1, 7, 0), "b" is (2, -2, 14, 0)/2 rounded, the same direction;
	// each lists the other as nearest (one row each, two bytes little-endian after the count).
	const head, vecs = "parley-wordvec 2 2 4 0.59\na\nb\n", "\xF1\x07\xF1\x07"
	good := head + vecs + "\x01\x00\x01\x00" + "\x01\x00\x00\x00"
	v, err := parseWordVectors(good)
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := v.similarity("a", "b"); !ok || math.Abs(s-1) > 1e-6 {
		t.Errorf("similarity(a, b) = %v, %v; want 1", s, ok)
	}
	for row, want := range [][]int32{{1}, {0}} {
		var got []int32
		v.nearest(int32(row), func(r int32) { got = append(got, r) })
		if !slices.Equal(got, want) {
			t.Errorf("nearest(%d) = %v, want %v", row, got, want)
		}
	}
	for name, table := range map[string]string{
		"no header":        "",
		"bad header":       "wordvec 2 4\na\nb\n",
		"version 1":        "parley-wordvec 1 2 4\na\nb\n" + vecs,
		"odd dims":         "parley-wordvec 2 1 3 0.59\na\n12\x00\x00",
		"missing words":    "parley-wordvec 2 3 4 0.59\na\nb\n",
		"short vectors":    head + "\x01\x02\x03",
		"no lists":         head + vecs,
		"one list missing": head + vecs + "\x00\x00",
		"list too long":    head + vecs + "\x02\x00\x01\x00" + "\x00\x00",
		"row out of range": head + vecs + "\x01\x00\x02\x00" + "\x00\x00",
		"trailing bytes":   good + "\x00",
	} {
		if _, err := parseWordVectors(table); err == nil {
			t.Errorf("%s: want an error", name)
		}
	}
}

// The lists of nearest words in the table hold every word at least as similar as they promise, and no other:
// checked against a comparison with every word for a sample of them.
func TestNearestWordsListed(t *testing.T) {
	vecs := vectors()
	const margin = 1e-6 // for rounding: the table was computed in other arithmetic
	for a := int32(0); int(a) < len(vecs.words); a += 499 {
		listed := make(map[int32]bool)
		vecs.nearest(a, func(b int32) { listed[b] = true })
		for b := range int32(len(vecs.words)) {
			s := vecs.cosine(a, b)
			switch {
			case b != a && s >= vecs.nearCosine+margin && !listed[b]:
				t.Errorf("%q and %q: cosine %.4f, not listed", vecs.words[a], vecs.words[b], s)
			case listed[b] && s < vecs.nearCosine-margin:
				t.Errorf("%q and %q: cosine %.4f, listed from %v", vecs.words[a], vecs.words[b], s, vecs.nearCosine)
			}
		}
	}
}

// Looking neighbours up in the table finds what comparing the word with every term of the index finds, on the
// evaluation bases with every word of their questions.
func TestNeighboursAsByScan(t *testing.T) {
	vecs := vectors()
	for _, qb := range qualityBases {
		if qb.locale != "" {
			continue
		}
		ix := NewIndex(baseItems(t, qb.name))
		byID := slices.Clone(ix.vectorTerms)
		slices.SortFunc(byID, func(a, b rowTerm) int { return int(a.id - b.id) })
		for _, part := range qualityParts {
			for _, q := range baseQuestions(t, qb.name, part) {
				for _, w := range tokenize(q.Q) {
					row, ok := vecs.row(w)
					if r, _ := generalRarity(w); !ok || r == 0 {
						continue
					}
					var want []neighbour
					for _, tm := range byID {
						if s := vecs.cosine(row, tm.row); s >= minSimilarity {
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
	employees, ok := ix.stemID(stem("employees"))
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
	if strings.TrimSpace(wordvecTable) == "" {
		t.Error("the embedded table is empty")
	}
}

// An English word of the word vectors' vocabulary is spelt right: it is not matched as a typo of an indexed word
// one letter away ("parking" is no "packing"), while a misspelling still is ("pakcing").
func TestWordOfTheVectorsIsNoTypo(t *testing.T) {
	ix := NewIndex([]Item{{ID: "packing", Title: "Packing lists", Content: "What to bring on a hiking trip."}})
	packing, ok := ix.stemID(stem("packing"))
	if !ok {
		t.Fatal("the index lacks packing")
	}
	matches := func(word string) bool {
		q := ix.parseQuery(word)
		return len(q.terms) == 1 && slices.ContainsFunc(q.terms[0].alts, func(a alt) bool { return a.id == packing })
	}
	if !spelledRight("parking") || spelledRight("pakcing") {
		t.Fatalf("spelledRight(parking), spelledRight(pakcing) = %v, %v; want true, false", spelledRight("parking"), spelledRight("pakcing"))
	}
	if matches("parking") {
		t.Error("parking matches packing as a typo")
	}
	if !matches("pakcing") {
		t.Error("pakcing does not match packing as a typo")
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
