package assistant

import (
	"slices"
	"testing"
)

func TestAppendAnswerTypes(t *testing.T) {
	tests := []struct {
		lang     *language
		sentence string
		priced   bool
		want     []string
	}{
		{englishLanguage, "We are open Monday to Friday from 9 am to 5 pm.", false, []string{markerTime}},
		{englishLanguage, "Check-in is from 3pm, check-out by 10.30am.", false, []string{markerTime}},
		{englishLanguage, "The desk is staffed 08:00 to 22:00.", false, []string{markerTime}},
		{englishLanguage, "Treatment takes three to six months from start to finish.", false, []string{markerDuration}},
		{englishLanguage, "Refunds arrive within 5 to 7 business days.", false, []string{markerDuration}},
		{englishLanguage, "We recommend a check-up every six to twelve months.", false, []string{markerFrequency}},
		{englishLanguage, "Brush twice a day.", false, []string{markerFrequency}},
		{englishLanguage, "A tent rents for $25 a day.", false, []string{markerMoney}},
		{englishLanguage, "Starter costs 9 a month for one user.", false, []string{markerMoney}},
		{englishLanguage, "The car park costs nothing; parking is at 18 per 24 hours.", false, []string{markerMoney}},
		{englishLanguage, "Parking is at 18 per 24 hours.", false, []string{markerMoney}},
		{englishLanguage, "Private examination 55.", true, []string{markerMoney}},
		{englishLanguage, "Private examination 55.", false, nil},
		{englishLanguage, "Call us on 020 7946 0958.", false, []string{markerPhone}},
		{englishLanguage, "Call us at 1-800-555-0199 from 8 am.", false, []string{markerTime, markerPhone}},
		// Numbers that are none of them: a count, an amount without a price word, a date, a decimal.
		{englishLanguage, "The car park has 40 spaces.", false, nil},
		{englishLanguage, "Implants start at 2,400 per tooth.", false, nil},
		{englishLanguage, "The offer ends on 2026-11-24.", false, nil},
		{englishLanguage, "The height limit is 1.90 metres.", false, nil},
		{englishLanguage, "Everyone is welcome.", false, nil},
		{germanLanguage, "Das Büro ist von 9.00 bis 17.30 Uhr geöffnet.", false, []string{markerTime}},
		{germanLanguage, "Ein Intensivkurs kostet 480 Euro und dauert vier Wochen.", false, []string{markerDuration, markerMoney}},
		{germanLanguage, "Das Sprachcafé findet jeden Donnerstag statt.", false, nil},
		{germanLanguage, "Der Kurs trifft sich jede Woche.", false, []string{markerFrequency}},
		{germanLanguage, "Rufen Sie uns an: 0341 1234567.", false, []string{markerPhone}},
	}
	for _, tt := range tests {
		tokens := tokenize(tt.sentence)
		if got := tt.lang.appendAnswerTypes(nil, tokens, tt.sentence, tt.priced); !slices.Equal(got, tt.want) {
			t.Errorf("appendAnswerTypes(%q, priced %v) = %q, want %q", tt.sentence, tt.priced, got, tt.want)
		}
	}
}

// TestAnswerTypes checks that the answer type a question asks for decides between the items its words find,
// and finds nothing by itself.
func TestAnswerTypes(t *testing.T) {
	ix := NewIndex([]Item{
		{ID: "exam", Title: "Your first visit", Content: "The initial examination takes 45 minutes."},
		{ID: "refund-time", Title: "Refund times", Content: "Refunds go back to your card within 5 to 7 business days."},
		{ID: "refund-policy", Title: "Refund policy", Content: "We refund unused items with their receipt. The refund is paid to your card."},
		{ID: "hours", Title: "Opening hours", Content: "We are open Monday to Saturday from 9 am to 6 pm."},
		{ID: "contact", Title: "Contact us", Content: "Call us on 020 7946 0958 or write to our team."},
		{ID: "stores", Title: "Our stores", Content: "Find the address and phone number of each store on the stores page."},
		{ID: "checkup", Title: "Check-ups", Content: "We recommend a check-up every six to twelve months."},
		{ID: "first-checkup", Title: "Your first check-up", Content: "Your first check-up is a longer check-up, with x-rays."},
	})
	for _, tt := range []struct{ question, item string }{
		{"how long is the initial examination", "exam"},
		{"when will I get my refund", "refund-time"},
		{"what is your phone number", "contact"},
		{"how often should I have a check-up", "checkup"},
	} {
		m := ix.rank(ix.parseQuery(tt.question), 1)
		if len(m) == 0 || ix.items[ix.docs[m[0].doc].item].ID != tt.item {
			t.Errorf("%q: hits %+v, want %s first", tt.question, m, tt.item)
		}
	}
	// The type counts for an item that has it: the examination's length is all the question asks.
	if m := ix.rank(ix.parseQuery("how long is the initial examination"), 1); len(m) == 0 || m[0].covered != 1 {
		t.Errorf("how long is the initial examination: hits %+v, want the examination covering all of it", m)
	}
	for _, question := range []string{"how long", "when?"} {
		if m := ix.rank(ix.parseQuery(question), 1); len(m) > 0 {
			t.Errorf("%q: hits %+v, want none: an answer type alone is about nothing", question, m)
		}
	}
}
