package chat_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/event"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/storetest"
)

// feedbackOutbox subscribes the endpoints to feedback.created alone.
func feedbackOutbox(endpoints ...store.Endpoint) store.Outbox {
	return store.Outbox{EventIDs: []string{storetest.NewID("evt")},
		Subscribers: map[string][]store.Endpoint{event.FeedbackCreated: endpoints}}
}

// rate stores a rating of an answer through chat.SaveRating and returns the deliveries it wrote.
func rate(t *testing.T, s store.Store, r store.Rating, o store.Outbox) int {
	t.Helper()
	n, err := chat.SaveRating(t.Context(), s, r, o)
	if err != nil {
		t.Fatalf("SaveRating(%s/%s): %v", r.MerchantID, r.MessageID, err)
	}
	return n
}

// ratings: a visitor finds only its own answers; a rating is stored once per answer, the last one counting and
// its first time kept, and only a change writes a feedback.created event; a conversation's rating likewise; a
// visitor's ratings are read for its export; another merchant's or visitor's are never seen; a conversation's
// deletion takes its ratings.
func (h harness) ratings(t *testing.T) {
	s := h.store(t)
	ctx := t.Context()
	mine := storetest.Exchange("m1", "c1", storetest.Base, "where is my parcel", "it ships in two days")
	theirs := storetest.Exchange("m1", "c2", storetest.Base, "do you ship abroad", "yes")
	otherMerchant := storetest.Exchange("m2", "c1", storetest.Base, "where is my parcel", "it ships in two days")
	otherMerchant.Answer.ID = mine.Answer.ID // the same IDs, another merchant
	for _, ex := range []store.Exchange{mine, theirs, otherMerchant} {
		record(t, s, ex)
	}
	visitor := mine.VisitorID

	t.Run("VisitorAnswer", func(t *testing.T) {
		if got, err := s.VisitorAnswer(ctx, "m1", visitor, mine.Answer.ID); err != nil || got != "c1" {
			t.Errorf("VisitorAnswer(own answer) = %q, %v; want c1", got, err)
		}
		for name, c := range map[string]struct{ merchant, visitor, message string }{
			"another visitor's answer":  {"m1", visitor, theirs.Answer.ID},
			"the visitor's question":    {"m1", visitor, mine.Question.ID},
			"no such message":           {"m1", visitor, "a-missing"},
			"no visitor":                {"m1", "", mine.Answer.ID},
			"another merchant's answer": {"m3", visitor, mine.Answer.ID},
		} {
			_, err := s.VisitorAnswer(ctx, c.merchant, c.visitor, c.message)
			storetest.WantErr(t, "VisitorAnswer of "+name, err, store.ErrNotFound)
		}
	})

	first := store.Rating{MerchantID: "m1", ConversationID: "c1", MessageID: mine.Answer.ID, VisitorID: visitor,
		Rating: store.RatingUp, CreatedAt: storetest.Base.Add(time.Minute), UpdatedAt: storetest.Base.Add(time.Minute)}
	t.Run("LastRatingCounts", func(t *testing.T) {
		if n := rate(t, s, first, feedbackOutbox(hookA)); n != 1 {
			t.Errorf("a new rating wrote %d deliveries, want 1", n)
		}
		again := first
		again.CreatedAt, again.UpdatedAt = storetest.Base.Add(2*time.Minute), storetest.Base.Add(2*time.Minute)
		if n := rate(t, s, again, feedbackOutbox(hookA)); n != 0 {
			t.Errorf("the same rating again wrote %d deliveries, want 0", n)
		}
		changed := first
		changed.Rating, changed.Comment = store.RatingDown, "wrong: it took a week"
		changed.CreatedAt, changed.UpdatedAt = storetest.Base.Add(3*time.Minute), storetest.Base.Add(3*time.Minute)
		if n := rate(t, s, changed, feedbackOutbox(hookA)); n != 1 {
			t.Errorf("a changed rating wrote %d deliveries, want 1", n)
		}
		ratings, sat, err := s.ConversationRatings(ctx, "m1", "c1")
		want := changed
		want.CreatedAt = first.CreatedAt
		if err != nil || len(ratings) != 1 || ratings[0] != want || sat != nil {
			t.Errorf("ConversationRatings = %+v, %v, %v; want [%+v] and no conversation rating", ratings, sat, err, want)
		}
		var events []payload
		for _, d := range listAllDeliveries(t, s, "m1", store.DeliveryFilter{EventType: event.FeedbackCreated}) {
			events = append(events, decodeEvent(t, d))
		}
		if len(events) != 2 {
			t.Fatalf("%d feedback.created deliveries, want 2", len(events))
		}
		latest := events[0].Data // newest first
		if latest["conversation_id"] != "c1" || latest["message_id"] != mine.Answer.ID || latest["rating"] != "down" ||
			latest["comment"] != "wrong: it took a week" || latest["kind"] != "answer" || latest["visitor_id"] != visitor {
			t.Errorf("feedback.created data = %v", latest)
		}
	})

	t.Run("ConversationRating", func(t *testing.T) {
		sat := store.Satisfaction{MerchantID: "m1", ConversationID: "c1", VisitorID: visitor, Score: 2,
			CreatedAt: storetest.Base.Add(time.Hour), UpdatedAt: storetest.Base.Add(time.Hour)}
		for i, want := range []int{1, 0} {
			if n, err := chat.SaveSatisfaction(ctx, s, sat, feedbackOutbox(hookA)); err != nil || n != want {
				t.Errorf("SaveSatisfaction #%d: %d deliveries, %v; want %d", i, n, err, want)
			}
		}
		later := sat
		later.Score, later.Comment, later.UpdatedAt = 5, "sorted in the end", storetest.Base.Add(2*time.Hour)
		if _, err := chat.SaveSatisfaction(ctx, s, later, store.Outbox{}); err != nil {
			t.Fatal(err)
		}
		_, got, err := s.ConversationRatings(ctx, "m1", "c1")
		if err != nil || got == nil || *got != later {
			t.Errorf("conversation rating = %+v, %v; want %+v", got, err, later)
		}
	})

	t.Run("Isolation", func(t *testing.T) {
		other := first
		other.MerchantID = "m2"
		other.Rating = store.RatingUp
		rate(t, s, other, store.Outbox{})
		if ratings, sat, err := s.ConversationRatings(ctx, "m2", "c1"); err != nil || len(ratings) != 1 ||
			ratings[0].Rating != store.RatingUp || sat != nil {
			t.Errorf("m2's ratings = %+v, %v, %v; want its own up alone", ratings, sat, err)
		}
		if ratings, sat, err := s.ConversationRatings(ctx, "m1", "c2"); err != nil || len(ratings) != 0 || sat != nil {
			t.Errorf("another visitor's conversation has ratings %+v, %v, %v", ratings, sat, err)
		}
		ratings, sats, err := s.VisitorRatings(ctx, "m1", visitor)
		if err != nil || len(ratings) != 1 || ratings[0].Rating != store.RatingDown || len(sats) != 1 || sats[0].Score != 5 {
			t.Errorf("VisitorRatings = %+v, %+v, %v; want the down and the 5", ratings, sats, err)
		}
		if ratings, sats, err := s.VisitorRatings(ctx, "m1", theirs.VisitorID); err != nil || len(ratings)+len(sats) != 0 {
			t.Errorf("another visitor's ratings = %+v, %+v, %v; want none", ratings, sats, err)
		}
	})

	t.Run("DeletedWithTheConversation", func(t *testing.T) {
		if _, err := chat.DeleteConversation(ctx, s, "m1", "c1"); err != nil {
			t.Fatal(err)
		}
		if ratings, sats, err := s.VisitorRatings(ctx, "m1", visitor); err != nil || len(ratings)+len(sats) != 0 {
			t.Errorf("after the conversation's deletion its visitor's ratings are %+v, %+v, %v", ratings, sats, err)
		}
		if got := listAllDeliveries(t, s, "m1", store.DeliveryFilter{EventType: event.FeedbackCreated}); len(got) != 0 {
			t.Errorf("%d feedback.created deliveries of the deleted conversation are left", len(got))
		}
		if ratings, _, err := s.ConversationRatings(ctx, "m2", "c1"); err != nil || len(ratings) != 1 {
			t.Errorf("another merchant's ratings after the deletion: %+v, %v", ratings, err)
		}
	})
}

