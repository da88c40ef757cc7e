package controllers

import (
	"context"
	"crypto/sha256"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/parley-dev/parley/runtime/tenant"
)

// ownSecretTTL is how long a created Secret is remembered at most. Its event reaches the cache within seconds
// even under load; one whose event is never seen (created and deleted while the informer relisted) must not be
// kept for good.
const ownSecretTTL = time.Minute

// ownSecrets remembers the Secrets a reconciler created until its cache shows them. A reconcile that finds one
// missing from the cache reads it from the API server instead of creating it again: under a burst of new objects
// an object is often reconciled again before its Secret's event arrives, and the create failed as AlreadyExists
// only to be followed by that read. Only the Secret's UID and creation time are kept, never its data.
type ownSecrets struct {
	mu      sync.Mutex
	now     func() time.Time
	created map[types.NamespacedName]ownSecret
}

// ownSecret is what is remembered of a Secret created by the reconciler.
type ownSecret struct {
	uid types.UID
	at  time.Time
	// digest is the SHA-256 of the data a tenant bundle was created with (addBundle), to compare with the bundle
	// a later reconcile renders; zero for other Secrets.
	digest [sha256.Size]byte
}

func newOwnSecrets(now func() time.Time) *ownSecrets {
	return &ownSecrets{now: now, created: map[types.NamespacedName]ownSecret{}}
}

// add remembers the Secret key, of the given UID, as just created, and forgets those created too long ago.
func (o *ownSecrets) add(key types.NamespacedName, uid types.UID) {
	o.put(key, ownSecret{uid: uid})
}

// addBundle remembers a tenant bundle as just created, with the digest of its data.
func (o *ownSecrets) addBundle(s *corev1.Secret) {
	o.put(client.ObjectKeyFromObject(s), ownSecret{uid: s.UID, digest: bundleDigest(s)})
}

func (o *ownSecrets) put(key types.NamespacedName, s ownSecret) {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := o.now()
	for k, c := range o.created {
		if now.Sub(c.at) >= ownSecretTTL {
			delete(o.created, k)
		}
	}
	s.at = now
	o.created[key] = s
}

// has says whether the reconciler created the Secret key and its cache has not shown it yet.
func (o *ownSecrets) has(key types.NamespacedName) bool {
	_, ok := o.get(key)
	return ok
}

// hasBundle says whether the reconciler created the tenant bundle want, with the same data, and its cache has
// not shown it yet: then there is nothing to write.
func (o *ownSecrets) hasBundle(want *corev1.Secret) bool {
	s, ok := o.get(client.ObjectKeyFromObject(want))
	return ok && s.digest == bundleDigest(want)
}

func (o *ownSecrets) get(key types.NamespacedName) (ownSecret, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	s, ok := o.created[key]
	return s, ok && o.now().Sub(s.at) < ownSecretTTL
}

// bundleDigest is the SHA-256 of a tenant bundle's document.
func bundleDigest(s *corev1.Secret) [sha256.Size]byte {
	return sha256.Sum256(s.Data[tenant.DataKey])
}

// seen forgets the Secret key once the cache shows the one created (of that UID), or its deletion.
func (o *ownSecrets) seen(key types.NamespacedName, uid types.UID) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if s, ok := o.created[key]; ok && s.uid == uid {
		delete(o.created, key)
	}
}

// forgetThen returns an event handler for Secrets that forgets a created Secret as forget does, then hands an
// update or deletion on to next. It is one handler, not two, because an informer's handlers run in no set
// order: a reconcile woken by a bundle's deletion before forget saw it would find the bundle still remembered
// as just created, write nothing, and leave it deleted.
func (o *ownSecrets) forgetThen(next handler.EventHandler) handler.EventHandler {
	type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]
	seen := func(obj client.Object) { o.seen(client.ObjectKeyFromObject(obj), obj.GetUID()) }
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, _ queue) { seen(e.Object) },
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q queue) {
			seen(e.ObjectNew)
			next.Update(ctx, e, q)
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q queue) {
			seen(e.Object)
			next.Delete(ctx, e, q)
		},
	}
}

// forget returns an event handler for Secrets that enqueues nothing and forgets a created Secret as soon as the
// cache shows it: from then on the cache answers for it.
func (o *ownSecrets) forget() handler.EventHandler { return o.forgetThen(handler.Funcs{}) }
