package controllers

import (
	"context"
	"fmt"

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

// getMerchant reads the Merchant an APIKey or Webhook in namespace belongs to; a missing one is a
// MerchantNotFound problem. One missing from the cache is looked up in api before it is reported:
// a Merchant is often created a moment before its keys and webhooks, and its event may reach the cache after
// theirs. errCacheBehind then says to wait for that event, which brings the key or webhook back.
func getMerchant(ctx context.Context, c, api client.Reader, namespace string, ref chatv1alpha1.LocalObjectReference) (*chatv1alpha1.Merchant, error) {
	var m chatv1alpha1.Merchant
	key := types.NamespacedName{Namespace: namespace, Name: ref.Name}
	err := getReferenced(ctx, c, key, &m, chatv1alpha1.ReasonMerchantNotFound, "Merchant %s does not exist", ref.Name)
	if p, _ := asProblem(err); p != nil {
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