// reviewMisses: the misses are the unanswered answers, those rated down and those given with a measured confidence
// below the one asked (not those without one), of the merchant alone, newest first, with their questions and
// confidence, from the conversations created since; fixes are kept per question, the last one counting.
func (h harness) reviewMisses(t *testing.T) {
	s := h.store(t)
	ctx := t.Context()
	unanswered := storetest.Exchange("m1", "c1", storetest.Base, "Can I pay by voucher?", "Sorry, I do not know.")
	unanswered.Answer.Answered = false
	rated := storetest.Exchange("m1", "c2", storetest.Base.Add(time.Hour), "How long to Canada?", "5 to 8 days.")
	fine := storetest.Exchange("m1", "c3", storetest.Base.Add(2*time.Hour), "Do you ship?", "Yes.")
	fine.Answer.Confidence = 0.6
	unsure := storetest.Exchange("m1", "c4", storetest.Base.Add(3*time.Hour), "Is the box recyclable?", "The box is cardboard.")
	unsure.Answer.Confidence = 0.375
	old := storetest.Exchange("m1", "c0", storetest.Base.Add(-48*time.Hour), "Old question?", "Sorry.")
	old.Answer.Answered = false
	other := storetest.Exchange("m2", "c1", storetest.Base, "Can I pay by voucher?", "Sorry.")
	other.Answer.Answered = false
	for _, ex := range []store.Exchange{unanswered, rated, fine, unsure, old, other} {
		record(t, s, ex)
	}
	rate(t, s, store.Rating{MerchantID: "m1", ConversationID: "c2", MessageID: rated.Answer.ID, VisitorID: rated.VisitorID,
		Rating: store.RatingDown, Comment: "too slow", CreatedAt: storetest.Base, UpdatedAt: storetest.Base}, store.Outbox{})
	rate(t, s, store.Rating{MerchantID: "m1", ConversationID: "c3", MessageID: fine.Answer.ID, VisitorID: fine.VisitorID,
		Rating: store.RatingUp, CreatedAt: storetest.Base, UpdatedAt: storetest.Base}, store.Outbox{})

	misses, err := s.ReviewMisses(ctx, "m1", storetest.Base.Add(-time.Hour), 0.6, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(misses) != 3 {
		t.Fatalf("ReviewMisses = %+v; want the unsure, the rated and the unanswered answers", misses)
	}
	if m := misses[0]; m.MessageID != unsure.Answer.ID || !m.Answered || m.Confidence != 0.375 || m.Rating != "" {
		t.Errorf("the unsure miss = %+v", m)
	}
	misses = misses[1:]
	if m := misses[0]; m.MessageID != rated.Answer.ID || m.Question != "How long to Canada?" || m.Normalized != "how long to canada" ||
		m.Rating != store.RatingDown || m.Comment != "too slow" || !m.Answered || m.ConversationID != "c2" ||
		!m.CreatedAt.Equal(rated.Answer.CreatedAt) {
		t.Errorf("the rated miss = %+v", m)
	}
	if m := misses[1]; m.MessageID != unanswered.Answer.ID || m.Answered || m.Rating != "" || m.Normalized != "can i pay by voucher" {
		t.Errorf("the unanswered miss = %+v", m)
	}
	if got, err := s.ReviewMisses(ctx, "m1", storetest.Base.Add(-time.Hour), 0, 1); err != nil || len(got) != 1 || got[0].MessageID != rated.Answer.ID {
		t.Errorf("ReviewMisses limited to 1 = %+v, %v", got, err)
	}
	if got, err := s.ReviewMisses(ctx, "m3", storetest.Base.Add(-72*time.Hour), 0.6, 10); err != nil || len(got) != 0 {
		t.Errorf("a merchant without data has misses %+v, %v", got, err)
	}

	fix := func(f store.ReviewFix) {
		t.Helper()
		if err := s.Write(ctx, func(tx store.Tx) error { return tx.SaveReviewFix(ctx, f) }); err != nil {
			t.Fatal(err)
		}
	}
	fix(store.ReviewFix{MerchantID: "m1", Question: "can i pay by voucher", KnowledgeID: "k1", FixedAt: storetest.Base})
	fix(store.ReviewFix{MerchantID: "m1", Question: "can i pay by voucher", KnowledgeID: "k2", FixedAt: storetest.Base.Add(time.Hour)})
	want := []store.ReviewFix{{MerchantID: "m1", Question: "can i pay by voucher", KnowledgeID: "k2", FixedAt: storetest.Base.Add(time.Hour)}}
	if got, err := s.ReviewFixes(ctx, "m1"); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ReviewFixes = %+v, %v; want %+v", got, err, want)
	}
	if got, err := s.ReviewFixes(ctx, "m2"); err != nil || len(got) != 0 {
		t.Errorf("another merchant's fixes = %+v, %v", got, err)
	}
}

