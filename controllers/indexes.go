package controllers

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
)

// Field indexes let a reconciler find the objects that refer to another without listing everything.
const (
	merchantPlanIndex    = "spec.planRef.name"
	merchantRuntimeIndex = "spec.runtimeRef.name"
	apiKeyMerchantIndex  = "spec.merchantRef.name"
	apiKeySecretIndex    = ".keySecretName"
	webhookMerchantIndex = "spec.merchantRef.name"
	webhookSecretIndex   = ".signingSecretName"
	merchantOwnKeyIndex  = ".ownKeySecretName"
	sourceMerchantIndex  = "spec.merchantRef.name"
)

func setupIndexes(ctx context.Context, mgr manager.Manager) error {
	idx := mgr.GetFieldIndexer()
	indexes := []struct {
		obj   client.Object
		field string
		fn    client.IndexerFunc
	}{
		{&chatv1alpha1.Merchant{}, merchantPlanIndex, func(o client.Object) []string {
			return []string{o.(*chatv1alpha1.Merchant).Spec.PlanRef.Name}
		}},
		{&chatv1alpha1.Merchant{}, merchantRuntimeIndex, func(o client.Object) []string {
			return []string{o.(*chatv1alpha1.Merchant).Spec.RuntimeRef.Name}
		}},
		{&chatv1alpha1.Merchant{}, merchantOwnKeyIndex, func(o client.Object) []string {
			if ref := o.(*chatv1alpha1.Merchant).Spec.Assistant.APIKeySecretRef; ref != nil {
				return []string{ref.Name}
			}
			return nil
		}},
		{&chatv1alpha1.APIKey{}, apiKeyMerchantIndex, func(o client.Object) []string {
			return []string{o.(*chatv1alpha1.APIKey).Spec.MerchantRef.Name}
		}},
		{&chatv1alpha1.APIKey{}, apiKeySecretIndex, func(o client.Object) []string {
			return []string{o.(*chatv1alpha1.APIKey).KeySecretRef().Name}
		}},
		{&chatv1alpha1.Webhook{}, webhookMerchantIndex, func(o client.Object) []string {
			return []string{o.(*chatv1alpha1.Webhook).Spec.MerchantRef.Name}
		}},
		{&chatv1alpha1.Webhook{}, webhookSecretIndex, func(o client.Object) []string {
			return []string{o.(*chatv1alpha1.Webhook).SigningSecretRef().Name}
		}},
		{&chatv1alpha1.KnowledgeSource{}, sourceMerchantIndex, func(o client.Object) []string {
			return []string{o.(*chatv1alpha1.KnowledgeSource).Spec.MerchantRef.Name}
		}},
		{&corev1.Secret{}, bundleKeyHashIndex, bundleKeyHashes},
		{&corev1.Secret{}, bundleMerchantIDIndex, bundleMerchantID},
	}
	for _, i := range indexes {
		if err := idx.IndexField(ctx, i.obj, i.field, i.fn); err != nil {
			return err
		}
	}
	return nil
}
