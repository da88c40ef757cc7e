package chat_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/storetest"
)

func (h harness) conversations(t *testing.T) {
	t.Run("CreateThenContinue", func(t *testing.T) { h.createThenContinue(t, false, false) })
	t.Run("CreateNewThenContinue", func(t *testing.T) { h.createThenContinue(t, true, false) })
	t.Run("CreateNewThenContinueKnown", func(t *testing.T) { h.createThenContinue(t, true, true) })
	t.Run("ContinueKnownButGone", h.continueKnownButGone)
	t.Run("MessagesRoundTrip", h.messagesRoundTrip)
	t.Run("NotFound", h.conversationNotFound)
	t.Run("Tail", h.conversationTail)
	t.Run("ConcurrentFirstExchange", h.concurrentFirstExchange)
	t.Run("FailedExchangeWritesNothing", h.failedExchange)
	t.Run("MessageCap", h.messageCap)
	t.Run("BadInput", h.badExchange)
	t.Run("CanceledContext", h.canceledExchange)
}

// createThenContinue starts a conversation, its ID named by the runtime (newConversation) or by the visitor, and
// continues it, the runtime having read it first (known) or not.
func (h harness) createThenContinue(t *testing.T, newConversation, known bool) {
	s := h.store(t)
	first := storetest.Exchange("m1", "c1", storetest.Base, "Hello there", "Hi! How can I help?")
	first.VisitorID = "v1"
	first.NewConversation = newConversation
	if res := record(t, s, first); !res.Created {
		t.Error("first exchange: Created = false, want true")
	}
	second := storetest.Unanswered(storetest.Exchange("m1", "c1", storetest.Base.Add(time.Minute), "Can I pay in bitcoin?", "I don't know."))
	second.VisitorID = "v1"
	second.ConversationExists = known
	if res := record(t, s, second); res.Created {
		t.Error("second exchange: Created = true, want false")
	}

	c, msgs := storetest.GetConversation(t, s, "m1", "c1")
	if c.ID != "c1" || c.MerchantID != "m1" || c.VisitorID != "v1" || c.MessageCount != 4 ||
		c.FirstMessage != "Hello there" || c.Unanswered != 1 || c.HasLead {
		t.Errorf("conversation = %+v", c)
	}
	storetest.CheckTime(t, "CreatedAt", c.CreatedAt, first.Question.CreatedAt)
	storetest.CheckTime(t, "UpdatedAt", c.UpdatedAt, second.Answer.CreatedAt)
	want := []store.Message{first.Question, first.Answer, second.Question, second.Answer}
	if len(msgs) != len(want) {
		t.Fatalf("got %d messages, want %d", len(msgs), len(want))
	}
	for i := range want {
		storetest.CheckMessage(t, msgs[i], want[i])
	}
	if !storetest.Exists(t, s, "m1", "c1") {
		t.Error("ConversationExists = false for a recorded conversation")
	}
	if v, err := s.ConversationVisitor(t.Context(), "m1", "c1"); err != nil || v != "v1" {
		t.Errorf("ConversationVisitor = %q, %v; want v1", v, err)
	}
	if _, err := s.ConversationVisitor(t.Context(), "m2", "c1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("ConversationVisitor of another merchant's conversation: %v, want ErrNotFound", err)
	}
	if n := storetest.ThisMonth(t, s, "m1", storetest.Base); n != 1 {
		t.Errorf("ConversationsThisMonth = %d, want 1 (continuing is not a new conversation)", n)
	}
}

// continueKnownButGone continues a conversation the runtime has read and that is gone by the time the exchange is
// written (its merchant erased meanwhile, say): the exchange starts it again, with its two messages.
func (h harness) continueKnownButGone(t *testing.T) {
	s := h.store(t)
	ex := storetest.Exchange("m1", "c1", storetest.Base, "Still there?", "Yes.")
	ex.ConversationExists = true
	record(t, s, ex)
	c, msgs := storetest.GetConversation(t, s, "m1", "c1")
	if c.MessageCount != 2 || len(msgs) != 2 || c.FirstMessage != "Still there?" {
		t.Errorf("conversation = %+v with %d messages, want 2 messages and the first question", c, len(msgs))
	}
}

