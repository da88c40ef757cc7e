package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// APIKeyType says who may use a key.
// +kubebuilder:validation:Enum=publishable;secret
type APIKeyType string

const (
	// APIKeyPublishable keys go into web pages (the widget); they are only accepted from the merchant's
	// allowed origins.
	APIKeyPublishable APIKeyType = "publishable"
	// APIKeySecret keys are for servers; they need no origin and must never reach a browser.
	APIKeySecret APIKeyType = "secret"
)

// APIKeySpec describes one API key of a merchant.
// +kubebuilder:validation:XValidation:rule="!(has(self.secretName) && has(self.existingSecretRef))",message="secretName and existingSecretRef are mutually exclusive"
// +kubebuilder:validation:XValidation:rule="has(self.existingSecretRef) == has(oldSelf.existingSecretRef)",message="a key cannot switch between generated and existingSecretRef; create a new APIKey instead"
// +kubebuilder:validation:XValidation:rule="has(self.secretName) == has(oldSelf.secretName)",message="secretName is immutable: it cannot be added or removed either; create a new APIKey instead"
type APIKeySpec struct {
	// MerchantRef names the Merchant, in the same namespace, the key belongs to. Immutable.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="merchantRef is immutable"
	MerchantRef LocalObjectReference `json:"merchantRef"`

	// Type is publishable (for browsers, bound to the merchant's allowed origins) or secret (for servers).
	// Immutable.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="type is immutable"
	Type APIKeyType `json:"type"`

	// SecretName is the Secret the generated key is written to, once, under the key "apiKey". Defaults to
	// "<name>-apikey". Immutable.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="secretName must be a DNS subdomain"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="secretName is immutable"
	SecretName string `json:"secretName,omitempty"`

	// ExistingSecretRef brings your own key (Sealed Secrets, External Secrets) instead of generating one. The
	// Secret must carry the label chat.parley.dev/secret=api-key; the key defaults to "apiKey" and must be at
	// least 32 characters. A change of the Secret's value is picked up.
	// +optional
	ExistingSecretRef *SecretKeySelector `json:"existingSecretRef,omitempty"`

	// ExpiresAt is when the key stops working; it leaves the merchant's bundle at that time.
	// +optional
	ExpiresAt *metav1.Time `json:"expiresAt,omitempty"`

	// Description says what the key is for.
	// +optional
	// +kubebuilder:validation:MaxLength=500
	Description string `json:"description,omitempty"`
}

// APIKeyStatus is the observed state of an APIKey. It never holds the key.
type APIKeyStatus struct {
	// ObservedGeneration is the generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// KeyID identifies the key in logs and in the runtime without revealing it.
	// +optional
	KeyID string `json:"keyID,omitempty"`

	// Prefix is the key's recognisable start (for example "pk_3f9k2m7q"), to tell keys apart; it is not enough to
	// use the key.
	// +optional
	Prefix string `json:"prefix,omitempty"`

	// SecretRef is where the key is kept.
	// +optional
	SecretRef *SecretKeySelector `json:"secretRef,omitempty"`

	// Conditions describe the key's state; Ready is True while the key is usable.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// APIKey is a credential for the chat endpoint. The operator generates it once into a Secret in the merchant's
// namespace (or reads your own); only its SHA-256 hash is ever given to the runtime. Deleting the APIKey revokes
// the key.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=parley,shortName=apikey;ak
// +kubebuilder:printcolumn:name="Merchant",type=string,JSONPath=`.spec.merchantRef.name`
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.type`
// +kubebuilder:printcolumn:name="Prefix",type=string,JSONPath=`.status.prefix`
// +kubebuilder:printcolumn:name="Secret",type=string,JSONPath=`.status.secretRef.name`
// +kubebuilder:printcolumn:name="Expires",type=date,JSONPath=`.spec.expiresAt`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type APIKey struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec describes the key.
	Spec APIKeySpec `json:"spec"`

	// Status is the observed state of the key.
	// A new object reads as observedGeneration -1 until the operator reports, which kstatus (Flux) takes
	// for in progress rather than for current.
	// +optional
	// +kubebuilder:default={"observedGeneration":-1}
	Status APIKeyStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// APIKeyList is a list of APIKeys.
type APIKeyList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the APIKeys.
	Items []APIKey `json:"items"`
}

// KeySecretRef returns where the key is read from: the bring-your-own Secret, or the Secret the operator writes.
func (k *APIKey) KeySecretRef() SecretKeySelector {
	if ref := k.Spec.ExistingSecretRef; ref != nil {
		return SecretKeySelector{Name: ref.Name, Key: ref.KeyOr(DefaultAPIKeySecretKey)}
	}
	name := k.Spec.SecretName
	if name == "" {
		name = k.Name + "-apikey"
	}
	return SecretKeySelector{Name: name, Key: DefaultAPIKeySecretKey}
}
