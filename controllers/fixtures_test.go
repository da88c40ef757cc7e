package controllers

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
)

// The fixtures are plain objects, shared by the decision tables (no API server) and the envtest suite.

// operatorNS is the operator's namespace, where ChatRuntimes live.
const operatorNS = "parley-system"

func plan(name string, rps int32, webhooks bool) *chatv1alpha1.Plan {
	return &chatv1alpha1.Plan{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: chatv1alpha1.PlanSpec{RequestsPerSecond: rps, MonthlyConversations: 100,
			Features: chatv1alpha1.PlanFeatures{Webhooks: webhooks}},
	}
}

func runtimeObj(name string) *chatv1alpha1.ChatRuntime {
	return &chatv1alpha1.ChatRuntime{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: operatorNS},
		Spec:       chatv1alpha1.ChatRuntimeSpec{PublicURL: "https://chat.example.com"},
	}
}

func merchant(ns, name, planName, runtimeName string) *chatv1alpha1.Merchant {
	return &chatv1alpha1.Merchant{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: chatv1alpha1.MerchantSpec{
			DisplayName:    "Shop " + name,
			PlanRef:        chatv1alpha1.LocalObjectReference{Name: planName},
			RuntimeRef:     chatv1alpha1.LocalObjectReference{Name: runtimeName},
			AllowedOrigins: []string{"https://shop.example"},
		},
	}
}

func apiKey(ns, name, merchantName string, typ chatv1alpha1.APIKeyType) *chatv1alpha1.APIKey {
	return &chatv1alpha1.APIKey{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       chatv1alpha1.APIKeySpec{MerchantRef: chatv1alpha1.LocalObjectReference{Name: merchantName}, Type: typ},
	}
}

func webhook(ns, name, merchantName string) *chatv1alpha1.Webhook {
	return &chatv1alpha1.Webhook{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: chatv1alpha1.WebhookSpec{
			MerchantRef: chatv1alpha1.LocalObjectReference{Name: merchantName},
			URL:         "https://crm.example/hooks",
			Events:      []chatv1alpha1.WebhookEvent{chatv1alpha1.EventLeadCreated},
		},
	}
}
