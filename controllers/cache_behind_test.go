//go:build integration

package controllers

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/internal/render"
	"github.com/parley-dev/parley/runtime/tenant"
)

// laggingCache is a real informer cache that holds no object of the given kinds, as a cache does that has not
// received their events yet: its selector matches nothing.
func laggingCache(t *testing.T, kinds ...client.Object) cache.Cache {
	t.Helper()
	never := cache.ByObject{Label: labels.SelectorFromSet(labels.Set{"parley.test/never": "true"})}
	byObject := map[client.Object]cache.ByObject{}
	for _, k := range kinds {
		byObject[k] = never
	}
	c, err := cache.New(cfg, cache.Options{Scheme: Scheme(), ByObject: byObject})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = c.Start(ctx) }()
	for _, k := range kinds {
		if _, err := c.GetInformer(ctxT(t), k); err != nil {
			t.Fatal(err)
		}
	}
	if !c.WaitForCacheSync(ctxT(t)) {
		t.Fatal("the lagging cache did not sync")
	}
	return c
}

func TestMerchantMissingFromCache(t *testing.T) {
	ns := newNamespace(t)
	create(t, merchant(ns, "shop", "plan-"+ns, "rt-"+ns))
	behind := laggingCache(t, &chatv1alpha1.Merchant{})
	shop, gone := chatv1alpha1.LocalObjectReference{Name: "shop"}, chatv1alpha1.LocalObjectReference{Name: "gone"}

	if _, err := getMerchant(ctxT(t), behind, k8s, ns, shop); !errors.Is(err, errCacheBehind) {
		t.Errorf("a Merchant the API server has but the cache lacks: %v, want errCacheBehind", err)
	}
	_, err := getMerchant(ctxT(t), behind, k8s, ns, gone)
	if p, perr := asProblem(err); perr != nil || p == nil || p.reason != chatv1alpha1.ReasonMerchantNotFound {
		t.Errorf("a Merchant missing everywhere: problem %+v, error %v; want %s", p, perr, chatv1alpha1.ReasonMerchantNotFound)
	}
	if m, err := getMerchant(ctxT(t), k8s, k8s, ns, shop); err != nil || m.Name != "shop" {
		t.Errorf("a cached Merchant: %v, %v", m, err)
	}

	// A new key or webhook waits for its Merchant's event without asking the API server.
	for _, ref := range []chatv1alpha1.LocalObjectReference{shop, gone} {
		if _, err := getMerchant(ctxT(t), behind, nil, ns, ref); !errors.Is(err, errCacheBehind) {
			t.Errorf("Merchant %s missing from the cache, for a new referrer: %v, want errCacheBehind", ref.Name, err)
		}
	}
	now := time.Now()
	if _, retry, err := merchantOfReferrer(ctxT(t), behind, k8s, ns, gone, now, now); !errors.Is(err, errCacheBehind) || retry != newReferrerWait {
		t.Errorf("a Merchant missing everywhere, for a new referrer: %v, retry in %s; want errCacheBehind in %s", err, retry, newReferrerWait)
	}
	_, retry, err := merchantOfReferrer(ctxT(t), behind, k8s, ns, gone, now.Add(-newReferrerWait), now)
	if p, perr := asProblem(err); perr != nil || p == nil || p.reason != chatv1alpha1.ReasonMerchantNotFound || retry != 0 {
		t.Errorf("a Merchant missing everywhere, for an old referrer: problem %+v, error %v, retry in %s; want %s",
			p, perr, retry, chatv1alpha1.ReasonMerchantNotFound)
	}
}

