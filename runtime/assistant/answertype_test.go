package assistant

import (
	"testing"
)

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
