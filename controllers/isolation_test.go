//go:build integration

package controllers

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/internal/contract"
	"github.com/parley-dev/parley/internal/render"
	"github.com/parley-dev/parley/runtime/tenant"
)

// The tests of this file play a hostile tenant with edit rights in its own namespace only.

// TestCopiedPublishableKeyIsRefused: another tenant copies a merchant's publishable key (it is on the merchant's
// public pages) into a Secret of its own and brings it as an APIKey. The operator refuses it, names neither the
// victim nor the Secret, and never publishes the hash in the intruder's bundle.
func TestCopiedPublishableKeyIsRefused(t *testing.T) {
	victim := newTenant(t, false)
	vk := apiKey(victim.ns, "web", "shop", chatv1alpha1.APIKeyPublishable)
	create(t, vk)
	waitReady(t, vk, metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)
	value, _ := keySecretValue(t, vk)
	hash := sha256Hex(value)
	waitBundle(t, victim.id, hasKeyHash(hash))

	intruder := newTenant(t, false)
	create(t, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "copied", Namespace: intruder.ns,
			Labels: map[string]string{chatv1alpha1.SecretLabel: chatv1alpha1.SecretLabelAPIKey}},
		Data: map[string][]byte{"key": []byte(value)},
	})
	stolen := apiKey(intruder.ns, "stolen", "shop", chatv1alpha1.APIKeyPublishable)
	stolen.Spec.ExistingSecretRef = &chatv1alpha1.SecretKeySelector{Name: "copied", Key: "key"}
	create(t, stolen)
	waitReady(t, stolen, metav1.ConditionFalse, chatv1alpha1.ReasonKeyInUse)
	msg := meta.FindStatusCondition(stolen.Status.Conditions, chatv1alpha1.ConditionReady).Message
	for _, leak := range []string{victim.ns, victim.id, "copied", value[:8]} {
		if strings.Contains(msg, leak) {
			t.Errorf("the condition %q names %q", msg, leak)
		}
	}

	// The intruder's own key is published; the copied one is not, and the victim keeps its key.
	own := apiKey(intruder.ns, "own", "shop", chatv1alpha1.APIKeyPublishable)
	create(t, own)
	waitReady(t, own, metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)
	ownValue, _ := keySecretValue(t, own)
	waitBundle(t, intruder.id, hasKeyHash(sha256Hex(ownValue)))
	waitBundle(t, intruder.id, lacksKeyHash(hash))
	waitBundle(t, victim.id, hasKeyHash(hash))
	waitReady(t, vk, metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)
}

// TestRevocationFailsClosed: while a merchant's bundle cannot be rendered (two keys with the same value), a key the
// tenant deletes leaves the published bundle anyway, and the condition says so.
func TestRevocationFailsClosed(t *testing.T) {
	f := newTenant(t, false)
	old := apiKey(f.ns, "old", "shop", chatv1alpha1.APIKeyPublishable)
	create(t, old)
	waitReady(t, old, metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)
	value, _ := keySecretValue(t, old)
	hash := sha256Hex(value)
	waitBundle(t, f.id, hasKeyHash(hash))

	create(t, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "twice", Namespace: f.ns,
			Labels: map[string]string{chatv1alpha1.SecretLabel: chatv1alpha1.SecretLabelAPIKey}},
		Data: map[string][]byte{"key": []byte("byo-key-used-twice-0123456789abcdefghij")},
	})
	for _, name := range []string{"twice-a", "twice-b"} {
		k := apiKey(f.ns, name, "shop", chatv1alpha1.APIKeySecret)
		k.Spec.ExistingSecretRef = &chatv1alpha1.SecretKeySelector{Name: "twice", Key: "key"}
		create(t, k)
	}
	waitReady(t, f.merchant, metav1.ConditionFalse, chatv1alpha1.ReasonInvalidBundle)

	if err := k8s.Delete(ctxT(t), old); err != nil {
		t.Fatal(err)
	}
	waitBundle(t, f.id, lacksKeyHash(hash))
	waitReady(t, f.merchant, metav1.ConditionFalse, chatv1alpha1.ReasonInvalidBundle)
	msg := meta.FindStatusCondition(f.merchant.Status.Conditions, chatv1alpha1.ConditionReady).Message
	if !strings.Contains(msg, "withdrawn") {
		t.Errorf("the condition does not say revoked keys were withdrawn: %q", msg)
	}

	// A suspension by the platform meanwhile stops chat in the last published bundle too.
	labelNamespace(t, f.ns, map[string]string{chatv1alpha1.SuspendedLabel: "true"})
	waitBundle(t, f.id, bundleSuspended(true))
	eventually(t, "the condition says chat is stopped", func() error {
		if err := k8s.Get(ctxT(t), client.ObjectKeyFromObject(f.merchant), f.merchant); err != nil {
			return err
		}
		c := meta.FindStatusCondition(f.merchant.Status.Conditions, chatv1alpha1.ConditionReady)
		if c == nil || c.Reason != chatv1alpha1.ReasonInvalidBundle || !strings.Contains(c.Message, "chat is stopped") {
			return fmt.Errorf("Ready %+v", c)
		}
		return nil
	})
}

