package controllers

import (
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/internal/contract"
)

func TestRefusedByRuntime(t *testing.T) {
	for _, tc := range []struct {
		name      string
		keysInUse []string
		keyID     string
		refused   bool
	}{
		{name: "none refused", keyID: "abc"},
		{name: "another key refused", keysInUse: []string{"xyz"}, keyID: "abc"},
		{name: "this key refused", keysInUse: []string{"xyz", "abc"}, keyID: "abc", refused: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := refusedByRuntime(tc.keysInUse, tc.keyID)
			if (p != nil) != tc.refused {
				t.Fatalf("refusedByRuntime = %v, want refused %v", p, tc.refused)
			}
			if p != nil && (p.reason != chatv1alpha1.ReasonKeyInUse || strings.Contains(p.message, tc.keyID)) {
				t.Errorf("problem %+v, want reason KeyInUse", p)
			}
		})
	}
}

func TestKeysInUseFrom(t *testing.T) {
	report := contract.UsageReport{Merchants: map[string]contract.MerchantUsage{
		"shop":  {KeysInUse: []string{"b", "a"}},
		"clean": {Conversations: 3},
	}}
	for _, tc := range []struct {
		merchant string
		want     []string
	}{
		{merchant: "shop", want: []string{"a", "b"}},
		{merchant: "clean"},
		{merchant: "unknown"},
	} {
		if got := keysInUseFrom(report, tc.merchant); !slices.Equal(got, tc.want) || (tc.want == nil && got != nil) {
			t.Errorf("keysInUseFrom(%s) = %#v, want %#v", tc.merchant, got, tc.want)
		}
	}
}

func TestKeysInUseChanged(t *testing.T) {
	merchant := func(generation int64, keys ...string) *chatv1alpha1.Merchant {
		return &chatv1alpha1.Merchant{ObjectMeta: metav1.ObjectMeta{Generation: generation},
			Status: chatv1alpha1.MerchantStatus{KeysInUse: keys}}
	}
	p := keysInUseChanged()
	for _, tc := range []struct {
		name     string
		old, new *chatv1alpha1.Merchant
		want     bool
	}{
		{name: "a key refused", old: merchant(1), new: merchant(1, "abc"), want: true},
		{name: "a key no longer refused", old: merchant(1, "abc"), new: merchant(1), want: true},
		{name: "the same keys", old: merchant(1, "abc"), new: merchant(1, "abc")},
		{name: "other status", old: merchant(1), new: &chatv1alpha1.Merchant{Status: chatv1alpha1.MerchantStatus{MerchantID: "x"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := p.Update(event.UpdateEvent{ObjectOld: tc.old, ObjectNew: tc.new}); got != tc.want {
				t.Errorf("Update = %v, want %v", got, tc.want)
			}
		})
	}
	if p.Create(event.CreateEvent{Object: merchant(1, "abc")}) || p.Delete(event.DeleteEvent{Object: merchant(1)}) {
		t.Error("keysInUseChanged passes a creation or deletion, which GenerationChangedPredicate already passes")
	}
}
