package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/internal/render"
	"github.com/parley-dev/parley/runtime/tenant"
)

// bundleKeyHashIndex indexes tenant bundle Secrets by the SHA-256 hashes of the API keys they publish, so that a
// key's hash can be checked against every merchant's without reading every bundle.
const bundleKeyHashIndex = ".bundleKeyHashes"

// bundleKeyHashes is the indexer of bundleKeyHashIndex: the hashes of the keys a tenant bundle publishes and of
// those it withdrew (render.WithdrawnKeysAnnotation), which stay its merchant's; none for any other Secret.
func bundleKeyHashes(o client.Object) []string {
	s, ok := o.(*corev1.Secret)
	if !ok || s.Labels[chatv1alpha1.SecretLabel] != chatv1alpha1.SecretLabelTenant {
		return nil
	}
	return append(publishedKeyHashes(s), strings.Fields(s.Annotations[render.WithdrawnKeysAnnotation])...)
}

// publishedKeyHashes are the hashes of the keys a tenant bundle publishes; none when it does not parse.
func publishedKeyHashes(s *corev1.Secret) []string {
	b, err := tenant.Parse(s.Data[tenant.DataKey])
	if err != nil {
		return nil
	}
	return hashesOf(b.APIKeys)
}

// hashesOf are the hashes of keys.
func hashesOf(keys []tenant.APIKey) []string {
	hashes := make([]string, len(keys))
	for i, k := range keys {
		hashes[i] = k.SHA256
	}
	return hashes
}

// withdraw records in a tenant bundle's annotations, before its keys change to those of hashes now, the keys it
// stops publishing (render.WithdrawnKeys).
func withdraw(s *corev1.Secret, now []string) {
	w := render.WithdrawnKeys(s.Annotations[render.WithdrawnKeysAnnotation], publishedKeyHashes(s), now)
	if w == "" {
		delete(s.Annotations, render.WithdrawnKeysAnnotation)
		return
	}
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	s.Annotations[render.WithdrawnKeysAnnotation] = w
}

// keyHolder is a published tenant bundle that carries a given key hash.
type keyHolder struct {
	// source is the Merchant (namespace/name) the bundle was rendered from.
	source string
	// created is when the bundle was first published; name (namespace/name) breaks ties.
	created metav1.Time
	name    string
}

// keyTakenByOther decides whether a key hash, published in the bundles of holders, belongs to a Merchant other
// than source. A hash belongs to the Merchant that published it first: when no other bundle carries it, it is
// free; when only others do, it is theirs. When source's bundle carries it as well (two Merchants published it
// at once), the oldest bundle keeps it, so that both sides decide alike and exactly one of them drops it.
func keyTakenByOther(holders []keyHolder, source string) bool {
	var own *keyHolder
	for i := range holders {
		if holders[i].source == source {
			own = &holders[i]
		}
	}
	for _, h := range holders {
		switch {
		case h.source == source:
		case own == nil:
			return true
		case h.created.Before(&own.created) || (h.created.Equal(&own.created) && h.name < own.name):
			return true
		}
	}
	return false
}

// keyInUse reports as a KeyInUse problem that a key hash belongs to a Merchant other than source. The problem
// names neither the other Merchant nor any Secret: they are another tenant's business.
// Bundles of every runtime's target namespace count: a key belongs to one merchant in the whole cluster.
func keyInUse(ctx context.Context, c client.Reader, operatorNS, sha256Hex, source string) error {
	var list corev1.SecretList
	if err := c.List(ctx, &list, client.MatchingFields{bundleKeyHashIndex: sha256Hex}); err != nil {
		return fmt.Errorf("listing tenant bundles by key: %w", err)
	}
	bundles, err := inBundleNamespaces(ctx, c, operatorNS, list.Items)
	if err != nil {
		return err
	}
	holders := make([]keyHolder, 0, len(bundles))
	for _, s := range bundles {
		holders = append(holders, holderOf(&s))
	}
	if keyTakenByOther(holders, source) {
		return newProblem(chatv1alpha1.ReasonKeyInUse,
			"another merchant already uses a key with this value; generate a new key or bring another one")
	}
	return nil
}

