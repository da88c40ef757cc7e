package storetest

import (
	"fmt"
	"maps"
	"reflect"
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/store"
)

func (h harness) overview(t *testing.T) {
	t.Run("Totals", h.overviewTotals)
	t.Run("Normalisation", h.overviewNormalisation)
	t.Run("AtMostTen", h.overviewAtMostTen)
	t.Run("Empty", h.overviewEmpty)
}

// OverviewOf returns the merchant's analytics for [from, to) and fails the test on error.
func OverviewOf(t *testing.T, s store.Store, merchantID string, from, to time.Time) store.Overview {
	t.Helper()
	o, err := s.Overview(t.Context(), merchantID, from, to)
	if err != nil {
		t.Fatalf("Overview: %v", err)
	}
	return o
}

// checkRanking checks that got lists the questions of want, most first (ties in any order).
func checkRanking(t *testing.T, what string, got []store.QuestionCount, want map[string]int) {
	t.Helper()
	gotMap := map[string]int{}
	for i, q := range got {
		if i > 0 && q.Count > got[i-1].Count {
			t.Errorf("%s not sorted most first: %+v", what, got)
		}
		gotMap[q.Question] = q.Count
	}
	if len(gotMap) != len(got) || !maps.Equal(gotMap, want) {
		t.Errorf("%s = %+v, want %v", what, got, want)
	}
}

// ask records a question in the conversation, answered or not.
func ask(t *testing.T, s store.Store, merchantID, conversationID, visitorID string, at time.Time, question string, answered bool) {
	t.Helper()
	ex := Exchange(merchantID, conversationID, at, question, "reply")
	ex.VisitorID = visitorID
	ex.Answer.Answered = answered
	record(t, s, ex)
}

func (h harness) overviewTotals(t *testing.T) {
	s := h.store(t)
	from := time.Date(2026, time.March, 1, 0, 0, 0, 0, time.UTC)
	to := from.AddDate(0, 0, 2)
	day1, day2 := from, from.AddDate(0, 0, 1)

	ask(t, s, "m1", "c1", "v1", day1, "What are your opening hours?", true) // exactly at from: included
	ask(t, s, "m1", "c1", "v1", day1.Add(time.Minute), "Do you ship to Canada?", false)
	ask(t, s, "m1", "c2", "v1", day1.Add(10*time.Hour), "what are your   OPENING hours", true)
	ask(t, s, "m1", "c3", "", day2.Add(9*time.Hour), "What are your opening hours!!", true)
	ask(t, s, "m1", "c3", "", day2.Add(10*time.Hour), "do you ship to canada", false)
	ask(t, s, "m1", "c3", "", to.AddDate(0, 0, 3), "Thanks", true) // later message of a conversation in range
	// 22:30 on day 1 at UTC-5 is 03:30 on day 2 in UTC.
	ask(t, s, "m1", "c4", "", time.Date(2026, time.March, 1, 22, 30, 0, 0, time.FixedZone("UTC-5", -5*60*60)), "Hello", true)
	ask(t, s, "m1", "c5", "v2", to.Add(-time.Millisecond), "Où est   la boutique ?", false)
	// Outside the range or another merchant's.
	ask(t, s, "m1", "c6", "v3", from.Add(-time.Millisecond), "What are your opening hours?", false)
	ask(t, s, "m1", "c7", "v4", to, "Do you ship to Canada?", false)
	ask(t, s, "m2", "c1", "v1", day1.Add(time.Hour), "What are your opening hours?", false)

	o := OverviewOf(t, s, "m1", from, to)
	if o.Conversations != 5 || o.Messages != 16 || o.Visitors != 4 || o.AnsweredMessages != 5 ||
		o.UnansweredMessages != 3 || o.Leads != 0 {
		t.Errorf("overview counts = {conversations %d, messages %d, visitors %d, answered %d, unanswered %d, leads %d},"+
			" want {5, 16, 4, 5, 3, 0}", o.Conversations, o.Messages, o.Visitors, o.AnsweredMessages,
			o.UnansweredMessages, o.Leads)
	}
	checkRanking(t, "TopQuestions", o.TopQuestions, map[string]int{
		"what are your opening hours": 3, "do you ship to canada": 2, "hello": 1, "thanks": 1, "où est la boutique": 1,
	})
	checkRanking(t, "UnansweredQuestions", o.UnansweredQuestions, map[string]int{
		"do you ship to canada": 2, "où est la boutique": 1,
	})
	wantDaily := []store.DayCount{
		{Date: "2026-03-01", Conversations: 2, Messages: 6},
		{Date: "2026-03-02", Conversations: 3, Messages: 10},
	}
	if !reflect.DeepEqual(o.Daily, wantDaily) {
		t.Errorf("Daily = %+v, want %+v", o.Daily, wantDaily)
	}

	// The second day alone.
	o = OverviewOf(t, s, "m1", day2, to)
	if o.Conversations != 3 || o.Messages != 10 || o.Visitors != 3 || len(o.Daily) != 1 {
		t.Errorf("second day: %+v", o)
	}
}

func (h harness) overviewNormalisation(t *testing.T) {
	s := h.store(t)
	for i, q := range []string{"What's the price?", "whats the price", "  WHAT'S   the\tprice… ", "¿Qué?", "?!"} {
		ask(t, s, "m1", fmt.Sprint("c", i), "", Base, q, true)
	}
	o := OverviewOf(t, s, "m1", Base, Base.Add(time.Hour))
	checkRanking(t, "TopQuestions", o.TopQuestions, map[string]int{"whats the price": 3, "qué": 1})
}

func (h harness) overviewAtMostTen(t *testing.T) {
	s := h.store(t)
	for i := range 3 {
		ask(t, s, "m1", "popular", "", Base.Add(time.Duration(i)*time.Minute), "Question zero", false)
	}
	for i := 1; i <= 11; i++ {
		ask(t, s, "m1", fmt.Sprint("c", i), "", Base, fmt.Sprint("Question ", i), false)
	}
	o := OverviewOf(t, s, "m1", Base, Base.Add(time.Hour))
	for name, ranking := range map[string][]store.QuestionCount{
		"TopQuestions": o.TopQuestions, "UnansweredQuestions": o.UnansweredQuestions,
	} {
		if len(ranking) != 10 {
			t.Errorf("%s has %d entries, want 10", name, len(ranking))
			continue
		}
		if ranking[0] != (store.QuestionCount{Question: "question zero", Count: 3}) {
			t.Errorf("%s starts with %+v, want question zero asked 3 times", name, ranking[0])
		}
		for _, q := range ranking[1:] {
			if q.Count != 1 {
				t.Errorf("%s: %+v, want a count of 1", name, q)
			}
		}
	}
}

func (h harness) overviewEmpty(t *testing.T) {
	s := h.store(t)
	ask(t, s, "m1", "c1", "v1", Base, "hello", true)
	o := OverviewOf(t, s, "m1", Base.Add(time.Hour), Base.Add(2*time.Hour))
	if o.Conversations != 0 || o.Messages != 0 || o.Visitors != 0 || o.AnsweredMessages != 0 ||
		o.UnansweredMessages != 0 || len(o.TopQuestions) != 0 || len(o.UnansweredQuestions) != 0 || len(o.Daily) != 0 {
		t.Errorf("overview of an empty range = %+v", o)
	}
	if o := OverviewOf(t, s, "nobody", Base, Base.Add(time.Hour)); o.Conversations != 0 {
		t.Errorf("overview of an unknown merchant = %+v", o)
	}
}
