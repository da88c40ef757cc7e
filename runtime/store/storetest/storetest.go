// Package storetest is the conformance suite of store.Store: every implementation runs Run against fresh,
// empty stores and must pass it unchanged. The suite uses the interface only: it writes through store.Tx's
// statements itself, without the rules that package chat combines them by (chat's own tests run those flows over
// every store). Its fixtures are exported for those tests and for the stores' own.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/store"
)

// Run runs the suite. open must return a new, empty store each time it is called; Run closes it when the
// subtest that opened it ends.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	h := harness{open: open}
	t.Run("ListConversations", h.listConversations)
	t.Run("Overview", h.overview)
	t.Run("ModelTokens", h.modelTokens)
	t.Run("VisitorUse", h.visitorUse)
	t.Run("APIKeys", h.apiKeys)
	t.Run("SignOuts", h.signOuts)
	t.Run("SignIns", h.signIns)
	t.Run("Lifecycle", h.lifecycle)
	t.Run("PanicInWrite", h.panicInWrite)
	t.Run("EachConversation", h.eachConversation)
	t.Run("Leases", h.leases)
}

// harness opens the stores of the subtests.
type harness struct {
	open func(t *testing.T) store.Store
}

// store opens a fresh store, closed when t ends.
func (h harness) store(t *testing.T) store.Store {
	t.Helper()
	return Fresh(t, h.open)
}

