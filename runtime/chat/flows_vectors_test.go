package chat_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/storetest"
)

// knowledgeVectors checks the embeddings of items' passages: replaced whole per item, read back exactly, kept
// to their merchant, and gone with their item; and that their stamps are read as they are, without the vectors.
func (h harness) knowledgeVectors(t *testing.T) {
	s := h.store(t)
	ctx := t.Context()
	mustCreateKnowledge(t, s, storetest.Item("m1", "k1", storetest.Base), 0)
	mustCreateKnowledge(t, s, storetest.Item("m1", "k2", storetest.Base), 0)
	mustCreateKnowledge(t, s, storetest.Item("m2", "k1", storetest.Base), 0)
	replace := func(merchantID, id string, vs ...store.KnowledgeVector) error {
		return s.Write(ctx, func(tx store.Tx) error { return tx.ReplaceKnowledgeVectors(ctx, merchantID, id, vs) })
	}
	vectors := func(merchantID string) []store.KnowledgeVector {
		t.Helper()
		vs, err := s.KnowledgeVectors(ctx, merchantID)
		if err != nil {
			t.Fatal(err)
		}
		stamps, err := s.KnowledgeVectorStamps(ctx, merchantID)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]store.KnowledgeVector, len(vs))
		for i, v := range vs {
			v.Vector = nil
			want[i] = v
		}
		if (len(stamps) > 0 || len(want) > 0) && !reflect.DeepEqual(stamps, want) {
			t.Errorf("KnowledgeVectorStamps(%s) = %+v, want %+v", merchantID, stamps, want)
		}
		return vs
	}
	v := func(id string, passage int, model string, values ...float32) store.KnowledgeVector {
		return store.KnowledgeVector{KnowledgeID: id, Passage: passage, Model: model, TextHash: "h" + id, Vector: values}
	}
	old := []store.KnowledgeVector{v("k1", 0, "a", 1, 0), v("k1", 1, "a", 0, 1), v("k1", 2, "a", 0.5, 0.5)}
	if err := replace("m1", "k1", old...); err != nil {
		t.Fatal(err)
	}
	// Values that a text encoding would round: the stores keep the float32s' bits.
	odd := v("k2", 0, "a", 0.1, -3.4028235e38, 1.0e-45)
	if err := replace("m1", "k2", odd); err != nil {
		t.Fatal(err)
	}
	if got, want := vectors("m1"), append(append([]store.KnowledgeVector{}, old...), odd); !reflect.DeepEqual(got, want) {
		t.Errorf("KnowledgeVectors = %+v, want %+v", got, want)
	}
	// A new model's vectors for an item that now has fewer passages replace all of its old ones.
	fresh := v("k1", 0, "b@2", 0.6, 0.8)
	if err := replace("m1", "k1", fresh); err != nil {
		t.Fatal(err)
	}
	if got, want := vectors("m1"), []store.KnowledgeVector{fresh, odd}; !reflect.DeepEqual(got, want) {
		t.Errorf("after replacing k1: %+v, want %+v", got, want)
	}
	// Another merchant sees none of them, and cannot write to an item it does not have.
	if got := vectors("m2"); len(got) != 0 {
		t.Errorf("m2 reads %+v", got)
	}
	if err := replace("m2", "k2", v("k2", 0, "a", 1)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("m2 writing m1's k2: %v, want ErrNotFound", err)
	}
	if err := replace("m1", "gone", v("gone", 0, "a", 1)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("writing an item that does not exist: %v, want ErrNotFound", err)
	}
	// Deleting the item deletes its vectors.
	if err := chat.DeleteKnowledge(ctx, s, "m1", "k1"); err != nil {
		t.Fatal(err)
	}
	if got, want := vectors("m1"), []store.KnowledgeVector{odd}; !reflect.DeepEqual(got, want) {
		t.Errorf("after deleting k1: %+v, want %+v", got, want)
	}
	// Erasing the merchant erases them.
	if _, err := chat.EraseMerchant(ctx, s, "m1"); err != nil {
		t.Fatal(err)
	}
	if got := vectors("m1"); len(got) != 0 {
		t.Errorf("after erasing m1: %+v", got)
	}
}