// feedbackWeeks: each UTC week from Monday counts its answers given and not, its ratings and conversation ratings,
// of the merchant alone; a fix counts its question asked after it, and answered.
func (h harness) feedbackWeeks(t *testing.T) {
	s := h.store(t)
	ctx := t.Context()
	monday := time.Date(2026, time.March, 9, 0, 0, 0, 0, time.UTC) // base is Tuesday the 10th
	week1 := storetest.Exchange("m1", "c1", storetest.Base, "Can I pay by voucher?", "Sorry.")
	week1.Answer.Answered = false
	week1b := storetest.Exchange("m1", "c2", storetest.Base.Add(time.Hour), "How long to Canada?", "5 to 8 days.")
	week2 := storetest.Exchange("m1", "c3", storetest.Base.Add(7*24*time.Hour), "Can I pay by voucher?", "Yes, with a gift card.")
	other := storetest.Exchange("m2", "c1", storetest.Base, "Can I pay by voucher?", "Sorry.")
	for _, ex := range []store.Exchange{week1, week1b, week2, other} {
		record(t, s, ex)
	}
	rate(t, s, store.Rating{MerchantID: "m1", ConversationID: "c2", MessageID: week1b.Answer.ID, VisitorID: week1b.VisitorID,
		Rating: store.RatingDown, CreatedAt: storetest.Base.Add(2 * time.Hour), UpdatedAt: storetest.Base.Add(2 * time.Hour)}, store.Outbox{})
	rate(t, s, store.Rating{MerchantID: "m1", ConversationID: "c3", MessageID: week2.Answer.ID, VisitorID: week2.VisitorID,
		Rating: store.RatingUp, CreatedAt: storetest.Base.Add(7 * 24 * time.Hour), UpdatedAt: storetest.Base.Add(7 * 24 * time.Hour)}, store.Outbox{})
	for _, sat := range []store.Satisfaction{
		{MerchantID: "m1", ConversationID: "c2", VisitorID: week1b.VisitorID, Score: 2, CreatedAt: storetest.Base, UpdatedAt: storetest.Base},
		{MerchantID: "m1", ConversationID: "c3", VisitorID: week2.VisitorID, Score: 5, CreatedAt: storetest.Base.Add(170 * time.Hour), UpdatedAt: storetest.Base.Add(170 * time.Hour)},
	} {
		if _, err := chat.SaveSatisfaction(ctx, s, sat, store.Outbox{}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.FeedbackWeeks(ctx, "m1", monday, monday.Add(28*24*time.Hour))
	want := []store.FeedbackWeek{
		{Start: monday, Answered: 1, Unanswered: 1, Rated: 1, ThumbsDown: 1, Surveys: 1},
		{Start: monday.Add(7 * 24 * time.Hour), Answered: 1, Rated: 1, Surveys: 1, Satisfied: 1},
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("FeedbackWeeks = %+v, %v\nwant %+v", got, err, want)
	}
	if got, err := s.FeedbackWeeks(ctx, "m3", monday, monday.Add(28*24*time.Hour)); err != nil || len(got) != 0 {
		t.Errorf("a merchant without data has weeks %+v, %v", got, err)
	}

	if err := s.Write(ctx, func(tx store.Tx) error {
		return tx.SaveReviewFix(ctx, store.ReviewFix{MerchantID: "m1", Question: "can i pay by voucher", KnowledgeID: "k1", FixedAt: storetest.Base.Add(24 * time.Hour)})
	}); err != nil {
		t.Fatal(err)
	}
	results, err := s.FixResults(ctx, "m1")
	if err != nil || len(results) != 1 || results[0].Asked != 1 || results[0].Answered != 1 || results[0].KnowledgeID != "k1" {
		t.Errorf("FixResults = %+v, %v; want the voucher question asked once since, and answered", results, err)
	}
}
