package sqlite

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/storetest"
)

// The citations a transaction counts are written once per item, at its end or before any statement that is not an
// exchange's: the counts must come out as if each exchange had written its own at once, in any mix of exchanges,
// edits of the items and failures that one transaction or group commit holds.
func TestCitationCountsDeferred(t *testing.T) {
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "parley.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	ctx := t.Context()
	now := time.Now().UTC()
	item := func(merchantID, id string) store.Knowledge {
		return store.Knowledge{MerchantID: merchantID, ID: id, Title: id, Content: "c", CreatedAt: now, UpdatedAt: now}
	}
	var many []string
	for i := range 2*maxCitations + 3 {
		many = append(many, fmt.Sprintf("n%02d", i))
	}
	if err := s.Write(ctx, func(tx store.Tx) error {
		for _, k := range append([]store.Knowledge{item("m1", "k1"), item("m1", "k2"), item("m2", "k1")}, itemsOf("m1", many, item)...) {
			if err := tx.InsertKnowledge(ctx, k); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	uses := func(merchantID, id string) int {
		t.Helper()
		k, err := s.GetKnowledge(ctx, merchantID, id)
		if err != nil {
			t.Fatal(err)
		}
		return k.UseCount
	}

	// One transaction: two exchanges citing k1, another merchant's k1, an item that does not exist, and k2
	// deleted and created again between two citations of it (only the later one counts).
	if err := s.Write(ctx, func(tx store.Tx) error {
		for _, c := range []struct {
			merchantID string
			ids        []string
		}{{"m1", []string{"k1", "k2"}}, {"m1", []string{"k1", "ghost"}}, {"m2", []string{"k1"}}} {
			if err := tx.CountCitations(ctx, c.merchantID, c.ids); err != nil {
				return err
			}
		}
		if err := tx.DeleteKnowledge(ctx, "m1", "k2"); err != nil {
			return err
		}
		if err := tx.InsertKnowledge(ctx, item("m1", "k2")); err != nil {
			return err
		}
		if err := tx.CountCitations(ctx, "m1", []string{"k2"}); err != nil {
			return err
		}
		return tx.CountCitations(ctx, "m1", many) // more items than one statement counts
	}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		merchantID, id string
		want           int
	}{{"m1", "k1", 2}, {"m1", "k2", 1}, {"m2", "k1", 1}, {"m1", many[0], 1}, {"m1", many[len(many)-1], 1}} {
		if got := uses(c.merchantID, c.id); got != c.want {
			t.Errorf("%s/%s UseCount = %d, want %d", c.merchantID, c.id, got, c.want)
		}
	}
	var ghost int
	if err := s.reader.QueryRowContext(ctx, `SELECT count(*) FROM knowledge_uses WHERE id = 'ghost'`).Scan(&ghost); err != nil || ghost != 0 {
		t.Errorf("a citation of no item was counted: %d rows, %v", ghost, err)
	}

	// A write that fails after counting counts nothing; the writes sharing its group commit count theirs.
	errFail := errors.New("fails after counting")
	const writers = 100
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			err := s.Write(ctx, func(tx store.Tx) error {
				if err := tx.CountCitations(ctx, "m1", []string{"k1"}); err != nil {
					return err
				}
				if i%3 == 0 {
					return errFail
				}
				return nil
			})
			if (i%3 == 0) != errors.Is(err, errFail) {
				t.Errorf("write %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if got, want := uses("m1", "k1"), 2+writers-(writers+2)/3; got != want {
		t.Errorf("after %d writers, a third failing: k1 UseCount = %d, want %d", writers, got, want)
	}
}

// itemsOf returns the items of ids, made by item.
func itemsOf(merchantID string, ids []string, item func(merchantID, id string) store.Knowledge) []store.Knowledge {
	items := make([]store.Knowledge, 0, len(ids))
	for _, id := range ids {
		items = append(items, item(merchantID, id))
	}
	return items
}

// The month's claims after a transaction's first are added up and written once: the ceiling must stay exact, in
// one transaction, across a statement that writes the deferred counts between claims, and across the writes of
// group commits.
func TestMonthlyClaimsDeferred(t *testing.T) {
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "parley.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	ctx := t.Context()
	may, june := time.Date(2026, 5, 10, 0, 0, 0, 0, time.UTC), time.Date(2026, 6, 10, 0, 0, 0, 0, time.UTC)
	count := func(merchantID string, at time.Time) int {
		t.Helper()
		n, err := s.ConversationsThisMonth(ctx, merchantID, at)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	var outcomes []error
	if err := s.Write(ctx, func(tx store.Tx) error {
		claim := func(merchantID string, at time.Time, limit int) {
			outcomes = append(outcomes, tx.ClaimMonthlySlot(ctx, merchantID, at, limit))
		}
		claim("m1", may, 3)
		claim("m1", may, 3)
		claim("m2", may, 1)
		claim("m1", june, 0)
		claim("m1", may, 3)
		claim("m1", may, 3) // the fourth: refused
		claim("m2", may, 1) // refused
		claim("m1", june, 0)
		// A statement that is not an exchange's writes the counts first; the claims after it go on from them.
		if _, err := tx.FindLead(ctx, "m1", "c1", "v1"); !errors.Is(err, store.ErrNotFound) {
			return err
		}
		claim("m1", may, 4)
		claim("m1", may, 4) // refused
		claim("m1", june, 0)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	refused := []bool{false, false, false, false, false, true, true, false, false, true, false}
	for i, err := range outcomes {
		if refused[i] != errors.Is(err, store.ErrQuotaExceeded) || !refused[i] && err != nil {
			t.Errorf("claim %d: %v, refused %v", i, err, refused[i])
		}
	}
	if m1May, m2May, m1June := count("m1", may), count("m2", may), count("m1", june); m1May != 4 || m2May != 1 || m1June != 3 {
		t.Errorf("counts m1 May %d, m2 May %d, m1 June %d; want 4, 1 and 3", m1May, m2May, m1June)
	}

	// Writers at once, sharing group commits, against a ceiling: exactly the ceiling's worth succeed.
	const writers, limit = 100, 40
	var wg sync.WaitGroup
	var mu sync.Mutex
	succeeded := 0
	for range writers {
		wg.Go(func() {
			err := s.Write(ctx, func(tx store.Tx) error { return tx.ClaimMonthlySlot(ctx, "m3", may, limit) })
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				succeeded++
			case !errors.Is(err, store.ErrQuotaExceeded):
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := count("m3", may); succeeded != limit || n != limit {
		t.Errorf("%d writers against a ceiling of %d: %d claims succeeded, count %d", writers, limit, succeeded, n)
	}
}

// The conversations and messages of a transaction's exchanges are inserted together at its end: an exchange that
// continues a conversation an earlier one of the same transaction started must find it, those of a conversation
// the runtime has read are counted in it, each conversation's messages keep their order, whichever statement
// inserts them, and a write whose rows fail at the end fails alone, the others of its group commit stored.
func TestExchangeInsertsDeferred(t *testing.T) {
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "parley.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	ctx := t.Context()
	at := time.Now().UTC().Truncate(time.Millisecond)
	exchange := func(conversationID string, isNew bool, questionID, answerID string) store.Exchange {
		return store.Exchange{MerchantID: "m1", ConversationID: conversationID, NewConversation: isNew, VisitorID: "v1",
			Question: store.Message{ID: questionID, Role: store.RoleVisitor, Text: "Where is my order?", CreatedAt: at},
			Answer:   store.Message{ID: answerID, Role: store.RoleAssistant, Text: "On its way.", CreatedAt: at, Answered: true}}
	}
	known := func(ex store.Exchange) store.Exchange {
		ex.ConversationExists = true
		return ex
	}
	record := func(tx store.Tx, ex store.Exchange) (bool, error) {
		created, err := tx.UpsertConversation(ctx, ex)
		if err != nil {
			return false, err
		}
		return created, tx.InsertMessages(ctx, ex)
	}
	messages := func(conversationID string) []string {
		t.Helper()
		_, msgs, err := s.GetConversation(ctx, "m1", conversationID)
		if err != nil {
			t.Fatalf("conversation %s: %v", conversationID, err)
		}
		ids := make([]string, len(msgs))
		for i, m := range msgs {
			ids[i] = m.ID
		}
		return ids
	}

	var created []bool
	if err := s.Write(ctx, func(tx store.Tx) error {
		for _, ex := range []store.Exchange{
			exchange("c1", true, "q1", "a1"),
			exchange("c1", false, "q2", "a2"),        // continues c1, not yet written
			known(exchange("c1", false, "q5", "a5")), // read by the runtime: counted with the deferred rows
			known(exchange("c1", false, "q6", "a6")), // twice in one transaction
			exchange("c2", false, "q3", "a3"),        // a conversation ID no conversation has: created
			exchange("c2", false, "q4", "a4"),
		} {
			c, err := record(tx, ex)
			if err != nil {
				return err
			}
			created = append(created, c)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if want := []bool{true, false, false, false, true, false}; fmt.Sprint(created) != fmt.Sprint(want) {
		t.Errorf("created %v, want %v", created, want)
	}
	if c1, c2 := fmt.Sprint(messages("c1")), fmt.Sprint(messages("c2")); c1 != "[q1 a1 q2 a2 q5 a5 q6 a6]" || c2 != "[q3 a3 q4 a4]" {
		t.Errorf("messages: c1 %s, c2 %s; want [q1 a1 q2 a2 q5 a5 q6 a6] and [q3 a3 q4 a4]", c1, c2)
	}
	if c, _, err := s.GetConversation(ctx, "m1", "c1"); err != nil || c.MessageCount != 8 {
		t.Errorf("c1: %+v, %v; want 8 messages counted", c, err)
	}

	// Held behind a write in progress, the next writes queue up and share a commit; one starts a new conversation
	// with c1's ID, which fails only when the deferred rows are written.
	release, started := make(chan struct{}), make(chan struct{})
	go func() {
		_ = s.write(ctx, func(*txn) error { close(started); <-release; return nil })
	}()
	<-started
	errs := make([]error, 6)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() {
			conversationID := fmt.Sprintf("c%d", 10+i)
			if i == 3 {
				conversationID = "c1"
			}
			errs[i] = s.Write(ctx, func(tx store.Tx) error {
				_, err := record(tx, exchange(conversationID, true, fmt.Sprintf("q%d", 10+i), fmt.Sprintf("a%d", 10+i)))
				return err
			})
		})
	}
	storetest.AwaitWaitingWrites(t, s.Collectors(), len(errs))
	close(release)
	wg.Wait()
	for i, err := range errs {
		if (i == 3) != (err != nil) {
			t.Errorf("write %d: %v", i, err)
		}
		if i == 3 {
			continue
		}
		if _, _, err := s.GetConversation(ctx, "m1", fmt.Sprintf("c%d", 10+i)); err != nil {
			t.Errorf("conversation of write %d: %v", i, err)
		}
	}
	if c1 := fmt.Sprint(messages("c1")); c1 != "[q1 a1 q2 a2 q5 a5 q6 a6]" {
		t.Errorf("messages of c1 after the failed write: %s", c1)
	}
	if groups, writes, split := storetest.GroupMetrics(t, s.Collectors()); split != 1 || writes <= groups {
		t.Errorf("parley_runtime_store_group_writes: %d writes in %d groups, %d split; want a group of several, split once",
			writes, groups, split)
	}
}
