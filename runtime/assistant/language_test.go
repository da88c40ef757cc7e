package assistant

import "testing"

func TestLanguageOf(t *testing.T) {
	for locale, want := range map[string]*language{
		"de": germanLanguage, "de-AT": germanLanguage, "DE_ch": germanLanguage,
		"": englishLanguage, "en-GB": englishLanguage, "fr": englishLanguage, "dk": englishLanguage,
	} {
		if got := languageOf(locale); got != want {
			t.Errorf("languageOf(%q) is not the expected language", locale)
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

// A merchant whose widget speaks German has its knowledge indexed and its visitors' questions searched with
// German stemming and stop words, and its fallback is German.
func TestGermanKnowledgeBase(t *testing.T) {
	items := []Item{
		{ID: "versand", Title: "Versand", Content: "Wir versenden innerhalb von drei Werktagen nach Deutschland und Österreich. Jede Lieferung ist versichert."},
		{ID: "rueckgabe", Title: "Rücksendung", Content: "Ungetragene Artikel können Sie innerhalb von 30 Tagen kostenlos zurückgeben."},
		{ID: "zahlung", Title: "Zahlungsarten", Content: "Sie bezahlen per Kreditkarte, PayPal oder auf Rechnung."},
	}
	de := NewIndexForLocale(items, "de-DE")
	replies := checkAnswers(t, de, "de-DE", []answerCase{
		{"Sind Lieferungen nach Österreich versichert?", "versand"},
		{"Wie viele Tage habe ich für Rücksendungen?", "rueckgabe"},
		{"Kann ich mit Kreditkarte bezahlen?", "zahlung"},
		{"Verkaufen Sie auch Fahrräder?", ""},
	})
	for _, reply := range replies {
		if !reply.Answered && reply.Text != textsFor("de").fallback {
			t.Errorf("fallback %q is not German", reply.Text)
		}
	}
	// Inflections only German stemming relates: "Lieferungen" to "Lieferung", "Rücksendungen" to "Rücksendung".
	en := NewIndex(items)
	for word, want := range map[string]string{"Lieferungen": "versand", "Rücksendungen": "rueckgabe"} {
		if hits := de.Search(word, 1); len(hits) == 0 || hits[0].Item.ID != want {
			t.Errorf("German Search(%q) = %v, want %s", word, hits, want)
		}
		if hits := en.Search(word, 1); len(hits) != 0 {
			t.Errorf("English Search(%q) = %v, want nothing: the test does not show German stemming", word, hits)
		}
	}
}