func (h harness) messagesRoundTrip(t *testing.T) {
	s := h.store(t)
	zone := time.FixedZone("UTC-5", -5*60*60)
	at := storetest.Base.Add(123456789 * time.Nanosecond).In(zone)
	ex := storetest.Exchange("m1", "c1", at, "Ça va? \"quotes\" 'single' 100% _under_ \n new line 🚀", "Oui ✅")
	ex.Answer.CreatedAt = at.Add(1500 * time.Microsecond)
	ex.Answer.Confidence = 0.4217
	ex.Answer.Sources = []store.Source{
		{KnowledgeID: "k1", Title: "Shipping", URL: "https://shop.example/shipping", Snippet: "We ship…", Score: 0.8731},
		{KnowledgeID: "k2", Title: "Returns — policy", Snippet: "30 days", Score: 0.125},
	}
	record(t, s, ex)
	c, msgs := storetest.GetConversation(t, s, "m1", "c1")
	storetest.CheckTime(t, "conversation CreatedAt", c.CreatedAt, at)
	if len(msgs) != 2 {
		t.Fatalf("got %d messages, want 2", len(msgs))
	}
	storetest.CheckMessage(t, msgs[0], ex.Question)
	storetest.CheckMessage(t, msgs[1], ex.Answer)
	if got, want := msgs[0].CreatedAt, time.Date(2026, 3, 10, 12, 0, 0, 123e6, time.UTC); got != want {
		t.Errorf("question CreatedAt = %#v, want %#v", got, want)
	}
}

func (h harness) conversationNotFound(t *testing.T) {
	s := h.store(t)
	startConversation(t, s, "m1", "c1", storetest.Base)
	_, _, err := s.GetConversation(t.Context(), "m1", "nope")
	storetest.WantErr(t, "GetConversation of an unknown ID", err, store.ErrNotFound)
	if storetest.Exists(t, s, "m1", "nope") {
		t.Error("ConversationExists = true for an unknown ID")
	}
	_, err = s.ConversationVisitor(t.Context(), "m1", "nope")
	storetest.WantErr(t, "ConversationVisitor of an unknown ID", err, store.ErrNotFound)
}

// conversationTail reads the latest messages of a conversation, in the order GetConversation gives them, the
// question and answer of one exchange made at the same instant as the chat makes them.
func (h harness) conversationTail(t *testing.T) {
	s := h.store(t)
	for i := range 5 {
		ex := storetest.Exchange("m1", "c1", storetest.Base.Add(time.Duration(i)*time.Minute), fmt.Sprint("question ", i), fmt.Sprint("answer ", i))
		ex.Answer.CreatedAt = ex.Question.CreatedAt
		record(t, s, ex)
	}
	whole, all := storetest.GetConversation(t, s, "m1", "c1")
	for _, n := range []int{0, 3, 10, 50} {
		c, msgs, err := s.ConversationTail(t.Context(), "m1", "c1", n)
		if err != nil {
			t.Fatalf("ConversationTail(%d): %v", n, err)
		}
		if c != whole {
			t.Errorf("ConversationTail(%d) conversation = %+v, want %+v", n, c, whole)
		}
		want := all[max(0, len(all)-n):]
		if len(msgs) != len(want) {
			t.Fatalf("ConversationTail(%d): %d messages, want %d", n, len(msgs), len(want))
		}
		for i := range want {
			if msgs[i] != (store.Turn{Role: want[i].Role, Text: want[i].Text}) {
				t.Errorf("ConversationTail(%d) message %d = %+v, want %s %q", n, i, msgs[i], want[i].Role, want[i].Text)
			}
		}
	}
	_, msgs, err := s.ConversationTail(t.Context(), "m1", "nope", 3)
	storetest.WantErr(t, "ConversationTail of an unknown ID", err, store.ErrNotFound)
	if len(msgs) != 0 {
		t.Errorf("messages returned with ErrNotFound: %+v", msgs)
	}
}

// concurrentFirstExchange sends the first exchanges of one new conversation at once: exactly one creates it.
func (h harness) concurrentFirstExchange(t *testing.T) {
	s := h.store(t)
	var created atomic.Int32
	errs := storetest.RunConcurrently(10, func(i int) error {
		res, err := chat.RecordExchange(context.Background(), s, storetest.Exchange("m1", "shared", storetest.Base, "hi", "hello"))
		if res.Created {
			created.Add(1)
		}
		return err
	})
	if ok, _ := storetest.CountErrors(t, errs, nil); ok != 10 {
		t.Fatalf("%d of 10 exchanges succeeded", ok)
	}
	if n := created.Load(); n != 1 {
		t.Errorf("%d exchanges reported Created, want 1", n)
	}
	if c, _ := storetest.GetConversation(t, s, "m1", "shared"); c.MessageCount != 20 {
		t.Errorf("MessageCount = %d, want 20", c.MessageCount)
	}
	if n := storetest.ThisMonth(t, s, "m1", storetest.Base); n != 1 {
		t.Errorf("ConversationsThisMonth = %d, want 1", n)
	}
}

