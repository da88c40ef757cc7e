// Package v1alpha1 contains the API of Parley: merchants, the plans they are on, their API keys and webhooks,
// and the chat runtime that serves them all.
// +kubebuilder:object:generate=true
// +groupName=chat.parley.dev
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of every Parley kind.
	GroupVersion = schema.GroupVersion{Group: "chat.parley.dev", Version: "v1alpha1"}

	// SchemeBuilder registers the Parley kinds with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the Parley kinds to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
