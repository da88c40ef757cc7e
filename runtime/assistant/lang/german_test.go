package lang

import (
	"testing"
)

func TestGermanRarity(t *testing.T) {
	tests := []struct {
		word     string
		min, max float64
	}{
		{"ich", 0, 0},      // the commonest word of German subtitles
		{"leute", 0, 0},    // among the germanCommonRank commonest
		{"hund", 0.2, 0.4}, // common, but a topic
		{"studenten", 0.6, 0.8},
		{"ausgebucht", 0.99, 1}, // ranked last but one
		{"schwimmkurs", 1, 1},
	}
	for _, tt := range tests {
		got, listed := germanRarity(tt.word)
		if got < tt.min-1e-9 || got > tt.max+1e-9 {
			t.Errorf("germanRarity(%q) = %v, want %v to %v", tt.word, got, tt.min, tt.max)
		}
		if want := tt.word != "schwimmkurs"; listed != want {
			t.Errorf("germanRarity(%q) listed = %v, want %v", tt.word, listed, want)
		}
	}
	if n := len(germanRanks()); n != germanRareRank {
		t.Errorf("the German table has %d words, want germanRareRank = %d: regenerate it with hack/wordfreqde", n, germanRareRank)
	}
}