// Fresh opens a store with open, closed when t ends.
func Fresh(t *testing.T, open func(t *testing.T) store.Store) store.Store {
	t.Helper()
	s := open(t)
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// Base is the reference time of the suites, in March 2026.
var Base = time.Date(2026, time.March, 10, 12, 0, 0, 0, time.UTC)

// NewID returns an ID unique within the test binary.
func NewID(prefix string) string {
	return fmt.Sprintf("%s-%d", prefix, idSeq.Add(1))
}

var idSeq atomic.Int64

// Exchange builds an answered exchange: the question at at, the answer a second later.
func Exchange(merchantID, conversationID string, at time.Time, question, answer string) store.Exchange {
	return store.Exchange{
		MerchantID:     merchantID,
		ConversationID: conversationID,
		VisitorID:      "visitor-" + conversationID,
		Question:       store.Message{ID: NewID("q"), Role: store.RoleVisitor, Text: question, CreatedAt: at},
		Answer: store.Message{ID: NewID("a"), Role: store.RoleAssistant, Text: answer,
			CreatedAt: at.Add(time.Second), Answered: true},
	}
}

// Unanswered marks the exchange's answer as not answered.
func Unanswered(ex store.Exchange) store.Exchange {
	ex.Answer.Answered = false
	return ex
}

// Citing makes the exchange's answer cite the knowledge items.
func Citing(ex store.Exchange, knowledgeIDs ...string) store.Exchange {
	for i, id := range knowledgeIDs {
		ex.Answer.Sources = append(ex.Answer.Sources, store.Source{KnowledgeID: id, Title: "Item " + id,
			URL: "https://example.com/" + id, Snippet: "snippet", Score: 1 / float64(i+2)})
	}
	return ex
}

// WriteExchange writes ex with the store's statements alone, in one WriteExchange transaction: the conversation,
// its messages, its tokens, its answer's citations and, for a new conversation, its claim on the month's
// ceiling. It writes no lead and no event: those are chat's rules, tested in chat's suite.
func WriteExchange(ctx context.Context, s store.Store, ex store.Exchange) (store.ExchangeResult, error) {
	var res store.ExchangeResult
	err := s.WriteExchange(ctx, func(tx store.Tx) error {
		created, err := tx.UpsertConversation(ctx, ex)
		if err != nil {
			return err
		}
		res = store.ExchangeResult{Created: created}
		if err := tx.InsertMessages(ctx, ex); err != nil {
			return err
		}
		if ex.Tokens > 0 {
			if err := tx.AddMonthlyTokens(ctx, ex.MerchantID, ex.Question.CreatedAt, ex.Tokens); err != nil {
				return err
			}
		}
		if ex.Answer.Answered {
			var ids []string
			for _, src := range ex.Answer.Sources {
				ids = append(ids, src.KnowledgeID)
			}
			if len(ids) > 0 {
				if err := tx.CountCitations(ctx, ex.MerchantID, ids); err != nil {
					return err
				}
			}
		}
		if created {
			return tx.ClaimMonthlySlot(ctx, ex.MerchantID, ex.Question.CreatedAt, ex.MonthlyLimit)
		}
		return nil
	})
	if err != nil {
		return store.ExchangeResult{}, fmt.Errorf("writing exchange in conversation %s: %w", ex.ConversationID, err)
	}
	return res, nil
}

// WriteKnowledge inserts k with the store's statements alone: its claim on the merchant's count (no ceiling) and
// the item.
func WriteKnowledge(ctx context.Context, s store.Store, k store.Knowledge) error {
	err := s.Write(ctx, func(tx store.Tx) error {
		if _, err := tx.ClaimKnowledgeSlot(ctx, k.MerchantID, 0); err != nil {
			return err
		}
		return tx.InsertKnowledge(ctx, k)
	})
	if err != nil {
		return fmt.Errorf("writing knowledge item %s: %w", k.ID, err)
	}
	return nil
}

// record writes ex (WriteExchange) and fails the test on error.
func record(t *testing.T, s store.Store, ex store.Exchange) store.ExchangeResult {
	t.Helper()
	res, err := WriteExchange(t.Context(), s, ex)
	if err != nil {
		t.Fatalf("WriteExchange(%s/%s): %v", ex.MerchantID, ex.ConversationID, err)
	}
	return res
}

// startConversation records one exchange in a new conversation created at at.
func startConversation(t *testing.T, s store.Store, merchantID, id string, at time.Time) {
	t.Helper()
	if res := record(t, s, Exchange(merchantID, id, at, "question of "+id, "answer to "+id)); !res.Created {
		t.Fatalf("conversation %s was not created", id)
	}
}

// Item builds a knowledge item created and updated at at.
func Item(merchantID, id string, at time.Time) store.Knowledge {
	return store.Knowledge{ID: id, MerchantID: merchantID, Title: "Title " + id, Content: "Content of " + id,
		URL: "https://shop.example/" + id, Tags: []string{"faq"}, CreatedAt: at, UpdatedAt: at}
}

// Revision returns the merchant's knowledge revision and fails the test on error.
func Revision(t *testing.T, s store.Store, merchantID string) int64 {
	t.Helper()
	rev, err := s.KnowledgeRevision(t.Context(), merchantID)
	if err != nil {
		t.Fatalf("KnowledgeRevision: %v", err)
	}
	return rev
}

// GetConversation returns a conversation and its messages and fails the test on error.
func GetConversation(t *testing.T, s store.Store, merchantID, id string) (store.Conversation, []store.Message) {
	t.Helper()
	c, msgs, err := s.GetConversation(t.Context(), merchantID, id)
	if err != nil {
		t.Fatalf("GetConversation(%s, %s): %v", merchantID, id, err)
	}
	return c, msgs
}

// ThisMonth returns the merchant's conversations of now's month and fails the test on error.
func ThisMonth(t *testing.T, s store.Store, merchantID string, now time.Time) int {
	t.Helper()
	n, err := s.ConversationsThisMonth(t.Context(), merchantID, now)
	if err != nil {
		t.Fatalf("ConversationsThisMonth: %v", err)
	}
	return n
}

// Exists reports whether the merchant has the conversation and fails the test on error.
func Exists(t *testing.T, s store.Store, merchantID, id string) bool {
	t.Helper()
	ok, err := s.ConversationExists(t.Context(), merchantID, id)
	if err != nil {
		t.Fatalf("ConversationExists: %v", err)
	}
	return ok
}

// WantErr fails the test unless err is target.
func WantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: got error %v, want %v", what, err, target)
	}
}

// Millis is t truncated to the millisecond, in UTC: what a store gives back.
func Millis(t time.Time) time.Time {
	return t.Truncate(time.Millisecond).UTC()
}

// CheckTime checks that got is want as stored: same millisecond, in UTC.
func CheckTime(t *testing.T, what string, got, want time.Time) {
	t.Helper()
	if !got.Equal(Millis(want)) || got.Location() != time.UTC {
		t.Errorf("%s = %v, want %v (UTC, millisecond precision)", what, got, Millis(want))
	}
}

