package lang

import (
	"slices"
	"testing"
)

// The table is read by the stem of the verb and the particle; the commonest words of English in it are left out.
func TestParsePhrasal(t *testing.T) {
	got := parsePhrasal("# header\npunch_in clock\nworks_out elaborate exercise get\n")
	if c := got["punch"]["in"]; !slices.Equal(c, []string{"clock"}) {
		t.Errorf("punch in: %v, want [clock]", c)
	}
	if c := got[stemEnglish("working")]["out"]; !slices.Equal(c, []string{stemEnglish("elaborate"), stemEnglish("exercise")}) {
		t.Errorf("work out: %v, want the stems of elaborate and exercise", c)
	}
	if c := phrasalStems()["punch"]["in"]; !slices.Contains(c, "clock") {
		t.Errorf("embedded table: punch in means %v, want clock among them", c)
	}
	if c := phrasalStems()["work"]["out"]; !slices.Contains(c, stemEnglish("exercise")) {
		t.Errorf("embedded table: work out means %v, want exercise among them", c)
	}
	// "Sign up" for a club is a sense of its own in WordNet, a kind of joining.
	if c := phrasalStems()["sign"]["up"]; !slices.Contains(c, stemEnglish("join")) {
		t.Errorf("embedded table: sign up means %v, want join among them", c)
	}
}

// BenchmarkParsePhrasal measures reading the table of phrasal verbs, which a process does once.
func BenchmarkParsePhrasal(b *testing.B) {
	for b.Loop() {
		parsePhrasal(phrasalTable)
	}
}
