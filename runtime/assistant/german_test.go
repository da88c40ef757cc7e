package assistant

import (
	"slices"
	"testing"

	"github.com/parley-dev/parley/runtime/assistant/lang"
)

// dogsItems is a German knowledge base in which dogs are welcome, in the plural only.
var dogsItems = []Item{
	{ID: "hunde", Title: "Tiere im Laden", Content: "Hunde sind bei uns an der Leine herzlich willkommen. Bringen Sie gern einen Napf mit."},
	{ID: "anfahrt", Title: "Anfahrt", Content: "Mit der Straßenbahn erreichen Sie uns von der Haltestelle Markt in fünf Minuten."},
	{ID: "kurse", Title: "Kurse und Preise", Content: "Ein Kurs kostet 420 Euro. Die Kursgebühr ist vor Kursbeginn fällig."},
	{ID: "anmeldung", Title: "Anmeldung", Content: "Sie können sich online oder im Büro anmelden."},
}

// A German question word the knowledge base lacks counts by its rarity in general German, as English ones do:
// "mitbringen" and the modal "darf" do not make a question about dogs look off-topic, a rare word does.
func TestGermanDeclineWeighsUnknownWordsByGeneralRarity(t *testing.T) {
	ix := NewIndexForLocale(dogsItems, "de")
	checkAnswers(t, ix, "de", []answerCase{
		{"Darf ich meinen Hund mitbringen?", "hunde"},
		{"Sind Hunde erlaubt?", "hunde"},
		{"Wie komme ich mit der Bahn zu euch?", "anfahrt"},
		{"Verkauft ihr Hundefutter aus Kängurufleisch?", ""},
	})
	// "gestern" is a common word of German, "känguru" is not: an unknown common word weighs little.
	q := ix.parseQuery("gestern känguru")
	if len(q.terms) != 2 || q.terms[0].idf > 0.3*ix.unknownIDF || q.terms[1].idf != ix.unknownIDF {
		t.Errorf("parseQuery(gestern känguru) = %+v, want a low idf for gestern and %v for känguru", q.terms, ix.unknownIDF)
	}
}

// A common German word the knowledge base lacks does not become informative by looking like one of its words:
// "Wetter", a word of the language, is no typo of "weiter", and "spielen", matched loosely to "spielerisch" and
// "Beispiel", weighs no more than its rarity in general German allows. A word no list has is still a typo.
func TestGermanDeclineCommonWordsMatchedLoosely(t *testing.T) {
	ix := NewIndexForLocale(append(slices.Clone(dogsItems), Item{ID: "spieleabend", Title: "Spieleabend",
		Content: "Jeden Freitag ist Spieleabend im Café, mit Schach zum Beispiel, spielerisch erklärt. Danach geht es weiter mit Karaoke."}), "de")
	checkAnswers(t, ix, "de", []answerCase{
		{"Wie wird das Wetter?", ""},
		{"Wann ist der Spieleabnd?", "spieleabend"},
	})
	if q := ix.parseQuery("Wetter"); len(q.terms) != 1 || len(q.terms[0].alts) != 0 {
		t.Errorf("parseQuery(Wetter) = %+v, want a word with no match", q.terms)
	}
	q := ix.parseQuery("spielen")
	rarity, _ := lang.German.Rarity("spielen")
	if len(q.terms) != 1 || len(q.terms[0].alts) == 0 || q.terms[0].idf > rarity*ix.unknownIDF+1e-9 {
		t.Errorf("parseQuery(spielen) = %+v, want loose matches and an idf of at most %v", q.terms, rarity*ix.unknownIDF)
	}
}

func TestGermanCompounds(t *testing.T) {
	ix := NewIndexForLocale(append(slices.Clone(dogsItems),
		Item{ID: "leinen", Title: "Leinen", Content: "Wir verkaufen Leinen in drei Längen."}), "de")
	words := func(terms []term) []string {
		var out []string
		for _, t := range terms {
			out = append(out, t.word)
		}
		return out
	}
	tests := []struct {
		question string
		want     []string
	}{
		{"Hundeleine", []string{"hunde", "leine"}}, // the index has both parts; "Hund-e-leine" keeps its linking e
		{"Kursgebühr", []string{"kursgebühr"}},     // the index has the compound itself
		{"Schwimmkurs", []string{"schwimmkurs"}},   // the index lacks "schwimm": not split
		{"mitbringen", []string{"bringen"}},        // the particle "mit" is a stop word
		{"anzumelden", []string{"anmelden"}},       // the zu-infinitive of "anmelden"
		{"Onlinekurs", []string{"online", "kurs"}}, // two indexed words written as one
	}
	for _, tt := range tests {
		if got := words(ix.cache.queryTerms(tt.question)); !slices.Equal(got, tt.want) {
			t.Errorf("queryTerms(%q) = %q, want %q", tt.question, got, tt.want)
		}
	}
	// A word the index has only as the head of a compound finds the compound: "Bahn" finds "Straßenbahn".
	if hits := ix.Search("Bahn", 1); len(hits) == 0 || hits[0].Item.ID != "anfahrt" {
		t.Errorf("Search(Bahn) = %v, want anfahrt", hits)
	}
	// "Kurs" and "Kurse", which Snowball stems as "kur" and "kurs", find each other.
	kurse := NewIndexForLocale([]Item{{ID: "kurse", Title: "Angebot", Content: "Unsere Kurse beginnen im März."}}, "de")
	if hits := kurse.Search("Kurs", 1); len(hits) == 0 {
		t.Error("Search(Kurs) found nothing in an index with Kurse")
	}
	// English indexes do not split: "Hundeleine" is one unknown word there.
	if got := words(NewIndex(dogsItems).cache.queryTerms("Hundeleine")); !slices.Equal(got, []string{"hundeleine"}) {
		t.Errorf("English queryTerms(Hundeleine) = %q, want it whole", got)
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