// labelNamespace sets labels on a namespace, as the platform team would; tenants cannot.
func labelNamespace(t *testing.T, ns string, labels map[string]string) {
	t.Helper()
	update(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, func(n *corev1.Namespace) {
		n.Labels = labels
	})
}

// grantedTo selects the namespaces labelled tier=value.
func grantedTo(value string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{"tier": value}}
}

// TestPlanOutsideTheGrant: a tenant names a Plan granted only to other namespaces. It gets no bundle; once the
// platform labels its namespace it does; when the grant is taken back, chat stops.
func TestPlanOutsideTheGrant(t *testing.T) {
	ns := newNamespace(t)
	rt := runtimeObj("rt-" + ns)
	p := plan("plan-"+ns, 1000, true)
	p.Spec.AllowedNamespaces = grantedTo("enterprise-" + ns)
	m := merchant(ns, "shop", p.Name, rt.Name)
	create(t, rt, p, m)
	waitReady(t, m, metav1.ConditionFalse, chatv1alpha1.ReasonPlanNotAllowed)
	if _, err := bundleSecret(t, ns+"-shop"); err == nil {
		t.Fatal("a bundle was published on a plan outside the grant")
	}

	labelNamespace(t, ns, map[string]string{"tier": "enterprise-" + ns})
	waitReady(t, m, metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)
	waitBundle(t, m.Status.MerchantID, func(b *tenant.Bundle) error {
		if b.Suspended || b.Plan.Name != p.Name {
			return fmt.Errorf("bundle plan %q suspended %v", b.Plan.Name, b.Suspended)
		}
		return nil
	})

	labelNamespace(t, ns, nil)
	waitReady(t, m, metav1.ConditionFalse, chatv1alpha1.ReasonPlanNotAllowed)
	waitBundle(t, m.Status.MerchantID, func(b *tenant.Bundle) error {
		if !b.Suspended {
			return errors.New("chat goes on after the grant was taken back")
		}
		return nil
	})
}

// TestRuntimeOutsideTheGrant: a tenant places its merchant on a ChatRuntime granted only to other namespaces.
func TestRuntimeOutsideTheGrant(t *testing.T) {
	ns := newNamespace(t)
	rt := runtimeObj("rt-" + ns)
	rt.Spec.AllowedNamespaces = grantedTo("dedicated-" + ns)
	p := plan("plan-"+ns, 10, false)
	m := merchant(ns, "shop", p.Name, rt.Name)
	create(t, rt, p, m)
	waitReady(t, m, metav1.ConditionFalse, chatv1alpha1.ReasonRuntimeNotAllowed)
	if _, err := bundleSecret(t, ns+"-shop"); err == nil {
		t.Fatal("a bundle was published on a runtime outside the grant")
	}
	labelNamespace(t, ns, map[string]string{"tier": "dedicated-" + ns})
	waitReady(t, m, metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)
}

