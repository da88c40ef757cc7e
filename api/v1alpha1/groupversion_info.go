// Package v1alpha1 contains the API of Parley: merchants, the plans they are on, their API keys, webhooks and
// knowledge sources, and the chat runtime that serves them all.
// +kubebuilder:object:generate=true
// +groupName=chat.parley.dev
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of every Parley kind.
	GroupVersion = schema.GroupVersion{Group: "chat.parley.dev", Version: "v1alpha1"}

	// SchemeBuilder registers the Parley kinds with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the Parley kinds to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion,
		&Plan{}, &PlanList{},
		&ChatRuntime{}, &ChatRuntimeList{},
		&Merchant{}, &MerchantList{},
		&APIKey{}, &APIKeyList{},
		&Webhook{}, &WebhookList{},
		&KnowledgeSource{}, &KnowledgeSourceList{},
	)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