// failedExchange: an exchange the store refuses leaves the conversation, the month's count and the citations as
// they were. The store refuses it late: the conversation of an exchange the runtime says it has just named
// (NewConversation) may be inserted without looking for it first, and the insert fails on the one that exists,
// with the exchange's other writes already made or deferred in its transaction.
func (h harness) failedExchange(t *testing.T) {
	ctx := t.Context()
	s := h.store(t)
	if err := chat.CreateKnowledge(ctx, s, store.Knowledge{ID: "k1", MerchantID: "m1", Title: "Shipping", Content: "Two days.",
		CreatedAt: storetest.Base, UpdatedAt: storetest.Base}, chat.KnowledgeLimits{}); err != nil {
		t.Fatal(err)
	}
	cited := func(ex store.Exchange) store.Exchange {
		ex.Answer.Sources = []store.Source{{KnowledgeID: "k1", Title: "Shipping"}}
		return ex
	}
	first := cited(storetest.Exchange("m1", "c1", storetest.Base, "one", "two"))
	first.NewConversation = true
	record(t, s, first)
	again := cited(storetest.Exchange("m1", "c1", storetest.Base.Add(time.Minute), "three", "four"))
	again.NewConversation = true
	if _, err := chat.RecordExchange(ctx, s, again); err == nil {
		t.Fatal("RecordExchange of a new conversation with an existing conversation's ID succeeded")
	}
	if c, msgs := storetest.GetConversation(t, s, "m1", "c1"); c.MessageCount != 2 || len(msgs) != 2 {
		t.Errorf("after a failed exchange: MessageCount %d, %d messages, want 2 and 2", c.MessageCount, len(msgs))
	}
	if n, err := s.ConversationsThisMonth(ctx, "m1", storetest.Base); err != nil || n != 1 {
		t.Errorf("ConversationsThisMonth = %d, %v; want 1", n, err)
	}
	if k, err := s.GetKnowledge(ctx, "m1", "k1"); err != nil || k.UseCount != 1 {
		t.Errorf("k1 cited %d times, %v; want 1", k.UseCount, err)
	}
}

func (h harness) badExchange(t *testing.T) {
	s := h.store(t)
	sameIDs := storetest.Exchange("m1", "c3", storetest.Base, "q", "a")
	sameIDs.Answer.ID = sameIDs.Question.ID
	noMessageID := storetest.Exchange("m1", "c4", storetest.Base, "q", "a")
	noMessageID.Answer.ID = ""
	for name, ex := range map[string]store.Exchange{
		"no merchant":      storetest.Exchange("", "c1", storetest.Base, "q", "a"),
		"no conversation":  storetest.Exchange("m1", "", storetest.Base, "q", "a"),
		"same message IDs": sameIDs,
		"no message ID":    noMessageID,
		"negative ceiling": func() store.Exchange {
			ex := storetest.Exchange("m1", "c5", storetest.Base, "q", "a")
			ex.MonthlyLimit = -1
			return ex
		}(),
	} {
		if _, err := chat.RecordExchange(t.Context(), s, ex); err == nil {
			t.Errorf("%s: RecordExchange succeeded", name)
		}
		if ex.MerchantID != "" && storetest.Exists(t, s, ex.MerchantID, ex.ConversationID) {
			t.Errorf("%s: the conversation was created", name)
		}
	}
	if n := storetest.ThisMonth(t, s, "m1", storetest.Base); n != 0 {
		t.Errorf("ConversationsThisMonth = %d after refused exchanges, want 0", n)
	}
}

