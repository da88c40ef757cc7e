//go:build integration

package controllers

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/runtime/tenant"
)

// A plan's provider and model reach its merchants' bundles when the runtime declares them, and hold the
// Merchant not Ready with a named reason when it does not.
func TestPlanChoosesTheModel(t *testing.T) {
	f := newTenant(t, false)
	update(t, f.plan, func(p *chatv1alpha1.Plan) { p.Spec.Assistant = chatv1alpha1.PlanAssistantSpec{Provider: "small"} })
	waitReady(t, f.merchant, metav1.ConditionFalse, chatv1alpha1.ReasonProviderNotFound)

	update(t, f.runtime, func(r *chatv1alpha1.ChatRuntime) {
		r.Spec.Assistant.Providers = []chatv1alpha1.ModelProviderSpec{{Name: "small", BaseURL: "http://ollama.ai.svc:11434/v1",
			Models: []chatv1alpha1.ProviderModelSpec{{Name: "llama3.2:1b"}, {Name: "llama3.2:3b"}}}}
	})
	waitReady(t, f.merchant, metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)
	waitBundle(t, f.id, bundleModel("small", ""))

	update(t, f.plan, func(p *chatv1alpha1.Plan) { p.Spec.Assistant.Model = "gpt-5" })
	waitReady(t, f.merchant, metav1.ConditionFalse, chatv1alpha1.ReasonModelNotFound)
	update(t, f.plan, func(p *chatv1alpha1.Plan) { p.Spec.Assistant.Model = "llama3.2:3b" })
	waitReady(t, f.merchant, metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)
	waitBundle(t, f.id, bundleModel("small", "llama3.2:3b"))
}

func bundleModel(provider, model string) func(*tenant.Bundle) error {
	return func(b *tenant.Bundle) error {
		if b.Assistant.Provider != provider || b.Assistant.Model != model {
			return fmt.Errorf("the bundle names provider %q, model %q", b.Assistant.Provider, b.Assistant.Model)
		}
		return nil
	}
}

func bundleOwnKey(key string) func(*tenant.Bundle) error {
	return func(b *tenant.Bundle) error {
		if b.Assistant.APIKey != key {
			return fmt.Errorf("the bundle's own key is set: %v", b.Assistant.APIKey != "")
		}
		return nil
	}
}

// A merchant's own provider key reaches its bundle only where its plan allows it, only from a Secret of its own
// namespace, and never its status or events.
func TestOwnProviderKey(t *testing.T) {
	const own, foreign = "sk-merchant-own-0123456789abcdef", "sk-other-tenant-0123456789abcdef"
	f := newTenant(t, false)
	other := newNamespace(t)
	labels := map[string]string{chatv1alpha1.SecretLabel: chatv1alpha1.SecretLabelProviderKey}
	// Another tenant's Secret of the same name: a Merchant's reference has no namespace, and never reaches it.
	create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "llm-key", Namespace: other, Labels: labels},
		Data: map[string][]byte{chatv1alpha1.DefaultAPIKeySecretKey: []byte(foreign)}})

	update(t, f.merchant, func(m *chatv1alpha1.Merchant) {
		m.Spec.Assistant.APIKeySecretRef = &chatv1alpha1.SecretKeySelector{Name: "llm-key"}
	})
	waitReady(t, f.merchant, metav1.ConditionFalse, chatv1alpha1.ReasonOwnKeyNotAllowed)

	update(t, f.plan, func(p *chatv1alpha1.Plan) { p.Spec.Assistant.AllowOwnKey = true })
	waitReady(t, f.merchant, metav1.ConditionFalse, chatv1alpha1.ReasonSecretNotFound)
	waitBundle(t, f.id, bundleOwnKey(""))

	create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "llm-key", Namespace: f.ns, Labels: labels},
		Data: map[string][]byte{chatv1alpha1.DefaultAPIKeySecretKey: []byte(own)}})
	waitReady(t, f.merchant, metav1.ConditionTrue, chatv1alpha1.ReasonReconciled)
	waitBundle(t, f.id, bundleOwnKey(own))

	// The plan withdrawing the permission withdraws the key.
	update(t, f.plan, func(p *chatv1alpha1.Plan) { p.Spec.Assistant.AllowOwnKey = false })
	waitReady(t, f.merchant, metav1.ConditionFalse, chatv1alpha1.ReasonOwnKeyNotAllowed)
	waitBundle(t, f.id, bundleOwnKey(""))
	assertNotExposed(t, false, own, foreign)
}
