package controllers

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
// MerchantNotFound problem.
func getMerchant(ctx context.Context, c client.Reader, namespace string, ref chatv1alpha1.LocalObjectReference) (*chatv1alpha1.Merchant, error) {
	var m chatv1alpha1.Merchant
	if err := getReferenced(ctx, c, types.NamespacedName{Namespace: namespace, Name: ref.Name}, &m,
		chatv1alpha1.ReasonMerchantNotFound, "Merchant %s does not exist", ref.Name); err != nil {
		return nil, err
	}
	return &m, nil
}
