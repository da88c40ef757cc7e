package controllers

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
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
}
