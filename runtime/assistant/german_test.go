package assistant

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
	rarity, _ := germanRarity("spielen")
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