func TestBundleCreatedMeanwhile(t *testing.T) {
	ns := newNamespace(t)
	behind := laggingCache(t, &corev1.Secret{})
	c, err := client.New(cfg, client.Options{Scheme: Scheme(), Cache: &client.CacheOptions{Reader: behind}})
	if err != nil {
		t.Fatal(err)
	}
	r := &MerchantReconciler{Client: c, APIReader: k8s, bundles: newOwnSecrets(time.Now)}
	id := ns + "-shop"
	bundle := func(source, doc string) *corev1.Secret { return testBundle(ns, id, source, doc) }
	// This Merchant's bundle, written a moment ago: its event has not reached the cache.
	create(t, bundle(ns+"/shop", "v1"))
	stored := &corev1.Secret{}
	read := func() {
		t.Helper()
		if err := k8s.Get(ctxT(t), client.ObjectKey{Namespace: ns, Name: tenant.SecretName(id)}, stored); err != nil {
			t.Fatal(err)
		}
	}
	read()
	version := stored.ResourceVersion

	if err := r.applyBundle(ctxT(t), bundle(ns+"/shop", "v1")); err != nil {
		t.Fatalf("the same bundle again: %v", err)
	}
	if read(); stored.ResourceVersion != version {
		t.Errorf("the same bundle was written again")
	}
	if err := r.applyBundle(ctxT(t), bundle(ns+"/shop", "v2")); err != nil {
		t.Fatalf("a changed bundle: %v", err)
	}
	if read(); string(stored.Data[tenant.DataKey]) != "v2" {
		t.Errorf("the changed bundle was not written: %q", stored.Data[tenant.DataKey])
	}
	err = r.applyBundle(ctxT(t), bundle("elsewhere/shop", "v3"))
	if p, perr := asProblem(err); perr != nil || p == nil || p.reason != chatv1alpha1.ReasonMerchantIDConflict {
		t.Errorf("another Merchant's bundle of the same ID: problem %+v, error %v; want %s", p, perr, chatv1alpha1.ReasonMerchantIDConflict)
	}
	if read(); string(stored.Data[tenant.DataKey]) != "v2" {
		t.Errorf("another Merchant's bundle was overwritten: %q", stored.Data[tenant.DataKey])
	}
}

// testBundle is a tenant bundle of merchant ID id in namespace ns, of the Merchant source, holding doc.
func testBundle(ns, id, source, doc string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: tenant.SecretName(id), Namespace: ns,
			Labels:      map[string]string{chatv1alpha1.MerchantIDLabel: id},
			Annotations: map[string]string{render.SourceAnnotation: source}},
		Data: map[string][]byte{tenant.DataKey: []byte(doc)},
	}
}

// TestOwnBundleNotCachedYet: a bundle the reconciler created a moment ago, which its cache lacks, is neither
// created again nor read from the API server when the Merchant renders it unchanged; changed, it is written.
func TestOwnBundleNotCachedYet(t *testing.T) {
	ns := newNamespace(t)
	behind := laggingCache(t, &corev1.Secret{})
	var creates, reads int
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: Scheme(), Cache: &client.CacheOptions{Reader: behind}})
	if err != nil {
		t.Fatal(err)
	}
	counted := interceptor.NewClient(c, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			creates++
			return c.Create(ctx, obj, opts...)
		},
	})
	direct, err := client.NewWithWatch(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	api := interceptor.NewClient(direct, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			reads++
			return c.Get(ctx, key, obj, opts...)
		},
	})
	r := &MerchantReconciler{Client: counted, APIReader: api, bundles: newOwnSecrets(time.Now)}
	id := ns + "-shop"
	if err := r.applyBundle(ctxT(t), testBundle(ns, id, ns+"/shop", "v1")); err != nil || creates != 1 {
		t.Fatalf("the first bundle: %v, %d creates", err, creates)
	}
	if err := r.applyBundle(ctxT(t), testBundle(ns, id, ns+"/shop", "v1")); err != nil || creates != 1 || reads != 0 {
		t.Errorf("the same bundle again: %v, %d creates and %d reads, want 1 and 0", err, creates, reads)
	}
	if err := r.applyBundle(ctxT(t), testBundle(ns, id, ns+"/shop", "v2")); err != nil {
		t.Fatalf("a changed bundle: %v", err)
	}
	stored := &corev1.Secret{}
	if err := k8s.Get(ctxT(t), client.ObjectKey{Namespace: ns, Name: tenant.SecretName(id)}, stored); err != nil {
		t.Fatal(err)
	}
	if string(stored.Data[tenant.DataKey]) != "v2" {
		t.Errorf("the changed bundle was not written: %q", stored.Data[tenant.DataKey])
	}
}

