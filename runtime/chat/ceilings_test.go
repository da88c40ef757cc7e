package chat_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
)

// TestEveryKnowledgeWriteKeepsBothCeilings: whichever way items are added (the API's and dashboard's create, the
// free function other packages call, an import, a synced page) the plan's item ceiling and its characters ceiling
// both hold, and a refused write leaves the knowledge base as it was.
func TestEveryKnowledgeWriteKeepsBothCeilings(t *testing.T) {
	const existing = "Returns within 60 days." // the item already held: 7 + 23 characters
	newItem := func(content string) store.Knowledge {
		return store.Knowledge{ID: "kn_new", MerchantID: "acme", Title: "Gift cards", Content: content}
	}
	paths := []struct {
		name string
		add  func(f *fixture, m *tenant.Bundle, content string) error
	}{
		{"service create", func(f *fixture, m *tenant.Bundle, content string) error {
			_, err := f.svc.CreateKnowledge(t.Context(), m, newItem(content))
			return err
		}},
		{"free create", func(f *fixture, m *tenant.Bundle, content string) error {
			return chat.CreateKnowledge(t.Context(), f.store, newItem(content), chat.KnowledgeLimitsOf(m.Plan))
		}},
		{"import", func(f *fixture, m *tenant.Bundle, content string) error {
			var read int
			_, err := f.svc.ImportKnowledge(t.Context(), m, strings.NewReader("Gift cards|"+content+"\n"), lines(&read))
			return err
		}},
		{"synced page", func(f *fixture, m *tenant.Bundle, content string) error {
			k := newItem(content)
			k.SourceID = "src1"
			return chat.ReplacePage(t.Context(), f.store, store.SourcePage{MerchantID: "acme", SourceID: "src1",
				URL: "https://shop.example/gift-cards", Status: store.PageRead}, []store.Knowledge{k}, chat.KnowledgeLimitsOf(m.Plan))
		}},
	}
	ceilings := []struct {
		name    string
		plan    tenant.Plan
		content string // of the new item
		want    error
	}{
		{"within both", tenant.Plan{KnowledgeItems: 2, KnowledgeCharacters: 100}, "Sold online.", nil},
		{"past the items", tenant.Plan{KnowledgeItems: 1, KnowledgeCharacters: 100}, "Sold online.", store.ErrKnowledgeLimit},
		{"past the characters", tenant.Plan{KnowledgeItems: 2, KnowledgeCharacters: 60}, strings.Repeat("x", 21), store.ErrKnowledgeSizeLimit},
		{"at the characters", tenant.Plan{KnowledgeItems: 2, KnowledgeCharacters: 60}, strings.Repeat("x", 20), nil},
	}
	for _, p := range paths {
		for _, c := range ceilings {
			t.Run(fmt.Sprintf("%s %s", p.name, c.name), func(t *testing.T) {
				f := newFixture(t)
				m := merchant(0)
				m.Plan = c.plan
				if _, err := f.svc.CreateKnowledge(t.Context(), m, store.Knowledge{Title: "Returns", Content: existing}); err != nil {
					t.Fatal(err)
				}
				err := p.add(f, m, c.content)
				if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
					t.Fatalf("adding an item: %v; want %v", err, c.want)
				}
				all, err := f.store.AllKnowledge(t.Context(), "acme")
				if err != nil {
					t.Fatal(err)
				}
				if want := map[bool]int{true: 2, false: 1}[c.want == nil]; len(all) != want {
					t.Errorf("the merchant holds %d items, want %d", len(all), want)
				}
			})
		}
	}
}