// TestPlatformSuspensionCannotBeCleared: the platform suspends a tenant's namespace; clearing spec.suspended
// from the tenant's namespace does not resume chat.
func TestPlatformSuspensionCannotBeCleared(t *testing.T) {
	f := newTenant(t, false)
	labelNamespace(t, f.ns, map[string]string{chatv1alpha1.SuspendedLabel: "true"})
	waitReady(t, f.merchant, metav1.ConditionTrue, chatv1alpha1.ReasonSuspended)
	waitBundle(t, f.id, bundleSuspended(true))

	update(t, f.merchant, func(m *chatv1alpha1.Merchant) {
		m.Spec.Suspended = false
		m.Spec.DisplayName = "Resumed by the tenant"
	})
	waitBundle(t, f.id, func(b *tenant.Bundle) error {
		if b.DisplayName != "Resumed by the tenant" || !b.Suspended {
			return fmt.Errorf("display name %q suspended %v", b.DisplayName, b.Suspended)
		}
		return nil
	})
	waitReady(t, f.merchant, metav1.ConditionTrue, chatv1alpha1.ReasonSuspended)

	labelNamespace(t, f.ns, nil)
	waitReady(t, f.merchant, metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)
	waitBundle(t, f.id, bundleSuspended(false))
}

func bundleSuspended(want bool) func(*tenant.Bundle) error {
	return func(b *tenant.Bundle) error {
		if b.Suspended != want {
			return fmt.Errorf("suspended = %v, want %v", b.Suspended, want)
		}
		return nil
	}
}

// TestForeignOwnerIsLeftOut: a tenant names other people as owners of its merchant, by email and by subject. In
// a namespace the platform granted owner email domains and subjects, the foreign owners are left out of the
// bundle, the merchant serves its other owners, and the condition says who was left out.
func TestForeignOwnerIsLeftOut(t *testing.T) {
	f := newTenant(t, false)
	update(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: f.ns}}, func(n *corev1.Namespace) {
		n.Annotations = map[string]string{chatv1alpha1.OwnerEmailDomainsAnnotation: "alpha.example, Shop.Alpha.example",
			chatv1alpha1.OwnerSubjectsAnnotation: "user-1"}
	})
	update(t, f.merchant, func(m *chatv1alpha1.Merchant) {
		m.Spec.Owners = []chatv1alpha1.Owner{
			{Email: "support@alpha.example"}, {Email: "Ops@SHOP.alpha.example"},
			{Email: "victim@beta.example"}, {Email: "sneaky@alpha.example.beta.example"}, {Subject: "user-1"},
			{Subject: "platform-admin"},
		}
	})
	waitReady(t, f.merchant, metav1.ConditionTrue, chatv1alpha1.ReasonOwnersNotAllowed)
	msg := meta.FindStatusCondition(f.merchant.Status.Conditions, chatv1alpha1.ConditionReady).Message
	if !strings.Contains(msg, "victim@beta.example") || !strings.Contains(msg, "subject platform-admin") ||
		strings.Contains(msg, "support@alpha.example") || strings.Contains(msg, "user-1") {
		t.Errorf("the condition does not name exactly the owners left out: %q", msg)
	}
	waitBundle(t, f.id, func(b *tenant.Bundle) error {
		want := []tenant.Owner{{Email: "support@alpha.example"}, {Email: "Ops@SHOP.alpha.example"}, {Subject: "user-1"}}
		if fmt.Sprint(b.Owners) != fmt.Sprint(want) {
			return fmt.Errorf("owners %v, want %v", b.Owners, want)
		}
		return nil
	})
}

