package chat_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/store"
)

// An import is all or nothing: one past the plan's ceiling and none of the items is kept.
func TestImportKnowledgeIsAllOrNothing(t *testing.T) {
	f := newFixture(t)
	m := merchant(0)
	m.Plan.KnowledgeItems = 3
	if _, err := f.svc.CreateKnowledge(t.Context(), m, store.Knowledge{Title: "Returns", Content: "Within 60 days."}); err != nil {
		t.Fatal(err)
	}
	items := func(n int) []store.Knowledge {
		out := make([]store.Knowledge, n)
		for i := range out {
			out[i] = store.Knowledge{Title: fmt.Sprintf("Item %d", i), Content: "Content"}
		}
		return out
	}
	count := func() int {
		all, err := f.store.AllKnowledge(t.Context(), m.MerchantID)
		if err != nil {
			t.Fatal(err)
		}
		return len(all)
	}
	if _, err := f.svc.ImportKnowledge(t.Context(), m, items(3)); !errors.Is(err, store.ErrKnowledgeLimit) {
		t.Fatalf("importing past the ceiling: %v", err)
	}
	if n := count(); n != 1 {
		t.Fatalf("after a refused import: %d items, want 1", n)
	}
	got, err := f.svc.ImportKnowledge(t.Context(), m, items(2))
	if err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 3 || len(got) != 2 || got[0].ID == "" || got[0].ID == got[1].ID || got[0].MerchantID != m.MerchantID {
		t.Errorf("after an import: %d items, returned %+v", n, got)
	}
	// The imported items answer at once.
	reply, err := f.svc.Answer(t.Context(), m, chat.Question{Message: "Tell me about item 1"})
	if err != nil || len(reply.Message.Sources) == 0 {
		t.Errorf("the imported items do not answer: %+v %v", reply, err)
	}
}
