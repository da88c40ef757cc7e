package v1alpha1

import "github.com/parley-dev/parley/internal/contract"

// Labels and keys that form the contract between the operator, the Secrets it reads and the runtime.
const (
	// SecretLabel marks the Secrets the operator caches and watches; its value says what the Secret holds.
	// Bring-your-own Secrets (existingSecretRef, signingSecretRef) must carry it too, so that a cluster with many
	// Secrets does not cost the operator memory.
	SecretLabel = "chat.parley.dev/secret"
	// SecretLabelAPIKey is the SecretLabel value of a Secret holding an API key.
	SecretLabelAPIKey = "api-key"
	// SecretLabelSigningSecret is the SecretLabel value of a Secret holding a webhook signing secret.
	SecretLabelSigningSecret = "signing-secret"
	// SecretLabelProviderKey is the SecretLabel value of a Secret holding a merchant's own model provider key.
	SecretLabelProviderKey = "provider-key"
	// SecretLabelTenant is the SecretLabel value of a tenant bundle.
	SecretLabelTenant = "tenant"

	// TenantLabel marks a tenant bundle Secret for the runtime's informer: "true" when served, "retired" when
	// its Merchant was deleted.
	TenantLabel = contract.LabelTenant
	// RuntimeLabel names the ChatRuntime a tenant bundle belongs to.
	RuntimeLabel = contract.LabelRuntime
	// MerchantIDLabel carries the merchant ID on a tenant bundle.
	MerchantIDLabel = contract.LabelMerchantID
	// SuspendedLabel, set to "true" on a namespace by the platform team, suspends every Merchant in it whatever
	// their spec.suspended says: chat is refused with 403 and everything else is kept.
	SuspendedLabel = "chat.parley.dev/suspended"
	// OwnerEmailDomainsAnnotation, set on a namespace by the platform team, lists (comma-separated) the email
	// domains its Merchants may name as owners; owners with other emails are left out of their bundles. With it
	// or OwnerSubjectsAnnotation, owners are restricted to what the two grant; without either, any owner may be
	// named.
	OwnerEmailDomainsAnnotation = "chat.parley.dev/owner-email-domains"
	// OwnerSubjectsAnnotation, set on a namespace by the platform team, lists (comma-separated) the subjects
	// (`sub` claims) its Merchants may name as owners; other subject owners are left out of their bundles once
	// either owner annotation is set.
	OwnerSubjectsAnnotation = "chat.parley.dev/owner-subjects"

	// DefaultAPIKeySecretKey is the data key of an API key in its Secret.
	DefaultAPIKeySecretKey = "apiKey"
	// DefaultRedisPasswordKey is the data key of the Redis password in the Secret of
	// rateLimiter.redis.passwordSecretRef.
	DefaultRedisPasswordKey = "password"
	// DefaultOpenAIAPIKeyKey is the data key of the provider's key in the Secret of
	// assistant.openai.apiKeySecretRef.
	DefaultOpenAIAPIKeyKey = "apiKey"
	// DefaultSessionKeyKey is the data key of the dashboard's session key in the Secret of
	// oidc.sessionKeySecretRef.
	DefaultSessionKeyKey = "sessionKey"
	// DefaultSigningSecretKey is the data key of a webhook signing secret in its Secret.
	DefaultSigningSecretKey = "signingSecret"
	// PreviousSigningSecretKey is the optional data key of the signing secret being rotated out; while it is set,
	// deliveries carry a signature with each secret.
	PreviousSigningSecretKey = "previousSigningSecret"
)

// LocalObjectReference names an object in the same namespace.
type LocalObjectReference struct {
	// Name of the referenced object.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// SecretKeySelector selects a key of a Secret in the same namespace.
type SecretKeySelector struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Key within the Secret's data.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	Key string `json:"key,omitempty"`
}

// KeyOr returns the selector's key, or def when none is set.
func (s SecretKeySelector) KeyOr(def string) string {
	if s.Key == "" {
		return def
	}
	return s.Key
}
