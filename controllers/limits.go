package controllers

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
)

// pastLimit decides whether o is past a limit of n objects among its peers (o may be one of them, peers are of its kind and namespace): whether n or
// more peers not being deleted are older, by creation time and then by name. The oldest are served, so that a
// tenant adding one more object never takes service away from one that already has it.
func pastLimit(o metav1.Object, peers []metav1.Object, n int32) bool {
	var older int32
	for _, p := range peers {
		if p.GetName() == o.GetName() || p.GetDeletionTimestamp() != nil {
			continue
		}
		if olderThan(p, o) {
			older++
		}
	}
	return older >= n
}

// olderThan orders objects by creation time, then name: a total order, as names are unique in a namespace.
func olderThan(a, b metav1.Object) bool {
	ta, tb := a.GetCreationTimestamp(), b.GetCreationTimestamp()
	if !ta.Equal(&tb) {
		return ta.Before(&tb)
	}
	return strings.Compare(a.GetName(), b.GetName()) < 0
}

// tenantLimits are the limits of the ChatRuntime a Merchant names; the defaults while it does not exist, when
// nothing is served anyway.
func tenantLimits(ctx context.Context, c client.Reader, operatorNS string, m *chatv1alpha1.Merchant) (chatv1alpha1.TenantLimits, error) {
	var rt chatv1alpha1.ChatRuntime
	err := c.Get(ctx, types.NamespacedName{Namespace: operatorNS, Name: m.Spec.RuntimeRef.Name}, &rt)
	if apierrors.IsNotFound(err) {
		return chatv1alpha1.TenantLimits{}, nil
	} else if err != nil {
		return chatv1alpha1.TenantLimits{}, fmt.Errorf("reading ChatRuntime %s: %w", m.Spec.RuntimeRef.Name, err)
	}
	return rt.Spec.TenantLimits, nil
}

// merchantPastLimit is the problem of a Merchant past its runtime's merchantsPerNamespace, among the Merchants of
// its namespace on the same runtime.
func merchantPastLimit(ctx context.Context, c client.Reader, m *chatv1alpha1.Merchant, limits chatv1alpha1.TenantLimits) error {
	var list chatv1alpha1.MerchantList
	if err := c.List(ctx, &list, client.InNamespace(m.Namespace)); err != nil {
		return fmt.Errorf("listing the Merchants of namespace %s: %w", m.Namespace, err)
	}
	peers := make([]metav1.Object, 0, len(list.Items))
	for i := range list.Items {
		if list.Items[i].Spec.RuntimeRef.Name == m.Spec.RuntimeRef.Name {
			peers = append(peers, &list.Items[i])
		}
	}
	if pastLimit(m, peers, limits.Merchants()) {
		return newProblem(chatv1alpha1.ReasonTooManyMerchants, "namespace %s has %d older Merchants on ChatRuntime %s, "+
			"as many as it serves per namespace (tenantLimits.merchantsPerNamespace): delete one, or ask the platform team",
			m.Namespace, limits.Merchants(), m.Spec.RuntimeRef.Name)
	}
	return nil
}

// keysPastLimit are the APIKeys among keys (one Merchant's) past its runtime's apiKeysPerMerchant.
func keysPastLimit(keys []chatv1alpha1.APIKey, limits chatv1alpha1.TenantLimits) map[types.UID]bool {
	peers := make([]metav1.Object, len(keys))
	for i := range keys {
		peers[i] = &keys[i]
	}
	past := map[types.UID]bool{}
	for i := range keys {
		if pastLimit(&keys[i], peers, limits.APIKeys()) {
			past[keys[i].UID] = true
		}
	}
	return past
}

// keyPastLimit is the problem of an APIKey past its Merchant's runtime's apiKeysPerMerchant.
func keyPastLimit(ctx context.Context, c client.Reader, key *chatv1alpha1.APIKey, limits chatv1alpha1.TenantLimits) error {
	var list chatv1alpha1.APIKeyList
	if err := c.List(ctx, &list, client.InNamespace(key.Namespace), client.MatchingFields{apiKeyMerchantIndex: key.Spec.MerchantRef.Name}); err != nil {
		return fmt.Errorf("listing API keys: %w", err)
	}
	peers := make([]metav1.Object, len(list.Items))
	for i := range list.Items {
		peers[i] = &list.Items[i]
	}
	if pastLimit(key, peers, limits.APIKeys()) {
		return newProblem(chatv1alpha1.ReasonTooManyAPIKeys, "Merchant %s has %d older APIKeys, as many as its runtime "+
			"publishes per merchant (tenantLimits.apiKeysPerMerchant): delete one, or ask the platform team",
			key.Spec.MerchantRef.Name, limits.APIKeys())
	}
	return nil
}
