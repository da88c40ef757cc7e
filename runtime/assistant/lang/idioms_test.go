package lang

import (
	"slices"
	"strings"
	"testing"
)

func TestRewriteIdioms(t *testing.T) {
	tests := []struct {
		in, want string
		idioms   []idiom
	}{
		{"how long is shipping", MarkerDuration + " is shipping", englishIdioms},
		{"when do you open", "when " + MarkerTime + " " + MarkerDuration + " do you open", englishIdioms},
		{"my gums bleed when i brush", "my gums bleed when i brush", englishIdioms},
		{"what time is breakfast", "what time " + MarkerTime + " is breakfast", englishIdioms},
		{"how much profit did i make", "how much profit did i make", englishIdioms},
		{"how much is a check up", "how much is " + MarkerMoney + " a check up", englishIdioms},
		{"can I have my money back", "can i have my refund", englishIdioms},
		{"i want to talk to a real person", "i want to contact", englishIdioms},
		{"is there anywhere to leave the car", "is there anywhere to parking car", englishIdioms},
		{"send it to my address and bring it back", "send it to my address and bring it back", englishIdioms},
		{"Wie lange dauert der Kurs?", "wie lange " + MarkerDuration + " dauert der kurs", germanIdioms},
		{"Was kostet ein Intensivkurs?", "was kostet " + MarkerMoney + " ein intensivkurs", germanIdioms},
	}
	for _, tt := range tests {
		got, fromIdiom := rewriteIdioms(Tokenize(tt.in), tt.idioms)
		if want := strings.Fields(tt.want); !slices.Equal(got, want) {
			t.Errorf("rewriteIdioms(%q) = %q, want %q", tt.in, got, want)
		}
		rewritten := !slices.Equal(Tokenize(tt.in), got)
		if marked := slices.Index(fromIdiom, true) >= 0; marked != rewritten || marked && len(fromIdiom) != len(got) {
			t.Errorf("rewriteIdioms(%q) marks %v as put in by an idiom", tt.in, fromIdiom)
		}
		for i, w := range got {
			if IsMarker(w) && !fromIdiom[i] {
				t.Errorf("rewriteIdioms(%q): marker %s not marked as put in by an idiom", tt.in, w)
			}
		}
	}
}
