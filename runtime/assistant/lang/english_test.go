package lang

import (
	"math"
	"slices"
	"testing"
)

func TestGeneralRarity(t *testing.T) {
	tests := []struct {
		word string
		want float64
	}{
		{"the", 0},        // among the commonest words of all
		{"even", 0},       // Zipf 5.9
		{"leave", 0},      // Zipf 5.8
		{"car", 0.2},      // Zipf 5.7
		{"business", 0.6}, // Zipf 5.5
		{"dog", 1},        // Zipf 5.3
		{"tattoo", 1},     // rarer than the table lists
		{"quickbooks", 1}, // a name no general list has
	}
	for _, tt := range tests {
		got, listed := generalRarity(tt.word)
		if math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("generalRarity(%q) = %v, want %v", tt.word, got, tt.want)
		}
		if want := tt.word != "tattoo" && tt.word != "quickbooks"; listed != want {
			t.Errorf("generalRarity(%q) listed = %v, want %v", tt.word, listed, want)
		}
	}
}

func TestLemma(t *testing.T) {
	tests := []struct{ word, want string }{
		{"spent", "spend"},
		{"children", "child"},
		{"bought", "buy"},
		{"mice", "mouse"},
		{"best", "best"},   // the adjective list ("best" as "good") is left out
		{"boots", "boots"}, // regular forms are the stemmer's
		{"", ""},
	}
	for _, tt := range tests {
		if got := lemma(tt.word); got != tt.want {
			t.Errorf("lemma(%q) = %q, want %q", tt.word, got, tt.want)
		}
	}
}

func TestDerivedStems(t *testing.T) {
	tests := []struct {
		word    string
		related string
		want    bool
	}{
		{"pregnant", "pregnancy", true},
		{"pregnancy", "pregnant", true}, // the table lists each pair once; the lookup goes both ways
		{"decision", "decide", true},
		{"pregnant", "pregnant", false}, // a word is no form of its own
		{"pregnant", "tooth", false},
	}
	for _, tt := range tests {
		if got := slices.Contains(derivedStems()[stemEnglish(tt.word)], stemEnglish(tt.related)); got != tt.want {
			t.Errorf("derivedStems()[%q] has %q: %v, want %v", stemEnglish(tt.word), stemEnglish(tt.related), got, tt.want)
		}
	}
}

func TestStemKeepsAnt(t *testing.T) {
	tests := []struct{ a, b string }{
		{"accountant", "account"},
		{"assistant", "assist"},
		{"important", "import"},
	}
	for _, tt := range tests {
		if stemEnglish(tt.a) == stemEnglish(tt.b) {
			t.Errorf("stemEnglish(%q) = stemEnglish(%q) = %q, want them apart", tt.a, tt.b, stemEnglish(tt.a))
		}
	}
	for _, w := range []string{"accountants", "Accountant's"} {
		if got := stemEnglish(Tokenize(w)[0]); got != stemEnglish("accountant") {
			t.Errorf("stemEnglish(%q) = %q, want %q", w, got, stemEnglish("accountant"))
		}
	}
	// Words Snowball leaves whole stay whole ("pregnant", "restaurant").
	for _, w := range []string{"pregnant", "restaurant", "plant"} {
		if got := stemEnglish(w); got != w {
			t.Errorf("stemEnglish(%q) = %q, want it whole", w, got)
		}
	}
}
