//go:build integration

package chat_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/parley-dev/parley/internal/testutil/fakeembed"
	"github.com/parley-dev/parley/runtime/assistant"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/postgres"
	"github.com/parley-dev/parley/runtime/tenant"
)

// TestTwoReplicasEmbedEachPassageOnce starts two runtimes on one PostgreSQL store, both finding at start the same
// merchants' knowledge to embed: under each merchant's lease one of them embeds it, each passage once.
func TestTwoReplicasEmbedEachPassageOnce(t *testing.T) {
	url := pg.Server(t).Database(t)
	openPG := func() store.Store {
		st, err := postgres.Open(t.Context(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		return st
	}
	p := fakeembed.New(t)
	ms := []*tenant.Bundle{shop("a"), shop("b"), shop("c")}
	one := newEmbedWorld(t, openPG(), p, "m", 2, ms...)
	two := newEmbedWorld(t, openPG(), p, "m", 2, ms...)
	var want []string
	for _, m := range ms {
		for i := range 8 {
			k, err := one.svc.CreateKnowledge(t.Context(), m, store.Knowledge{Title: fmt.Sprintf("%s item %d", m.MerchantID, i),
				Content: fmt.Sprintf("What %s says of its item %d.", m.MerchantID, i)})
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, assistant.EmbeddingTexts(assistant.Item{Title: k.Title, Content: k.Content, Questions: k.Questions})...)
		}
	}
	stops := []func(){one.run(t), two.run(t)}
	for _, m := range ms {
		one.waitEmbedded(t, m.MerchantID, "m")
	}
	for _, stop := range stops {
		stop() // the batches in flight end before the requests are counted
	}
	got := p.Inputs()
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("the provider embedded %d texts for %d passages: %q", len(got), len(want), got)
	}
}