// TestDeletedMerchantIDCannotBeReclaimed: a merchant is deleted; its data stays in the runtime's store. Another
// namespace claims its merchant ID explicitly to read that data: refused, without naming the old merchant. The
// deleted merchant's bundle is no longer served. The same Merchant, created again, gets its ID back.
func TestDeletedMerchantIDCannotBeReclaimed(t *testing.T) {
	victim := newTenant(t, false)
	create(t, apiKey(victim.ns, "web", "shop", chatv1alpha1.APIKeyPublishable))
	waitBundle(t, victim.id, func(b *tenant.Bundle) error {
		if len(b.APIKeys) != 1 {
			return errors.New("waiting for the key")
		}
		return nil
	})
	if err := k8s.Delete(ctxT(t), victim.merchant); err != nil {
		t.Fatal(err)
	}
	eventually(t, "bundle retired", func() error {
		s, err := bundleSecret(t, victim.id)
		if err != nil {
			return err
		}
		if s.Labels[chatv1alpha1.TenantLabel] != contract.TenantRetired || len(s.Data) != 0 {
			return fmt.Errorf("the deleted merchant's bundle is still served: labels %v, %d data keys", s.Labels, len(s.Data))
		}
		// The runtime that holds the merchant's data still selects the retired bundle, to erase that data.
		if s.Labels[chatv1alpha1.RuntimeLabel] != victim.runtime.Name {
			return fmt.Errorf("the retired bundle names runtime %q, want %q", s.Labels[chatv1alpha1.RuntimeLabel], victim.runtime.Name)
		}
		return nil
	})

	claimNS := newNamespace(t)
	claimant := merchant(claimNS, "claim", victim.plan.Name, victim.runtime.Name)
	claimant.Spec.MerchantID = victim.id
	create(t, claimant)
	waitReady(t, claimant, metav1.ConditionFalse, chatv1alpha1.ReasonMerchantIDConflict)
	msg := meta.FindStatusCondition(claimant.Status.Conditions, chatv1alpha1.ConditionReady).Message
	if strings.Contains(msg, victim.ns+"/shop") {
		t.Errorf("the condition names the old Merchant: %q", msg)
	}

	again := merchant(victim.ns, "shop", victim.plan.Name, victim.runtime.Name)
	create(t, again)
	waitReady(t, again, metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)
	waitBundle(t, victim.id, func(b *tenant.Bundle) error {
		if b.Source != victim.ns+"/shop" || len(b.APIKeys) != 1 {
			return fmt.Errorf("bundle source %q with %d keys", b.Source, len(b.APIKeys))
		}
		return nil
	})
	if s, err := bundleSecret(t, victim.id); err != nil || s.Labels[chatv1alpha1.TenantLabel] != "true" {
		t.Errorf("the bundle is not served again: %v", err)
	}
}

// TestWebhookToPrivateTargetIsReported: a tenant points a Webhook at an in-cluster service. The runtime refuses
// every delivery to it, so the Webhook is not Ready, until the platform allows private targets on the runtime.
func TestWebhookToPrivateTargetIsReported(t *testing.T) {
	f := newTenant(t, true)
	hook := webhook(f.ns, "internal", "shop")
	hook.Spec.URL = "http://billing.platform.svc/admin"
	create(t, hook)
	waitReady(t, hook, metav1.ConditionFalse, chatv1alpha1.ReasonTargetNotAllowed)

	update(t, f.runtime, func(rt *chatv1alpha1.ChatRuntime) { rt.Spec.Webhooks.AllowPrivateAddresses = true })
	waitReady(t, hook, metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)
}

