package controllers

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
)

func TestOwnWrites(t *testing.T) {
	w := newOwnWrites()
	key := types.NamespacedName{Namespace: "t", Name: "shop"}
	if w.behind(key, "1") {
		t.Error("an object never written is behind")
	}
	w.wrote(key, "1", "1") // a patch that changed nothing
	if w.behind(key, "1") {
		t.Error("a write that changed nothing holds the object back")
	}
	w.wrote(key, "1", "2") // the finalizer
	w.wrote(key, "2", "3") // the status
	for _, rv := range []string{"1", "2"} {
		if !w.behind(key, rv) {
			t.Errorf("the cache at %s, replaced by an own write, is not behind", rv)
		}
	}
	if w.behind(key, "3") {
		t.Error("the cache at the own write's version is behind")
	}
	if w.behind(key, "2") {
		t.Error("replaced versions are remembered after the cache showed a newer one")
	}
	if len(w.replaced) != 0 {
		t.Errorf("remembered: %v", w.replaced)
	}
}

func TestHeldBack(t *testing.T) {
	w := newOwnWrites()
	key := apiKey("t", "k", "shop", chatv1alpha1.APIKeyPublishable)
	key.ResourceVersion = "1"
	w.wrote(client.ObjectKeyFromObject(key), "1", "2") // the status write
	if !w.heldBack(key) {
		t.Error("the cached copy an own write replaced is not held back")
	}
	key.ResourceVersion = "2"
	if w.heldBack(key) {
		t.Error("the cached copy of the own write is held back")
	}
}
