package controllers

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/runtime/tenant"
)

func TestPastLimit(t *testing.T) {
	at := func(name string, sec int64, deleting bool) metav1.Object {
		o := &chatv1alpha1.Merchant{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.Unix(sec, 0)}}
		if deleting {
			o.DeletionTimestamp = &metav1.Time{Time: time.Unix(sec+100, 0)}
		}
		return o
	}
	a, b, c := at("a", 10, false), at("b", 10, false), at("c", 5, false)
	gone := at("gone", 1, true)
	for _, tc := range []struct {
		name  string
		o     metav1.Object
		peers []metav1.Object
		n     int32
		want  bool
	}{
		{"alone", a, []metav1.Object{a}, 1, false},
		{"the oldest is served", c, []metav1.Object{a, b, c}, 1, false},
		{"the youngest waits", b, []metav1.Object{a, b, c}, 2, true},
		{"a tie goes by name", a, []metav1.Object{a, b, c}, 2, false},
		{"within a larger limit", b, []metav1.Object{a, b, c}, 3, false},
		{"one being deleted makes room", b, []metav1.Object{a, b, gone}, 1, true},
		{"one being deleted makes room, within", a, []metav1.Object{a, b, gone}, 1, false},
		{"not yet among the peers (cache behind)", b, []metav1.Object{a, c}, 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := pastLimit(tc.o, tc.peers, tc.n); got != tc.want {
				t.Errorf("pastLimit = %v, want %v", got, tc.want)
			}
		})
	}
}

// A tenant cannot grow the shared runtime at will: past its runtime's merchantsPerNamespace a namespace's Merchant
// publishes nothing and says why, until an older one is deleted.
func TestMerchantsPastTheNamespaceLimit(t *testing.T) {
	ns := newNamespace(t)
	rt := runtimeObj("rt-" + ns)
	two := int32(2)
	rt.Spec.TenantLimits.MerchantsPerNamespace = &two
	p := plan("plan-"+ns, 10, false)
	create(t, rt, p)
	ms := make([]*chatv1alpha1.Merchant, 3)
	for i := range ms {
		ms[i] = merchant(ns, fmt.Sprint("shop-", i), p.Name, rt.Name)
		create(t, ms[i])
	}
	waitReady(t, ms[0], metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)
	waitReady(t, ms[1], metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)
	waitReady(t, ms[2], metav1.ConditionFalse, chatv1alpha1.ReasonTooManyMerchants)
	if _, err := bundleSecret(t, ns+"-shop-2"); err == nil {
		t.Fatal("a Merchant past the namespace's limit published a bundle")
	}
	// Another runtime's Merchants are not counted against this one's.
	other := runtimeObj("rt2-" + ns)
	create(t, other)
	elsewhere := merchant(ns, "shop-elsewhere", p.Name, other.Name)
	create(t, elsewhere)
	waitReady(t, elsewhere, metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)

	if err := k8s.Delete(ctxT(t), ms[0]); err != nil {
		t.Fatal(err)
	}
	waitReady(t, ms[2], metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)
	waitBundle(t, ns+"-shop-2", func(*tenant.Bundle) error { return nil })
}

// Past its runtime's apiKeysPerMerchant a Merchant's newest key is not published and says why; deleting an older
// key publishes it, and raising the limit publishes the rest.
func TestAPIKeysPastTheMerchantLimit(t *testing.T) {
	f := newTenant(t, false)
	two := int32(2)
	update(t, f.runtime, func(rt *chatv1alpha1.ChatRuntime) { rt.Spec.TenantLimits.APIKeysPerMerchant = &two })
	keys := make([]*chatv1alpha1.APIKey, 3)
	for i := range keys {
		keys[i] = apiKey(f.ns, fmt.Sprint("key-", i), "shop", chatv1alpha1.APIKeyPublishable)
		create(t, keys[i])
	}
	waitReady(t, keys[0], metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)
	waitReady(t, keys[1], metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)
	waitReady(t, keys[2], metav1.ConditionFalse, chatv1alpha1.ReasonTooManyAPIKeys)
	values := make([]string, len(keys))
	for i, k := range keys {
		values[i], _ = keySecretValue(t, k)
	}
	waitBundle(t, f.id, hasKeyHash(sha256Hex(values[1])))
	if b := waitBundle(t, f.id, lacksKeyHash(sha256Hex(values[2]))); len(b.APIKeys) != 2 {
		t.Errorf("the bundle has %d keys, want the limit of 2", len(b.APIKeys))
	}

	if err := k8s.Delete(ctxT(t), keys[0]); err != nil {
		t.Fatal(err)
	}
	waitReady(t, keys[2], metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)
	waitBundle(t, f.id, hasKeyHash(sha256Hex(values[2])))

	extra := apiKey(f.ns, "key-3", "shop", chatv1alpha1.APIKeyPublishable)
	create(t, extra)
	waitReady(t, extra, metav1.ConditionFalse, chatv1alpha1.ReasonTooManyAPIKeys)
	three := int32(3)
	update(t, f.runtime, func(rt *chatv1alpha1.ChatRuntime) { rt.Spec.TenantLimits.APIKeysPerMerchant = &three })
	waitReady(t, extra, metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)
	value, _ := keySecretValue(t, extra)
	waitBundle(t, f.id, hasKeyHash(sha256Hex(value)))
}
