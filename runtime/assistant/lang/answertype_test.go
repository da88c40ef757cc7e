package lang

import (
	"slices"
	"testing"
)

func TestAppendAnswerTypes(t *testing.T) {
	tests := []struct {
		lang     *Language
		sentence string
		priced   bool
		want     []string
	}{
		{English, "We are open Monday to Friday from 9 am to 5 pm.", false, []string{MarkerTime}},
		{English, "Check-in is from 3pm, check-out by 10.30am.", false, []string{MarkerTime}},
		{English, "The desk is staffed 08:00 to 22:00.", false, []string{MarkerTime}},
		{English, "Treatment takes three to six months from start to finish.", false, []string{MarkerDuration}},
		{English, "Refunds arrive within 5 to 7 business days.", false, []string{MarkerDuration}},
		{English, "We recommend a check-up every six to twelve months.", false, []string{MarkerFrequency}},
		{English, "Brush twice a day.", false, []string{MarkerFrequency}},
		{English, "A tent rents for $25 a day.", false, []string{MarkerMoney}},
		{English, "Starter costs 9 a month for one user.", false, []string{MarkerMoney}},
		{English, "The car park costs nothing; parking is at 18 per 24 hours.", false, []string{MarkerMoney}},
		{English, "Parking is at 18 per 24 hours.", false, []string{MarkerMoney}},
		{English, "Private examination 55.", true, []string{MarkerMoney}},
		{English, "Private examination 55.", false, nil},
		{English, "Call us on 020 7946 0958.", false, []string{MarkerPhone}},
		{English, "Call us at 1-800-555-0199 from 8 am.", false, []string{MarkerTime, MarkerPhone}},
		// Numbers that are none of them: a count, an amount without a price word, a date, a decimal.
		{English, "The car park has 40 spaces.", false, nil},
		{English, "Implants start at 2,400 per tooth.", false, nil},
		{English, "The offer ends on 2026-11-24.", false, nil},
		{English, "The height limit is 1.90 metres.", false, nil},
		{English, "Everyone is welcome.", false, nil},
		{German, "Das Büro ist von 9.00 bis 17.30 Uhr geöffnet.", false, []string{MarkerTime}},
		{German, "Ein Intensivkurs kostet 480 Euro und dauert vier Wochen.", false, []string{MarkerDuration, MarkerMoney}},
		{German, "Das Sprachcafé findet jeden Donnerstag statt.", false, nil},
		{German, "Der Kurs trifft sich jede Woche.", false, []string{MarkerFrequency}},
		{German, "Rufen Sie uns an: 0341 1234567.", false, []string{MarkerPhone}},
	}
	for _, tt := range tests {
		tokens := Tokenize(tt.sentence)
		if got := tt.lang.AppendAnswerTypes(nil, tokens, tt.sentence, tt.priced); !slices.Equal(got, tt.want) {
			t.Errorf("appendAnswerTypes(%q, priced %v) = %q, want %q", tt.sentence, tt.priced, got, tt.want)
		}
	}
}