func (h harness) canceledExchange(t *testing.T) {
	s := h.store(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := chat.RecordExchange(ctx, s, storetest.Exchange("m1", "c1", storetest.Base, "q", "a"))
	if err == nil {
		t.Fatal("RecordExchange with a canceled context succeeded")
	}
	if !errors.Is(err, context.Canceled) {
		t.Logf("error does not wrap context.Canceled: %v", err)
	}
	if storetest.Exists(t, s, "m1", "c1") {
		t.Error("a canceled exchange created its conversation")
	}
}

func (h harness) quota(t *testing.T) {
	t.Run("CeilingWritesNothing", h.quotaCeiling)
	t.Run("ExistingConversationsGoOn", h.quotaExistingGoOn)
	t.Run("NewMonth", h.quotaNewMonth)
	t.Run("Unlimited", h.quotaUnlimited)
	t.Run("Concurrent", h.quotaConcurrent)
}

func (h harness) quotaCeiling(t *testing.T) {
	s := h.store(t)
	mustCreateKnowledge(t, s, storetest.Item("m1", "k1", storetest.Base), 0)
	for _, id := range []string{"c1", "c2"} {
		ex := storetest.Exchange("m1", id, storetest.Base, "q", "a")
		ex.MonthlyLimit = 2
		record(t, s, ex)
	}
	over := storetest.Citing(storetest.Exchange("m1", "c3", storetest.Base.Add(time.Hour), "one too many", "a"), "k1")
	over.MonthlyLimit = 2
	res, err := chat.RecordExchange(t.Context(), s, over)
	storetest.WantErr(t, "third conversation with a ceiling of 2", err, store.ErrQuotaExceeded)
	if res.Created {
		t.Error("refused exchange reported Created")
	}
	if storetest.Exists(t, s, "m1", "c3") {
		t.Error("refused conversation exists")
	}
	_, _, err = s.GetConversation(t.Context(), "m1", "c3")
	storetest.WantErr(t, "GetConversation of the refused conversation", err, store.ErrNotFound)
	if n := storetest.ThisMonth(t, s, "m1", storetest.Base); n != 2 {
		t.Errorf("ConversationsThisMonth = %d, want 2", n)
	}
	if list := storetest.ListAllConversations(t, s, "m1", store.ConversationFilter{}); len(list) != 2 {
		t.Errorf("%d conversations listed, want 2", len(list))
	}
	if k := mustGetKnowledge(t, s, "m1", "k1"); k.UseCount != 0 {
		t.Errorf("refused exchange counted a citation: UseCount = %d", k.UseCount)
	}
	if o := storetest.OverviewOf(t, s, "m1", storetest.Base.AddDate(0, -1, 0), storetest.Base.AddDate(0, 1, 0)); o.Messages != 4 {
		t.Errorf("Overview.Messages = %d, want 4", o.Messages)
	}
	// The ceiling is the merchant's own: another merchant at the same plan starts its conversation, with the same
	// conversation ID, and does not count against m1's month.
	other := storetest.Exchange("m2", "c3", storetest.Base.Add(time.Hour), "q", "a")
	other.MonthlyLimit = 2
	if res := record(t, s, other); !res.Created {
		t.Error("another merchant's first conversation was not created")
	}
	if n := storetest.ThisMonth(t, s, "m1", storetest.Base); n != 2 {
		t.Errorf("m1's ConversationsThisMonth = %d after m2's conversation, want 2", n)
	}
	if n := storetest.ThisMonth(t, s, "m2", storetest.Base); n != 1 {
		t.Errorf("m2's ConversationsThisMonth = %d, want 1", n)
	}
}

func (h harness) quotaExistingGoOn(t *testing.T) {
	s := h.store(t)
	ex := storetest.Exchange("m1", "c1", storetest.Base, "q", "a")
	ex.MonthlyLimit = 1
	record(t, s, ex)
	for i := range 3 {
		more := storetest.Exchange("m1", "c1", storetest.Base.Add(time.Duration(i+1)*time.Minute), "more", "yes")
		more.MonthlyLimit = 1
		if res := record(t, s, more); res.Created {
			t.Error("continuing exchange reported Created")
		}
	}
	if c, _ := storetest.GetConversation(t, s, "m1", "c1"); c.MessageCount != 8 {
		t.Errorf("MessageCount = %d, want 8", c.MessageCount)
	}
	if n := storetest.ThisMonth(t, s, "m1", storetest.Base); n != 1 {
		t.Errorf("ConversationsThisMonth = %d, want 1", n)
	}
}

func (h harness) quotaNewMonth(t *testing.T) {
	s := h.store(t)
	lastOfMarch := time.Date(2026, time.March, 31, 23, 59, 59, 999e6, time.UTC)
	ex := storetest.Exchange("m1", "march", lastOfMarch, "q", "a")
	ex.MonthlyLimit = 1
	record(t, s, ex)
	refused := storetest.Exchange("m1", "march-2", lastOfMarch, "q", "a")
	refused.MonthlyLimit = 1
	_, err := chat.RecordExchange(t.Context(), s, refused)
	storetest.WantErr(t, "second March conversation", err, store.ErrQuotaExceeded)

	// 2026-03-31 20:00 at UTC-5 is 2026-04-01 01:00 UTC: the month is April's.
	april := time.Date(2026, time.March, 31, 20, 0, 0, 0, time.FixedZone("UTC-5", -5*60*60))
	ex = storetest.Exchange("m1", "april", april, "q", "a")
	ex.MonthlyLimit = 1
	if res := record(t, s, ex); !res.Created {
		t.Error("April conversation not created")
	}
	if n := storetest.ThisMonth(t, s, "m1", lastOfMarch); n != 1 {
		t.Errorf("March count = %d, want 1", n)
	}
	if n := storetest.ThisMonth(t, s, "m1", time.Date(2026, time.April, 15, 0, 0, 0, 0, time.UTC)); n != 1 {
		t.Errorf("April count = %d, want 1", n)
	}
	if n := storetest.ThisMonth(t, s, "m1", time.Date(2026, time.May, 1, 0, 0, 0, 0, time.UTC)); n != 0 {
		t.Errorf("May count = %d, want 0", n)
	}
	// The month of now is taken in UTC too.
	if n := storetest.ThisMonth(t, s, "m1", april.Add(-30*time.Minute)); n != 1 {
		t.Errorf("count for a time in April UTC but March locally = %d, want 1", n)
	}
}

func (h harness) quotaUnlimited(t *testing.T) {
	s := h.store(t)
	for i := range 30 {
		startConversation(t, s, "m1", storetest.NewID("c"), storetest.Base.Add(time.Duration(i)*time.Second))
	}
	if n := storetest.ThisMonth(t, s, "m1", storetest.Base); n != 30 {
		t.Errorf("ConversationsThisMonth = %d, want 30", n)
	}
}

// quotaConcurrent starts 20 conversations at once with a ceiling of 5: exactly 5 get through.
func (h harness) quotaConcurrent(t *testing.T) {
	s := h.store(t)
	errs := storetest.RunConcurrently(20, func(i int) error {
		ex := storetest.Exchange("m1", storetest.NewID("c"), storetest.Base, "q", "a")
		ex.MonthlyLimit = 5
		_, err := chat.RecordExchange(context.Background(), s, ex)
		return err
	})
	ok, refused := storetest.CountErrors(t, errs, store.ErrQuotaExceeded)
	if ok != 5 || refused != 15 {
		t.Errorf("%d created and %d refused, want 5 and 15", ok, refused)
	}
	if n := storetest.ThisMonth(t, s, "m1", storetest.Base); n != 5 {
		t.Errorf("ConversationsThisMonth = %d, want 5", n)
	}
	if list := storetest.ListAllConversations(t, s, "m1", store.ConversationFilter{}); len(list) != 5 {
		t.Errorf("%d conversations stored, want 5", len(list))
	}
}

// messageCap fills a conversation to store.MaxConversationMessages but for one exchange, and then sends it
// exchanges that all read it as having room, as turns arriving at once do: one is written, every other fails
// with store.ErrConversationFull and writes nothing, and the conversation holds exactly the cap.
func (h harness) messageCap(t *testing.T) {
	s := h.store(t)
	ex := storetest.Exchange("m1", "c1", storetest.Base, "question 1", "answer 1")
	ex.NewConversation = true
	record(t, s, ex)
	at := storetest.Base
	for i := 2; i < store.MaxConversationMessages/2; i++ {
		at = at.Add(time.Second)
		ex := storetest.Exchange("m1", "c1", at, fmt.Sprint("question ", i), fmt.Sprint("answer ", i))
		ex.ConversationExists = true
		record(t, s, ex)
	}
	const racing = 8
	errs := make(chan error, racing)
	for i := range racing {
		go func() {
			ex := storetest.Exchange("m1", "c1", at.Add(time.Minute), fmt.Sprint("racing ", i), "answer")
			ex.ConversationExists = i%2 == 0 // the runtime has read it, or not
			_, err := chat.RecordExchange(t.Context(), s, ex)
			errs <- err
		}()
	}
	written := 0
	for range racing {
		switch err := <-errs; {
		case err == nil:
			written++
		case !errors.Is(err, store.ErrConversationFull):
			t.Errorf("an exchange past the cap: %v, want ErrConversationFull", err)
		}
	}
	if written != 1 {
		t.Errorf("%d of %d exchanges racing for the last room were written, want 1", written, racing)
	}
	if c, msgs := storetest.GetConversation(t, s, "m1", "c1"); c.MessageCount != store.MaxConversationMessages || len(msgs) != store.MaxConversationMessages {
		t.Errorf("MessageCount %d, %d messages; want %d", c.MessageCount, len(msgs), store.MaxConversationMessages)
	}
}
