package controllers

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
)

// getReferenced reads an object another one refers to. A missing one is a problem with the given reason and
// message, reported and waited for rather than retried; any other error is returned to retry.
func getReferenced(ctx context.Context, c client.Reader, key types.NamespacedName, obj client.Object,
	reason, format string, args ...any) error {
	err := c.Get(ctx, key, obj)
	switch {
	case apierrors.IsNotFound(err):
		return newProblem(reason, format, args...)
	case err != nil:
		return fmt.Errorf("reading %T %s: %w", obj, key, err)
	default:
		return nil
	}
}

// newReferrerWait is how long a new APIKey or Webhook whose Merchant the cache lacks waits for the Merchant's
// event before asking the API server whether it exists. One is usually created a moment after its Merchant, whose
// event is then on its way: the Merchant informer often trails the others by a few hundred milliseconds under
// load, and a read from the API server costs it two thirds of a Secret's create (BenchmarkAPIServerCost).
const newReferrerWait = 5 * time.Second

// merchantWait is how long a referrer (an APIKey or Webhook) created at created still trusts, at now, that a
// Merchant missing from the cache is on its way: until it is newReferrerWait old, and never longer than that,
// whatever the clocks say.
func merchantWait(created, now time.Time) time.Duration {
	return max(min(created.Add(newReferrerWait).Sub(now), newReferrerWait), 0)
}

// getMerchant reads the Merchant an APIKey or Webhook in namespace belongs to; a missing one is a
// MerchantNotFound problem. One missing from the cache is looked up in api before it is reported: a Merchant is
// often created a moment before its keys and webhooks, and its event may reach the cache after theirs.
// errCacheBehind then says to wait for that event, which brings the key or webhook back. A nil api says the
// referrer is new (merchantWait), and a Merchant missing from the cache is waited for without asking.
func getMerchant(ctx context.Context, c, api client.Reader, namespace string, ref chatv1alpha1.LocalObjectReference) (*chatv1alpha1.Merchant, error) {
	var m chatv1alpha1.Merchant
	key := types.NamespacedName{Namespace: namespace, Name: ref.Name}
	err := getReferenced(ctx, c, key, &m, chatv1alpha1.ReasonMerchantNotFound, "Merchant %s does not exist", ref.Name)
	if p, _ := asProblem(err); p != nil {
		if api == nil {
			return nil, errCacheBehind
		}
		meta := &metav1.PartialObjectMetadata{}
		meta.SetGroupVersionKind(chatv1alpha1.GroupVersion.WithKind("Merchant"))
		switch apiErr := api.Get(ctx, key, meta); {
		case apiErr == nil:
			return nil, errCacheBehind
		case !apierrors.IsNotFound(apiErr):
			return nil, fmt.Errorf("reading Merchant %s: %w", key, apiErr)
		}
	}
	if err != nil {
		return nil, err
	}
	return &m, nil
}

// merchantOfReferrer reads the Merchant of an APIKey or Webhook created at created (getMerchant), asking the API
// server about one missing from the cache only once the referrer is no longer new (merchantWait). retry is how
// soon to look again when the Merchant is waited for (errCacheBehind): 0 when its event alone brings the referrer
// back.
func merchantOfReferrer(ctx context.Context, c, api client.Reader, namespace string, ref chatv1alpha1.LocalObjectReference,
	created, now time.Time) (m *chatv1alpha1.Merchant, retry time.Duration, err error) {
	retry = merchantWait(created, now)
	if retry > 0 {
		api = nil
	}
	m, err = getMerchant(ctx, c, api, namespace, ref)
	return m, retry, err
}
