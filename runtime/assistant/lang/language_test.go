package lang

import (
	"slices"
	"testing"
)

func TestLanguageOf(t *testing.T) {
	for locale, want := range map[string]*Language{
		"de": German, "de-AT": German, "DE_ch": German,
		"": English, "en-GB": English, "fr": English, "dk": English,
	} {
		if got := ForLocale(locale); got != want {
			t.Errorf("ForLocale(%q) is not the expected language", locale)
		}
	}
}

func TestStemGerman(t *testing.T) {
	for _, pair := range [][2]string{{"lieferung", "lieferungen"}, {"rücksendung", "rücksendungen"}, {"versichert", "versicherte"}, {"tage", "tagen"}} {
		if a, b := stemGerman(pair[0]), stemGerman(pair[1]); a != b {
			t.Errorf("stemGerman(%q) = %q, stemGerman(%q) = %q: want the same stem", pair[0], a, pair[1], b)
		}
	}
}

func TestClassifySmallTalk(t *testing.T) {
	tests := []struct {
		msg  string
		want SmallTalk
	}{
		{"hi", Greeting},
		{"Hello!", Greeting},
		{"hey there", Greeting},
		{"Good morning :)", Greeting},
		{"hi team, good afternoon", Greeting},
		{"Hallo", Greeting},
		{"Guten Tag!", Greeting},
		{"thanks", Thanks},
		{"Thank you!", Thanks},
		{"thanks a lot, that was helpful", Thanks},
		{"ok bye", Thanks},
		{"Goodbye and have a nice day", Thanks},
		{"Vielen Dank!", Thanks},
		{"hi, what is your return policy?", NotSmallTalk},
		{"hello, do you ship to Canada", NotSmallTalk},
		{"thanks, and how long does shipping take?", NotSmallTalk},
		{"good", NotSmallTalk},
		{"", NotSmallTalk},
		{"return policy", NotSmallTalk},
	}
	for _, tt := range tests {
		if got := ClassifySmallTalk(tt.msg); got != tt.want {
			t.Errorf("ClassifySmallTalk(%q) = %v, want %v", tt.msg, got, tt.want)
		}
	}
}

func TestSplitClauses(t *testing.T) {
	tests := []struct {
		lang    *Language
		message string
		want    []string
	}{
		{English, "is breakfast included", []string{"is breakfast included"}},
		{English, "do you rent a sleeping bag and tent", []string{"do you rent a sleeping bag and tent"}}, // one thing asked
		{English, "can I bring my dog and is breakfast included?", []string{"can I bring my dog", "is breakfast included"}},
		{English, "Where do I park? Is it free", []string{"Where do I park", "Is it free"}},
		{English, "can I check in early, also do you have a lift", []string{"can I check in early", "do you have a lift"}},
		{German, "darf mein Hund mit und ist das Frühstück inklusive", []string{"darf mein Hund mit", "ist das Frühstück inklusive"}},
		{German, "kann ich den Hund mitbringen, außerdem gibt es Parkplätze", []string{"kann ich den Hund mitbringen", "gibt es Parkplätze"}},
		{German, "kann ich den Hund mitbringen and the cat too please", []string{"kann ich den Hund mitbringen and the cat too please"}}, // "and" joins nothing in German
		{English, "", nil},
	}
	for _, tt := range tests {
		if got := tt.lang.SplitClauses(tt.message); !slices.Equal(got, tt.want) {
			t.Errorf("SplitClauses(%q) = %q, want %q", tt.message, got, tt.want)
		}
	}
}

func TestStoryWords(t *testing.T) {
	tests := []struct {
		lang    *Language
		message string
		want    []string
	}{
		{English, "the brakes squeal when it rains, can you fit new pads?", []string{"the", "brakes", "squeal", "when", "it", "rains"}},
		{English, "my chain snapped. So can you fit a chain today?", []string{"my", "snapped"}},
		{English, "can you fit new pads?", nil},                 // one clause
		{English, "my chain snapped, no idea what to do", nil},  // no clause asks
		{English, "can you fit pads, and how much is it?", nil}, // every clause asks
		{German, "Der Kurs ist voll, kann ich trotzdem kommen?", []string{"der", "kurs", "ist", "voll"}},
	}
	for _, tt := range tests {
		if got := tt.lang.StoryWords(tt.message); !slices.Equal(got, tt.want) {
			t.Errorf("StoryWords(%q) = %q, want %q", tt.message, got, tt.want)
		}
	}
}

// Each language offers the resources its file declares, and nothing from the other's: the engine asks what a
// language offers, never which language it is.
func TestResources(t *testing.T) {
	for _, tt := range []struct {
		name string
		lang *Language
		has  bool // English's resources; German has the others
	}{{"English", English, true}, {"German", German, false}} {
		offers := map[string]bool{
			"synonyms":        len(tt.lang.Synonyms(tt.lang.Stem("colour"))) > 0,
			"derived forms":   len(tt.lang.Derived(tt.lang.Stem("pregnant"))) > 0,
			"phrasal verbs":   len(tt.lang.Phrasal("punch", "in")) > 0,
			"apart compounds": !tt.lang.WritesCompounds(),
		}
		for resource, got := range offers {
			if got != tt.has {
				t.Errorf("%s: %s is %v, want %v", tt.name, resource, got, tt.has)
			}
		}
	}
}

// TestWithout checks that a language without a resource offers nothing of it, and that the language it was
// copied from keeps it: the languages are shared by every index.
func TestWithout(t *testing.T) {
	if len(English.Synonyms(English.Stem("cost"))) == 0 || English.Phrasal(English.Stem("work"), "out") == nil {
		t.Fatal("English has no synonyms of cost or no meaning of work out")
	}
	tests := []struct {
		r    Resource
		gone func(l *Language) bool
	}{
		{Synonyms, func(l *Language) bool { return l.Synonyms(l.Stem("cost")) == nil }},
		{Phrasal, func(l *Language) bool { return l.Phrasal(l.Stem("work"), "out") == nil }},
		{Irregular, func(l *Language) bool { return l.Stem("spent") != l.Stem("spend") }},
		{Idioms, func(l *Language) bool { out, _ := l.RewriteIdioms([]string{"money", "back"}); return out[0] == "money" }},
		{Story, func(l *Language) bool { return l.StoryWords("my chain snapped, can I drop in") == nil }},
	}
	for _, tt := range tests {
		if !tt.gone(English.Without(tt.r)) {
			t.Errorf("English without %s still has it", tt.r)
		}
		if tt.gone(English) {
			t.Errorf("English lost %s when a copy went without it", tt.r)
		}
	}
}
