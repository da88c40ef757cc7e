package lang

import (
	"math"
	"slices"
	"testing"
)

// similarity returns the cosine similarity of two words, and false when the table lacks either.
func (v *Vectors) similarity(a, b string) (float64, bool) {
	ra, ok := v.Row(a)
	if !ok {
		return 0, false
	}
	rb, ok := v.Row(b)
	if !ok {
		return 0, false
	}
	return v.Cosine(ra, rb), true
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
		v.Nearest(int32(row), func(r int32) { got = append(got, r) })
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
		vecs.Nearest(a, func(b int32) { listed[b] = true })
		for b := range int32(len(vecs.words)) {
			s := vecs.Cosine(a, b)
			switch {
			case b != a && s >= vecs.nearCosine+margin && !listed[b]:
				t.Errorf("%q and %q: cosine %.4f, not listed", vecs.words[a], vecs.words[b], s)
			case listed[b] && s < vecs.nearCosine-margin:
				t.Errorf("%q and %q: cosine %.4f, listed from %v", vecs.words[a], vecs.words[b], s, vecs.nearCosine)
			}
		}
	}
}
