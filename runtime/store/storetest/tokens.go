package storetest

import (
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/store"
)

// modelTokens: the tokens of each answer add up per merchant and UTC month, and in the overview of its range.
func (h harness) modelTokens(t *testing.T) {
	s := h.store(t)
	march := time.Date(2026, 3, 31, 23, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		merchant string
		at       time.Time
		tokens   int64
	}{
		{"m1", march, 120},
		{"m1", march.Add(10 * time.Minute), 30},
		{"m1", march.Add(2 * time.Hour), 1000}, // April
		{"m2", march, 7},
		{"m1", march, 0}, // an offline answer
	} {
		ex := Exchange(tc.merchant, NewID("c"), tc.at, "question", "answer")
		ex.Tokens = tc.tokens
		record(t, s, ex)
	}
	for _, tc := range []struct {
		merchant string
		month    time.Time
		want     int64
	}{{"m1", march, 150}, {"m1", march.Add(2 * time.Hour), 1000}, {"m2", march, 7}, {"m3", march, 0}} {
		got, err := s.TokensThisMonth(t.Context(), tc.merchant, tc.month)
		if err != nil || got != tc.want {
			t.Errorf("TokensThisMonth(%s, %s) = %d, %v; want %d", tc.merchant, tc.month.Format("2006-01"), got, err, tc.want)
		}
	}
	o, err := s.Overview(t.Context(), "m1", time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC))
	if err != nil || o.ModelTokens != 150 {
		t.Errorf("overview of March: %d model tokens, %v; want 150", o.ModelTokens, err)
	}
}

// visitorUse: a conversation counts its answers and their tokens, whichever way its exchanges were written (a new
// conversation, a later exchange the runtime read the conversation for or not) but not a team member's message,
// and a visitor's use is the answers and tokens of the conversations it started since the time asked, of that
// merchant and visitor alone.
func (h harness) visitorUse(t *testing.T) {
	s := h.store(t)
	day := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		merchant, conversation, visitor string
		at                              time.Time
		tokens                          int64
	}{
		{"m1", "c-old", "v1", day.Add(-25 * time.Hour), 1000}, // started before the window
		{"m1", "c1", "v1", day.Add(-time.Hour), 100},
		{"m1", "c1", "v1", day, 50},
		{"m1", "c2", "v1", day, 7},
		{"m1", "c3", "v2", day, 500},  // another visitor
		{"m2", "c4", "v1", day, 9000}, // another merchant's visitor of that ID
	} {
		ex := Exchange(tc.merchant, tc.conversation, tc.at, "question", "answer")
		ex.VisitorID, ex.Tokens = tc.visitor, tc.tokens
		record(t, s, ex)
	}
	// As the chat path writes: a conversation it knows is new, and one it has read.
	started := Exchange("m1", "c5", day, "question", "answer")
	started.VisitorID, started.Tokens, started.NewConversation = "v2", 11, true
	record(t, s, started)
	continued := Exchange("m1", "c2", day.Add(time.Minute), "question", "answer")
	continued.VisitorID, continued.Tokens, continued.ConversationExists = "v1", 3, true
	record(t, s, continued)
	err := s.Write(t.Context(), func(tx store.Tx) error {
		return tx.AppendMessage(t.Context(), "m1", "c1", store.Message{ID: NewID("t"), Role: store.RoleAgent, Text: "Hello from the team",
			CreatedAt: day.Add(time.Minute), Author: "Ann"})
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		conversation string
		answers      int
		tokens       int64
	}{{"c1", 2, 150}, {"c2", 2, 10}, {"c5", 1, 11}, {"c-old", 1, 1000}} {
		if c, _, err := s.GetConversation(t.Context(), "m1", tc.conversation); err != nil || c.Answers != tc.answers || c.Tokens != tc.tokens {
			t.Errorf("conversation m1/%s: %d answers and %d tokens, %v; want %d and %d", tc.conversation, c.Answers, c.Tokens, err,
				tc.answers, tc.tokens)
		}
	}
	for _, tc := range []struct {
		merchant, visitor string
		want              store.Use
	}{
		{"m1", "v1", store.Use{Answers: 4, Tokens: 160}}, {"m1", "v2", store.Use{Answers: 2, Tokens: 511}},
		{"m2", "v1", store.Use{Answers: 1, Tokens: 9000}}, {"m1", "v3", store.Use{}},
	} {
		got, err := s.VisitorUse(t.Context(), tc.merchant, tc.visitor, day.Add(-24*time.Hour))
		if err != nil || got != tc.want {
			t.Errorf("VisitorUse(%s, %s) = %+v, %v; want %+v", tc.merchant, tc.visitor, got, err, tc.want)
		}
	}
}
