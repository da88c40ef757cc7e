package sqlite

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/parley-dev/parley/runtime/store"
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
