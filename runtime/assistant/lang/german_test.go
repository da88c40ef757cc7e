package lang

import (
	"slices"
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

// German offers the ways a word may be a compound, longest head first, for the engine to look up in its
// vocabulary; English, which writes compounds apart, offers none.
func TestCompoundSplits(t *testing.T) {
	var got []string
	for mod, head := range German.CompoundSplits("hundeleine") {
		got = append(got, mod+"+"+head)
	}
	if want := []string{"hun+deleine", "hund+eleine", "hunde+leine", "hundel+eine"}; !slices.Equal(got, want) {
		t.Errorf("CompoundSplits(hundeleine) = %q, want %q", got, want)
	}
	for range German.CompoundSplits("hundx") { // too short for a modifier and a head
		t.Error("CompoundSplits(hundx) yields a split")
	}
	for range English.CompoundSplits("checkout") {
		t.Error("English offers compound splits")
	}
	if English.WritesCompounds() || !German.WritesCompounds() {
		t.Error("WritesCompounds: want German only")
	}
}

func TestUnlinked(t *testing.T) {
	tests := []struct {
		modifier string
		want     []string
	}{
		{"hunde", []string{"hund"}},              // Hund-e-leine
		{"prüfungs", []string{"prüfung"}},        // Prüfung-s-ergebnis
		{"straßen", []string{"straß", "straße"}}, // "-en", then "-n": the engine takes the first it has
		{"abs", nil}, // "ab" is too short to be a modifier
		{"lieferes", []string{"liefer", "liefere"}}, // "-es" before "-s"
	}
	for _, tt := range tests {
		var got []string
		for m := range German.Unlinked(tt.modifier) {
			got = append(got, m)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("Unlinked(%q) = %q, want %q", tt.modifier, got, tt.want)
		}
	}
}

func TestInfinitives(t *testing.T) {
	var got []string
	for inf := range German.Infinitives("vorzubereiten") {
		got = append(got, inf)
	}
	if want := []string{"vorbereiten"}; !slices.Equal(got, want) {
		t.Errorf("Infinitives(vorzubereiten) = %q, want %q", got, want)
	}
	for inf := range German.Infinitives("zumachen") { // "zu" at the start is no infix
		t.Errorf("Infinitives(zumachen) yields %q", inf)
	}
	for inf := range English.Infinitives("vorzubereiten") {
		t.Errorf("English Infinitives yields %q", inf)
	}
}

func TestOtherForm(t *testing.T) {
	tests := []struct {
		lang *Language
		word string
		want string
		ok   bool
	}{
		{German, "kurs", "kurse", true},
		{German, "kurse", "kurs", true},
		{German, "tag", "", false}, // shorter than a compound's head
		{English, "course", "", false},
	}
	for _, tt := range tests {
		if got, ok := tt.lang.OtherForm(tt.word); got != tt.want || ok != tt.ok {
			t.Errorf("OtherForm(%q) = %q, %v; want %q, %v", tt.word, got, ok, tt.want, tt.ok)
		}
	}
}
