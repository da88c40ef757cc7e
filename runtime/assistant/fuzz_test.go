package assistant

import (
	"context"
	"slices"
	"testing"
	"unicode/utf8"
)

// FuzzRespond checks that any item text, any question listed for it and any question asked (listed too, so that
// it may be answered first), in either language, give a reply and never a panic: an answer that cites items of
// the index, or the fallback with at most maxSuggestions of them. Run it longer with `go test ./runtime/assistant
// -run '^$' -fuzz FuzzRespond -fuzztime 1m`.
func FuzzRespond(f *testing.F) {
	for _, seed := range [][4]string{
		{"Opening hours", "We are open Monday to Friday from 9 am to 5 pm, at 17:30 Uhr on Saturdays.", "When do you close?", "when do you open?"},
		{"Prices", "Private examination 55. Call 020 7946 0958 or +49 341 1234567.", "", "how much is a check up"},
		{"United Kingdom", "We ship to the United Kingdom every six to twelve months at $25 a day.", "Do you ship to the UK?", "do you ship to the UK"},
		{"Kursgebühren", "Ein Intensivkurs kostet 480 Euro und dauert vier Wochen.", "Was kostet der Kurs?", "Wie lange dauert der Kurs, was kostet er?"},
		{"Motor repairs", "We fix e-bike motors and bikes.", "", "my chain snapped, so can you fix my motorbike? ,;:"},
		{"", "", "", ""},
		{"9:", "12.5 am 1-800- pm 99999999999999999999 €", "the a of", "5am 10.30pm how long how much is when"},
		{"\xff\xfe", "A\xc2B C\xe2\x82", "\xe2\x82 often?", "\xc2? how often"},
	} {
		f.Add(seed[0], seed[1], seed[2], seed[3])
	}
	f.Fuzz(func(t *testing.T, title, content, listed, question string) {
		items := []Item{
			{ID: "fuzzed", Title: title, Content: content, URL: "https://example.com/fuzzed", Questions: []string{listed, question}},
			{ID: "hours", Title: "Opening hours", Content: "We are open from 9am to 5pm.", URL: "https://example.com/hours"},
		}
		for _, locale := range []string{"en", "de"} {
			ix := NewIndexForLocale(items, locale)
			reply, err := Retrieval{}.Respond(context.Background(), Request{Message: question, Index: ix, Locale: locale})
			if err != nil {
				t.Fatalf("%s: %q: %v", locale, question, err)
			}
			if reply.Text == "" || !utf8.ValidString(reply.Text) && utf8.ValidString(title+content+question) {
				t.Fatalf("%s: %q: reply text %q", locale, question, reply.Text)
			}
			if reply.Kind == KindFallback && (reply.Answered || len(reply.Sources) > maxSuggestions) {
				t.Fatalf("%s: %q: fallback answered %v with %d suggestions", locale, question, reply.Answered, len(reply.Sources))
			}
			for _, s := range reply.Sources {
				if !slices.ContainsFunc(items, func(it Item) bool { return it.ID == s.KnowledgeID }) {
					t.Fatalf("%s: %q: source %q is no item", locale, question, s.KnowledgeID)
				}
			}
		}
	})
}