func holderOf(s *corev1.Secret) keyHolder {
	return keyHolder{source: s.Annotations[render.SourceAnnotation], created: s.CreationTimestamp, name: s.Namespace + "/" + s.Name}
}

// merchantBundles lists the tenant bundles that carry merchant ID id, in every namespace: a Merchant's bundle is
// in its runtime's target namespace, and it may have left retired bundles in the target namespaces of runtimes
// it was on before. It reads an index (bundleMerchantIDIndex): a label selector would look at every cached
// Secret, on every Merchant's reconcile.
func merchantBundles(ctx context.Context, c client.Reader, operatorNS, id string) ([]corev1.Secret, error) {
	var list corev1.SecretList
	if err := c.List(ctx, &list, client.MatchingFields{bundleMerchantIDIndex: id}); err != nil {
		return nil, fmt.Errorf("listing tenant bundles of merchant ID %s: %w", id, err)
	}
	return inBundleNamespaces(ctx, c, operatorNS, list.Items)
}

// inBundleNamespaces keeps the secrets of the namespaces tenant bundles live in: the target namespaces of the
// ChatRuntimes of the operator's namespace (operatorNS; one elsewhere is refused as WrongNamespace), where only the
// platform and the operator write. A Secret labelled as a bundle anywhere else is
// none: any tenant can label a Secret of its own namespace so, and its merchant ID, key hashes and source would
// otherwise decide for other tenants' Merchants, and have the operator write to it. (The retired bundles of a
// ChatRuntime deleted since no longer keep their merchant IDs from being claimed.)
func inBundleNamespaces(ctx context.Context, c client.Reader, operatorNS string, secrets []corev1.Secret) ([]corev1.Secret, error) {
	if len(secrets) == 0 {
		return secrets, nil
	}
	var runtimes chatv1alpha1.ChatRuntimeList
	if err := c.List(ctx, &runtimes, client.InNamespace(operatorNS)); err != nil {
		return nil, fmt.Errorf("listing chat runtimes: %w", err)
	}
	targets := make(map[string]bool, len(runtimes.Items))
	for i := range runtimes.Items {
		targets[render.TargetNamespace(&runtimes.Items[i])] = true
	}
	return slices.DeleteFunc(secrets, func(s corev1.Secret) bool { return !targets[s.Namespace] }), nil
}

// bundleMerchantIDIndex indexes tenant bundle Secrets, served or retired, by the merchant ID they carry.
const bundleMerchantIDIndex = ".bundleMerchantID"

// bundleMerchantID is the indexer of bundleMerchantIDIndex: the merchant ID label of a tenant bundle, none for
// any other Secret.
func bundleMerchantID(o client.Object) []string {
	labels := o.GetLabels()
	if id := labels[chatv1alpha1.MerchantIDLabel]; labels[chatv1alpha1.SecretLabel] == chatv1alpha1.SecretLabelTenant && id != "" {
		return []string{id}
	}
	return nil
}

// idTaken decides whether a merchant ID, carried by bundles (of any namespace), belongs to a Merchant other than
// source, as keyTakenByOther decides for keys: the first to publish it keeps it, even after it was deleted
// (retired is then true). Each runtime's target namespace has its own bundle Secrets, so that creating one
// cannot decide alone between two Merchants of different runtimes.
func idTaken(bundles []corev1.Secret, source string) (taken, retired bool) {
	holders := make([]keyHolder, 0, len(bundles))
	for i := range bundles {
		holders = append(holders, holderOf(&bundles[i]))
		if holders[i].source != source {
			_, r := bundles[i].Annotations[render.RetiredAnnotation]
			retired = retired || r
		}
	}
	return keyTakenByOther(holders, source), retired
}
