//go:build integration

package controllers

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/runtime/tenant"
)

func TestOwnSecrets(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	o := newOwnSecrets(func() time.Time { return now })
	key := types.NamespacedName{Namespace: "t", Name: "k-key"}
	secret := func(uid types.UID) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, UID: uid}}
	}
	if o.has(key) {
		t.Error("a Secret never created is remembered")
	}
	o.add(key, "1")
	if !o.has(key) {
		t.Error("a Secret just created is not remembered")
	}
	forget := o.forget()
	forget.Create(context.Background(), event.CreateEvent{Object: secret("0")}, nil)
	if !o.has(key) {
		t.Error("the cache showing an older Secret of the same name forgot the one created")
	}
	forget.Create(context.Background(), event.CreateEvent{Object: secret("1")}, nil)
	if o.has(key) {
		t.Error("a Secret the cache shows is still remembered")
	}

	o.add(key, "2")
	forget.Delete(context.Background(), event.DeleteEvent{Object: secret("2")}, nil)
	if o.has(key) {
		t.Error("a Secret whose deletion the cache shows is still remembered")
	}

	// One whose event is never seen is forgotten after ownSecretTTL, and dropped when another is added.
	o.add(key, "3")
	now = now.Add(ownSecretTTL)
	if o.has(key) {
		t.Error("a Secret created ownSecretTTL ago is still trusted")
	}
	other := types.NamespacedName{Namespace: "t", Name: "other-key"}
	o.add(other, "4")
	if _, ok := o.created[key]; ok || len(o.created) != 1 {
		t.Errorf("stale entries are kept: %v", o.created)
	}
}

// TestForgetThenForgetsBeforeItWakes checks that a bundle's deletion is forgotten before the Merchant it wakes is
// reconciled: that reconcile must not find the bundle remembered as just created, or it would not restore it.
func TestForgetThenForgetsBeforeItWakes(t *testing.T) {
	o := newOwnSecrets(time.Now)
	bundle := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "parley-system", Name: "parley-tenant-shop", UID: "1"},
		Data: map[string][]byte{tenant.DataKey: []byte("{}")}}
	o.addBundle(bundle)
	var woken, remembered bool
	next := handler.Funcs{DeleteFunc: func(context.Context, event.DeleteEvent, workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		woken, remembered = true, o.hasBundle(bundle)
	}}
	o.forgetThen(next).Delete(context.Background(), event.DeleteEvent{Object: bundle}, nil)
	if !woken || remembered {
		t.Errorf("a deleted bundle woke its Merchant: %t, still remembered as created then: %t", woken, remembered)
	}
}

// secretRequests counts the requests about Secrets a client sends to the API server.
type secretRequests struct{ creates, gets atomic.Int32 }

func (n *secretRequests) total() int32 { return n.creates.Load() + n.gets.Load() }

// counting wraps a client of the API server, counting its Secret creates and reads.
func counting(t *testing.T, n *secretRequests) client.WithWatch {
	t.Helper()
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return interceptor.NewClient(c, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if _, ok := obj.(*corev1.Secret); ok {
				n.creates.Add(1)
			}
			return c.Create(ctx, obj, opts...)
		},
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*corev1.Secret); ok {
				n.gets.Add(1)
			}
			return c.Get(ctx, key, obj, opts...)
		},
	})
}

// TestGeneratedSecretNotCachedYet reconciles a new key's Secret as the APIKey reconciler does (provideSecret, then
// resolveKey) several times before the cache has the Secret.
func TestGeneratedSecretNotCachedYet(t *testing.T) {
	ns := newNamespace(t)
	var n secretRequests
	c := counting(t, &n)
	secrets := secretReader{cache: laggingCache(t, &corev1.Secret{}), api: c}
	own := newOwnSecrets(time.Now)
	// An APIKey the API server does not store, so that the operator under test leaves its Secret alone.
	key := &chatv1alpha1.APIKey{ObjectMeta: metav1.ObjectMeta{Name: "widget", Namespace: ns, UID: "0b0b0b0b-0000-4000-8000-000000000002"},
		Spec: chatv1alpha1.APIKeySpec{MerchantRef: chatv1alpha1.LocalObjectReference{Name: "shop"}, Type: chatv1alpha1.APIKeySecret}}
	reconcile := func() (string, error) {
		t.Helper()
		known, err := provideSecret(ctxT(t), c, secrets, own, nil, key, nil, generatedKey(key))
		if err != nil {
			return "", err
		}
		resolved, _, err := resolveKey(ctxT(t), secrets.withKnown(known), key)
		return resolved.SHA256, err
	}

	first, err := reconcile()
	if err != nil {
		t.Fatal(err)
	}
	if n.creates.Load() != 1 || n.gets.Load() != 0 {
		t.Errorf("the first reconcile: %d creates, %d reads of Secrets; want 1 create", n.creates.Load(), n.gets.Load())
	}
	again, err := reconcile()
	if err != nil {
		t.Fatal(err)
	}
	if again != first {
		t.Error("the key changed on the second reconcile")
	}
	if value, _ := keySecretValue(t, key); sha256Hex(value) != first {
		t.Error("the stored key is not the one resolved")
	}
	// It is read once: its value is not remembered, and the cache lacks it.
	if n.creates.Load() != 1 || n.total() != 2 {
		t.Errorf("the reconcile before the cache has the Secret: %d creates, %d reads of Secrets in all; "+
			"want no create and 1 read", n.creates.Load(), n.gets.Load())
	}

	// Deleted before the cache saw it: a new key is generated, as without the memory.
	value, s := keySecretValue(t, key)
	if err := k8s.Delete(ctxT(t), s); err != nil {
		t.Fatal(err)
	}
	renewed, err := reconcile()
	if err != nil {
		t.Fatalf("a Secret deleted meanwhile: %v", err)
	}
	if renewed == sha256Hex(value) || n.creates.Load() != 2 {
		t.Errorf("a Secret deleted meanwhile: %d creates in all, key renewed %v; want it generated again",
			n.creates.Load(), renewed != sha256Hex(value))
	}

	// Replaced by someone else's before the cache saw it: a conflict, not something to take.
	_, s = keySecretValue(t, key)
	if err := k8s.Delete(ctxT(t), s); err != nil {
		t.Fatal(err)
	}
	create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: ns,
		Labels: map[string]string{chatv1alpha1.SecretLabel: chatv1alpha1.SecretLabelAPIKey}},
		Data: map[string][]byte{"apiKey": []byte("someone else's")}})
	_, err = reconcile()
	if p, perr := asProblem(err); perr != nil || p == nil || p.reason != chatv1alpha1.ReasonSecretConflict {
		t.Errorf("someone else's Secret: problem %+v, error %v; want %s", p, perr, chatv1alpha1.ReasonSecretConflict)
	}
	if n.creates.Load() != 2 {
		t.Errorf("someone else's Secret: %d creates in all, want 2", n.creates.Load())
	}
}
