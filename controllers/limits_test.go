//go:build integration

package controllers

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/internal/render"
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

// The bound on a bundle is never what stops a Merchant within its schema's limits and its runtime's default
// apiKeysPerMerchant, with as many webhooks as a merchant plausibly has, each at its longest: only many more
// webhooks or a raised key limit reach it, and then BundleTooLarge says so.
func TestLargestMerchantFitsItsBundle(t *testing.T) {
	const webhooks = 24
	long := func(n int) string { return strings.Repeat("<", n) } // escaped in JSON, six bytes each
	m := merchant("tenant-with-a-name-as-long-as-a-namespace-name-may-be-at-most-x", "shop", "p", "rt")
	m.Spec.DisplayName = long(200)
	for i := range 100 {
		m.Spec.AllowedOrigins = append(m.Spec.AllowedOrigins, fmt.Sprintf("https://%03d%s.example", i, strings.Repeat("a", 300-len("https://000.example"))))
		m.Spec.Owners = append(m.Spec.Owners, chatv1alpha1.Owner{Email: fmt.Sprintf("%03d%s@example.com", i, strings.Repeat("o", 254-len("000@example.com")))})
	}
	m.Spec.Widget = chatv1alpha1.WidgetSpec{Title: long(80), Greeting: long(500), Color: "#000000", Locale: "en-GB"}
	m.Spec.Assistant = chatv1alpha1.MerchantAssistantSpec{Instructions: long(4000), FallbackMessage: long(1000)}
	p := plan("p", 10, true)
	expires := metav1.NewTime(time.Now().Add(time.Hour))
	var keys []render.ResolvedKey
	for i := range chatv1alpha1.DefaultAPIKeysPerMerchant {
		keys = append(keys, render.ResolvedKey{ID: fmt.Sprintf("key_%020d", i), Type: chatv1alpha1.APIKeySecret,
			SHA256: strings.Repeat("f", 64), ExpiresAt: &expires})
	}
	var hooks []render.ResolvedWebhook
	for i := range webhooks {
		w := webhook(m.Namespace, fmt.Sprint("hook-", i), "shop")
		w.Spec.URL = "https://crm.example/" + strings.Repeat("h", 2048-len("https://crm.example/"))
		w.Spec.Events = []chatv1alpha1.WebhookEvent{chatv1alpha1.EventConversationCreated, chatv1alpha1.EventLeadCreated, chatv1alpha1.EventLeadUpdated}
		secret := "whsec_" + strings.Repeat("A", 88)
		hooks = append(hooks, render.ResolvedWebhook{Webhook: w, SigningSecrets: []string{secret, secret}})
	}
	b := render.Bundle(m, render.MerchantID(m), p, keys, hooks, time.Now())
	doc, err := tenant.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.APIKeys) != int(chatv1alpha1.DefaultAPIKeysPerMerchant) || len(b.Webhooks) != webhooks {
		t.Fatalf("the bundle has %d keys and %d webhooks", len(b.APIKeys), len(b.Webhooks))
	}
	if p := bundleTooLarge(len(doc)); p != nil {
		t.Errorf("the largest merchant within its limits: %s", p.message)
	}
	t.Logf("the largest merchant's bundle takes %d KiB of %d", len(doc)>>10, maxBundleBytes>>10)
}

func TestSetProxiesTrusted(t *testing.T) {
	for _, tc := range []struct {
		proxies []string
		status  metav1.ConditionStatus
		reason  string
	}{
		{nil, metav1.ConditionFalse, chatv1alpha1.ReasonNoTrustedProxies},
		{[]string{"10.244.0.0/16"}, metav1.ConditionTrue, chatv1alpha1.ReasonProxiesListed},
	} {
		rt := runtimeObj("rt")
		rt.Generation = 3
		rt.Spec.TrustedProxies = tc.proxies
		setProxiesTrusted(rt)
		c := meta.FindStatusCondition(rt.Status.Conditions, chatv1alpha1.ConditionProxiesTrusted)
		if c == nil || c.Status != tc.status || c.Reason != tc.reason || c.ObservedGeneration != 3 {
			t.Errorf("trustedProxies %v: condition %+v", tc.proxies, c)
		}
	}
}