// staleReader is a cache that has not received an object's latest event: it serves the copy it was given, and
// reads every other object from Reader (none when Reader is nil).
type staleReader struct {
	client.Reader
	copy client.Object
}

func (s staleReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if key == client.ObjectKeyFromObject(s.copy) && reflect.TypeOf(obj) == reflect.TypeOf(s.copy) {
		reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(s.copy.DeepCopyObject()).Elem())
		return nil
	}
	if s.Reader == nil {
		return apierrors.NewNotFound(corev1.Resource("secrets"), key.Name)
	}
	return s.Reader.Get(ctx, key, obj, opts...)
}

// TestBundleUpdatedMeanwhile: a bundle updated a moment ago, whose event the cache has not received, is not
// overwritten from the cache's older copy, and the reconcile ends without an error (errCacheBehind), which would
// log "Reconciler error" and back off: the update's event brings the Merchant back.
func TestBundleUpdatedMeanwhile(t *testing.T) {
	ns := newNamespace(t)
	id := ns + "-shop"
	old := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: tenant.SecretName(id), Namespace: ns,
			Labels:      map[string]string{chatv1alpha1.MerchantIDLabel: id},
			Annotations: map[string]string{render.SourceAnnotation: ns + "/shop"}},
		Data: map[string][]byte{tenant.DataKey: []byte("v1")},
	}
	create(t, old)
	stale := old.DeepCopy()
	updated := old.DeepCopy()
	updated.Data[tenant.DataKey] = []byte("v2")
	if err := k8s.Update(ctxT(t), updated); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: Scheme(), Cache: &client.CacheOptions{Reader: staleReader{copy: stale}}})
	if err != nil {
		t.Fatal(err)
	}
	r := &MerchantReconciler{Client: c, APIReader: k8s}
	want := old.DeepCopy()
	want.Data[tenant.DataKey] = []byte("v3")
	if err := r.applyBundle(ctxT(t), want); !errors.Is(err, errCacheBehind) {
		t.Errorf("updating from a stale copy: %v, want errCacheBehind", err)
	}
	stored := &corev1.Secret{}
	if err := k8s.Get(ctxT(t), client.ObjectKeyFromObject(old), stored); err != nil {
		t.Fatal(err)
	}
	if string(stored.Data[tenant.DataKey]) != "v2" || stored.ResourceVersion != updated.ResourceVersion {
		t.Errorf("the stored bundle changed: %q at version %s, want v2 at %s", stored.Data[tenant.DataKey],
			stored.ResourceVersion, updated.ResourceVersion)
	}
}

func TestStatusUpdateOnStaleCopy(t *testing.T) {
	ns := newNamespace(t)
	k := apiKey(ns, "widget", "shop", chatv1alpha1.APIKeyPublishable)
	create(t, k)
	stale := k.DeepCopy()
	key := func(k *chatv1alpha1.APIKey) any { return k.Status }

	// Another writer's status update moves the key on; a copy from before it cannot overwrite it.
	fresh := k.DeepCopy()
	fresh.Status.KeyID = "other"
	if err := updateStatus(ctxT(t), k8s, k, fresh, key); err != nil {
		t.Fatal(err)
	}
	before := stale.DeepCopy()
	news := putReady(&stale.Status.Conditions, ready(stale.Generation, metav1.ConditionFalse, chatv1alpha1.ReasonExpired, "expired"), quietFirstReady)
	if news == (readyNews{}) {
		t.Error("a first Ready=False announces nothing")
	}
	if err := updateStatus(ctxT(t), k8s, before, stale, key); !apierrors.IsConflict(err) {
		t.Errorf("a status update from a stale copy: %v, want a conflict", err)
	}
	var stored chatv1alpha1.APIKey
	if err := k8s.Get(ctxT(t), client.ObjectKeyFromObject(k), &stored); err != nil {
		t.Fatal(err)
	}
	if stored.Status.KeyID != "other" || len(stored.Status.Conditions) != 0 {
		t.Errorf("the stale copy's status was written: %+v", stored.Status)
	}
	// Unchanged status: no write at all, not even a conflicting one.
	if err := updateStatus(ctxT(t), k8s, stale, stale, key); err != nil {
		t.Errorf("an unchanged status: %v", err)
	}
}