// TestForgedBundleIsIgnored: a tenant labels a Secret of its own namespace as a tenant bundle, with another
// merchant's ID and source, or with an ID it wants to keep from others, marked retired. Bundles live only in the
// target namespaces of the operator's ChatRuntimes, where tenants cannot write: the forged Secrets decide
// nothing, the victim's Merchant goes on reconciling, and the operator leaves the forged Secrets as they are.
func TestForgedBundleIsIgnored(t *testing.T) {
	victim := newTenant(t, false)
	attacker := newNamespace(t)
	// A ChatRuntime of the tenant's own, whose target namespace would be its own, makes no bundle namespace: only
	// the operator's namespace holds ChatRuntimes.
	own := runtimeObj("rt-" + attacker)
	own.Namespace = attacker
	create(t, own)
	forged := func(name, id, source string, retired bool) *corev1.Secret {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: attacker,
			Labels:      map[string]string{chatv1alpha1.SecretLabel: chatv1alpha1.SecretLabelTenant, chatv1alpha1.MerchantIDLabel: id},
			Annotations: map[string]string{render.SourceAnnotation: source}}}
		if retired {
			s.Annotations[render.RetiredAnnotation] = "2026-01-01T00:00:00Z"
		}
		create(t, s)
		return s
	}
	jam := forged("jam", victim.id, victim.ns+"/shop", false)
	squatID := "squat-" + attacker
	forged("squat", squatID, "elsewhere/other", true)

	update(t, victim.merchant, func(m *chatv1alpha1.Merchant) { m.Spec.DisplayName = "Renamed shop" })
	waitReady(t, victim.merchant, metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)
	var after corev1.Secret
	if err := k8s.Get(ctxT(t), client.ObjectKeyFromObject(jam), &after); err != nil {
		t.Fatal(err)
	}
	if _, retired := after.Annotations[render.RetiredAnnotation]; retired || after.ResourceVersion != jam.ResourceVersion {
		t.Errorf("the operator wrote the tenant's own Secret: annotations %v", after.Annotations)
	}

	claimNS := newNamespace(t)
	claimant := merchant(claimNS, "shop", victim.plan.Name, victim.runtime.Name)
	claimant.Spec.MerchantID = squatID
	create(t, claimant)
	waitReady(t, claimant, metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)
}

// TestRevokedKeyStaysItsMerchants: a merchant deletes an APIKey to revoke it, or is deleted with its keys, while
// pages and caches still carry the publishable key. Another tenant bringing that value as its own key is refused
// (KeyInUse), as it is while the key is in use: otherwise the old pages' visitors would chat with its merchant.
func TestRevokedKeyStaysItsMerchants(t *testing.T) {
	victim := newTenant(t, false)
	revoked := apiKey(victim.ns, "old", "shop", chatv1alpha1.APIKeyPublishable)
	kept := apiKey(victim.ns, "web", "shop", chatv1alpha1.APIKeyPublishable)
	create(t, revoked, kept)
	waitReady(t, revoked, metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)
	waitReady(t, kept, metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)
	revokedValue, _ := keySecretValue(t, revoked)
	keptValue, _ := keySecretValue(t, kept)
	waitBundle(t, victim.id, hasKeyHash(sha256Hex(keptValue)))
	if err := k8s.Delete(ctxT(t), revoked); err != nil {
		t.Fatal(err)
	}
	waitBundle(t, victim.id, lacksKeyHash(sha256Hex(revokedValue)))

	intruder := newTenant(t, false)
	bring := func(name, value string) *chatv1alpha1.APIKey {
		t.Helper()
		create(t, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: intruder.ns,
				Labels: map[string]string{chatv1alpha1.SecretLabel: chatv1alpha1.SecretLabelAPIKey}},
			Data: map[string][]byte{"key": []byte(value)},
		})
		k := apiKey(intruder.ns, name, "shop", chatv1alpha1.APIKeyPublishable)
		k.Spec.ExistingSecretRef = &chatv1alpha1.SecretKeySelector{Name: name, Key: "key"}
		create(t, k)
		return k
	}
	waitReady(t, bring("revoked", revokedValue), metav1.ConditionFalse, chatv1alpha1.ReasonKeyInUse)

	deleteMerchant(t, victim)
	waitReady(t, bring("orphaned", keptValue), metav1.ConditionFalse, chatv1alpha1.ReasonKeyInUse)
	waitBundle(t, intruder.id, lacksKeyHash(sha256Hex(keptValue)))
}
