//go:build integration

package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/internal/testutil/fakellm"
)

// The runtime started with the operator's arguments answers each merchant with the model its plan names, on
// that provider's server: two providers, two plans, each merchant's answer from its own, the platform's key or
// the merchant's own where its plan allows one.
func TestEachPlansMerchantsAreAnsweredByItsModel(t *testing.T) {
	const ownKey = "sk-merchant-own-0123456789"
	for _, p := range []*chatv1alpha1.Plan{
		{ObjectMeta: metav1.ObjectMeta{Name: "e2e-model-starter"}, Spec: chatv1alpha1.PlanSpec{RequestsPerSecond: 50, Burst: ptr.To[int32](50),
			Features:  chatv1alpha1.PlanFeatures{APIAccess: ptr.To(true)},
			Assistant: chatv1alpha1.PlanAssistantSpec{Provider: "small", Model: "small-b"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "e2e-model-enterprise"}, Spec: chatv1alpha1.PlanSpec{RequestsPerSecond: 50, Burst: ptr.To[int32](50),
			Features:  chatv1alpha1.PlanFeatures{APIAccess: ptr.To(true)},
			Assistant: chatv1alpha1.PlanAssistantSpec{Provider: "large", AllowOwnKey: true}}},
	} {
		if err := cluster.client.Create(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}
	starter, enterprise := tenant(t, "e2e-model-starter", "e2e-model-starter"), tenant(t, "e2e-model-enterprise", "e2e-model-enterprise")

	answeredBy := func(key, want string, provider *fakellm.Provider, model, auth string) {
		t.Helper()
		eventually(t, 30*time.Second, func() error {
			r := chat(t, key, "How long does shipping take?")
			if r.Status != http.StatusOK || !strings.Contains(r.Body, want) {
				return fmt.Errorf("chat answered %d: %s", r.Status, r.Body)
			}
			if got := provider.Last(t); got.Body.Model != model || got.Auth != auth {
				return fmt.Errorf("the provider was asked for model %q with %q", got.Body.Model, got.Auth)
			}
			return nil
		})
	}
	answeredBy(starter, smallAnswer, cluster.small, "small-b", "")
	answeredBy(enterprise, largeAnswer, cluster.large, "large-a", "Bearer "+largePlatformKey)

	// The enterprise merchant brings its own key, from a Secret of its namespace.
	c := cluster.client
	if err := c.Create(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "my-llm-key", Namespace: "e2e-model-enterprise",
		Labels: map[string]string{chatv1alpha1.SecretLabel: chatv1alpha1.SecretLabelProviderKey}},
		Data: map[string][]byte{chatv1alpha1.DefaultAPIKeySecretKey: []byte(ownKey)}}); err != nil {
		t.Fatal(err)
	}
	var m chatv1alpha1.Merchant
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: "e2e-model-enterprise", Name: "shop"}, &m); err != nil {
		t.Fatal(err)
	}
	before := m.DeepCopy()
	m.Spec.Assistant.APIKeySecretRef = &chatv1alpha1.SecretKeySelector{Name: "my-llm-key"}
	if err := c.Patch(t.Context(), &m, client.MergeFrom(before)); err != nil { // the operator writes its status meanwhile
		t.Fatal(err)
	}
	answeredBy(enterprise, largeAnswer, cluster.large, "large-a", "Bearer "+ownKey)
	// The starter merchant's answers stay its own model's.
	answeredBy(starter, smallAnswer, cluster.small, "small-b", "")
}