// TestFinalizeFromStaleCopy: a Merchant being deleted, reconciled from a cached copy older than the stored one,
// cannot remove its finalizer (the update conflicts); the reconcile runs again soon instead of returning the
// conflict, which would log "Reconciler error" and back off, although only the cache is behind.
func TestFinalizeFromStaleCopy(t *testing.T) {
	ns := newNamespace(t)
	const hold = "parley.test/hold" // keeps the Merchant stored whatever the running operator does meanwhile
	m := merchant(ns, "shop", "plan-"+ns, "rt-"+ns)
	m.Finalizers = []string{merchantFinalizer, hold}
	create(t, m)
	if err := k8s.Delete(ctxT(t), m); err != nil {
		t.Fatal(err)
	}
	stale := &chatv1alpha1.Merchant{}
	if err := k8s.Get(ctxT(t), client.ObjectKeyFromObject(m), stale); err != nil {
		t.Fatal(err)
	}
	// The copy as the cache would hold it before the running operator's finalize, and before the change below.
	controllerutil.AddFinalizer(stale, merchantFinalizer)
	moved := stale.DeepCopy()
	moved.Labels = map[string]string{"parley.test/moved": "on"}
	if err := k8s.Patch(ctxT(t), moved, client.MergeFrom(stale)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		var got chatv1alpha1.Merchant
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(m), &got); err == nil {
			got.Finalizers = nil
			_ = k8s.Update(context.Background(), &got)
		}
	})

	c, err := client.New(cfg, client.Options{Scheme: Scheme(), Cache: &client.CacheOptions{Reader: staleReader{Reader: noLists{k8s}, copy: stale}}})
	if err != nil {
		t.Fatal(err)
	}
	metrics, err := newMerchantMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	r := &MerchantReconciler{Client: c, APIReader: k8s, Metrics: metrics, Now: time.Now, writes: newOwnWrites()}
	res, err := r.Reconcile(ctxT(t), reconcile.Request{NamespacedName: client.ObjectKeyFromObject(m)})
	if err != nil || res.RequeueAfter != cacheBehindRetry {
		t.Errorf("finalizing from a stale copy: %+v, %v; want a retry in %s and no error", res, err, cacheBehindRetry)
	}
}

// noLists is a cache that lists nothing: the Merchant of TestFinalizeFromStaleCopy has no tenant bundle, and the
// API server cannot list by the operator's own field indexes.
type noLists struct{ client.Reader }

func (noLists) List(context.Context, client.ObjectList, ...client.ListOption) error { return nil }

func TestRetryConflict(t *testing.T) {
	conflict := apierrors.NewConflict(chatv1alpha1.GroupVersion.WithResource("merchants").GroupResource(), "shop", errors.New("changed"))
	other := errors.New("the API server is down")
	for _, tc := range []struct {
		name    string
		err     error
		want    reconcile.Result
		wantErr error
	}{
		{"none", nil, reconcile.Result{}, nil},
		{"conflict", conflict, reconcile.Result{RequeueAfter: cacheBehindRetry}, nil},
		{"wrapped conflict", fmt.Errorf("adding finalizer: %w", conflict), reconcile.Result{RequeueAfter: cacheBehindRetry}, nil},
		{"another error", other, reconcile.Result{}, other},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := retryConflict(tc.err)
			if res != tc.want || !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Errorf("retryConflict(%v) = %+v, %v; want %+v, %v", tc.err, res, err, tc.want, tc.wantErr)
			}
		})
	}
}
