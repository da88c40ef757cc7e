package controllers

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
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
}

func newOwnSecrets(now func() time.Time) *ownSecrets {
	return &ownSecrets{now: now, created: map[types.NamespacedName]ownSecret{}}
}

// add remembers the Secret key, of the given UID, as just created, and forgets those created too long ago.
func (o *ownSecrets) add(key types.NamespacedName, uid types.UID) {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := o.now()
	for k, s := range o.created {
		if now.Sub(s.at) >= ownSecretTTL {
			delete(o.created, k)
		}
	}
	o.created[key] = ownSecret{uid: uid, at: now}
}

// has says whether the reconciler created the Secret key and its cache has not shown it yet.
func (o *ownSecrets) has(key types.NamespacedName) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	s, ok := o.created[key]
	return ok && o.now().Sub(s.at) < ownSecretTTL
}

// seen forgets the Secret key once the cache shows the one created (of that UID), or its deletion.
func (o *ownSecrets) seen(key types.NamespacedName, uid types.UID) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if s, ok := o.created[key]; ok && s.uid == uid {
		delete(o.created, key)
	}
}

// forget returns an event handler for Secrets that enqueues nothing and forgets a created Secret as soon as the
// cache shows it: from then on the cache answers for it.
func (o *ownSecrets) forget() handler.EventHandler {
	type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]
	seen := func(obj client.Object) { o.seen(client.ObjectKeyFromObject(obj), obj.GetUID()) }
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, _ queue) { seen(e.Object) },
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, _ queue) { seen(e.ObjectNew) },
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, _ queue) { seen(e.Object) },
	}
}