// CheckMessage checks that got is want as stored.
func CheckMessage(t *testing.T, got, want store.Message) {
	t.Helper()
	if got.ID != want.ID || got.Role != want.Role || got.Text != want.Text || got.Answered != want.Answered ||
		got.Confidence != want.Confidence {
		t.Errorf("message = {%s %s %q answered=%v confidence=%v}, want {%s %s %q answered=%v confidence=%v}",
			got.ID, got.Role, got.Text, got.Answered, got.Confidence, want.ID, want.Role, want.Text, want.Answered, want.Confidence)
	}
	CheckTime(t, "message "+want.ID+" CreatedAt", got.CreatedAt, want.CreatedAt)
	if len(got.Sources) != 0 || len(want.Sources) != 0 {
		if !reflect.DeepEqual(got.Sources, want.Sources) {
			t.Errorf("message %s sources = %+v, want %+v", want.ID, got.Sources, want.Sources)
		}
	}
}

// ListAllConversations follows the cursors of a listing to its end.
func ListAllConversations(t *testing.T, s store.Store, merchantID string, f store.ConversationFilter) []store.Conversation {
	t.Helper()
	var all []store.Conversation
	for range 1000 {
		page, next, err := s.ListConversations(t.Context(), merchantID, f)
		if err != nil {
			t.Fatalf("ListConversations: %v", err)
		}
		all = append(all, page...)
		if next == "" {
			return all
		}
		if len(page) == 0 {
			t.Fatal("ListConversations returned an empty page with a cursor")
		}
		f.Cursor = next
	}
	t.Fatal("ListConversations never ended")
	return nil
}

// ConversationIDs returns the IDs of list, in order.
func ConversationIDs(list []store.Conversation) []string {
	ids := make([]string, 0, len(list))
	for _, c := range list {
		ids = append(ids, c.ID)
	}
	return ids
}

// CheckIDs checks that got is want, in order.
func CheckIDs(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

// RunConcurrently calls fn(i) for i in [0, n) from n goroutines started together and returns the errors.
func RunConcurrently(n int, fn func(i int) error) []error {
	errs := make([]error, n)
	start := make(chan struct{})
	done := make(chan struct{})
	for i := range n {
		go func() {
			defer func() { done <- struct{}{} }()
			<-start
			errs[i] = fn(i)
		}()
	}
	close(start)
	for range n {
		<-done
	}
	return errs
}

// CountErrors counts nil errors and errors that are target, and fails on any other error.
func CountErrors(t *testing.T, errs []error, target error) (ok, refused int) {
	t.Helper()
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, target):
			refused++
		default:
			t.Errorf("unexpected error: %v", err)
		}
	}
	return ok, refused
}

// lifecycle covers Ping and Close.
func (h harness) lifecycle(t *testing.T) {
	s := h.open(t)
	if err := s.Ping(t.Context()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Ping(context.Background()); err == nil {
		t.Error("Ping after Close succeeded")
	}
}

// panicInWrite: a write callback that panics panics in its caller's goroutine, as it would without a store
// between (where the caller, an HTTP server, recovers it), and not in the store's, which would end the process;
// nothing of it is written, and the writes that ran beside it are.
func (h harness) panicInWrite(t *testing.T) {
	s := h.store(t)
	const writes = 20
	panics := make([]any, writes)
	errs := RunConcurrently(writes, func(i int) error {
		ex := Exchange("m1", fmt.Sprint("c", i), Base, "Hello", "Hi!")
		if i != 7 && i != 13 {
			_, err := WriteExchange(context.Background(), s, ex)
			return err
		}
		defer func() { panics[i] = recover() }()
		write := s.Write
		if i == 13 {
			write = s.WriteExchange
		}
		return write(context.Background(), func(tx store.Tx) error {
			if _, err := tx.UpsertConversation(context.Background(), ex); err != nil {
				return err
			}
			panic("the callback's bug")
		})
	})
	for i, err := range errs {
		if err != nil {
			t.Errorf("write %d: %v", i, err)
		}
	}
	for _, i := range []int{7, 13} { // through Write and WriteExchange
		if p := fmt.Sprint(panics[i]); !strings.Contains(p, "the callback's bug") {
			t.Errorf("the panicking write %d's caller recovered %q, want the callback's panic", i, p)
		}
		if Exists(t, s, "m1", fmt.Sprint("c", i)) {
			t.Errorf("the panicking write %d's conversation was stored", i)
		}
	}
	if n := ThisMonth(t, s, "m1", Base); n != writes-2 {
		t.Errorf("ConversationsThisMonth = %d, want %d: every write but the panicking ones", n, writes-2)
	}
}
