package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/parley-dev/parley/internal/contract"
)

// WebhookEvent names an event a webhook can subscribe to.
// +kubebuilder:validation:Enum=conversation.created;lead.created;lead.updated;conversation.handoff_requested;conversation.agent_message;conversation.closed;feedback.created;privacy.erased
type WebhookEvent string

const (
	// EventConversationCreated fires when a visitor starts a conversation.
	EventConversationCreated WebhookEvent = contract.EventConversationCreated
	// EventLeadCreated fires when a visitor leaves contact details for the first time in a conversation.
	EventLeadCreated WebhookEvent = contract.EventLeadCreated
	// EventLeadUpdated fires when a visitor adds to or changes contact details already left.
	EventLeadUpdated WebhookEvent = contract.EventLeadUpdated
	// EventConversationHandoffRequested fires when a visitor asks for a person of the merchant's team, with the
	// conversation's transcript.
	EventConversationHandoffRequested WebhookEvent = contract.EventConversationHandoffRequested
	// EventConversationAgentMessage fires when the merchant's team writes in a conversation.
	EventConversationAgentMessage WebhookEvent = contract.EventConversationAgentMessage
	// EventConversationClosed fires when the merchant's team closes a conversation.
	EventConversationClosed WebhookEvent = contract.EventConversationClosed
	// EventFeedbackCreated fires when a visitor rates an answer or a conversation, or changes a rating given.
	EventFeedbackCreated WebhookEvent = contract.EventFeedbackCreated
	// EventPrivacyErased fires when a data subject's records were erased on request; it carries counts only.
	EventPrivacyErased WebhookEvent = contract.EventPrivacyErased
)

// WebhookSpec describes an endpoint that receives a merchant's events.
type WebhookSpec struct {
	// MerchantRef names the Merchant, in the same namespace, whose events are delivered. Immutable.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="merchantRef is immutable"
	MerchantRef LocalObjectReference `json:"merchantRef"`

	// URL receives the events as signed POST requests (Standard Webhooks). It must be https; http is accepted
	// only for loopback and in-cluster service hosts (*.svc, *.svc.cluster.local).
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="isURL(self) && url(self).getHostname() != ''",message="url must be an absolute URL"
	// +kubebuilder:validation:XValidation:rule="!isURL(self) || url(self).getScheme() == 'https' || (url(self).getScheme() == 'http' && (url(self).getHostname() in ['localhost', '127.0.0.1', '::1'] || url(self).getHostname().endsWith('.svc') || url(self).getHostname().endsWith('.svc.cluster.local')))",message="url must use https; http is allowed only for localhost, 127.0.0.1, ::1 and in-cluster *.svc hosts"
	URL string `json:"url"`

	// Events are the events delivered to the URL.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +listType=set
	Events []WebhookEvent `json:"events"`

	// SigningSecretRef brings your own signing secret ("whsec_" and base64 of 24 to 64 bytes). The Secret must
	// carry the label chat.parley.dev/secret=signing-secret; the key defaults to "signingSecret". To rotate, put
	// the new secret under the key and the old one under "previousSigningSecret": deliveries carry a signature
	// with each until the old one is removed. When empty a secret is generated once into "<name>-signing-secret".
	// +optional
	SigningSecretRef *SecretKeySelector `json:"signingSecretRef,omitempty"`

	// Disabled stops deliveries without deleting the webhook.
	// +optional
	Disabled bool `json:"disabled,omitempty"`

	// Description says what the endpoint is for.
	// +optional
	// +kubebuilder:validation:MaxLength=500
	Description string `json:"description,omitempty"`
}

// WebhookStatus is the observed state of a Webhook. It never holds the signing secret.
type WebhookStatus struct {
	// ObservedGeneration is the generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// SecretRef is where the signing secret is kept.
	// +optional
	SecretRef *SecretKeySelector `json:"secretRef,omitempty"`

	// Conditions describe the webhook's state; Ready is True while events are delivered to it.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Webhook delivers a merchant's events (new conversations, leads) to an HTTPS endpoint, signed per Standard
// Webhooks. It takes effect only on plans with the webhooks feature.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=parley,shortName=webhook;wh
// +kubebuilder:printcolumn:name="Merchant",type=string,JSONPath=`.spec.merchantRef.name`
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.spec.url`
// +kubebuilder:printcolumn:name="Disabled",type=boolean,JSONPath=`.spec.disabled`,priority=1
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Webhook struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec describes the endpoint.
	Spec WebhookSpec `json:"spec"`

	// Status is the observed state of the webhook.
	// A new object reads as observedGeneration -1 until the operator reports, which kstatus (Flux) takes
	// for in progress rather than for current.
	// +optional
	// +kubebuilder:default={"observedGeneration":-1}
	Status WebhookStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// WebhookList is a list of Webhooks.
type WebhookList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Webhooks.
	Items []Webhook `json:"items"`
}

// SigningSecretRef returns where the signing secret is read from: the bring-your-own Secret, or the Secret the
// operator writes.
func (w *Webhook) SigningSecretRef() SecretKeySelector {
	if ref := w.Spec.SigningSecretRef; ref != nil {
		return SecretKeySelector{Name: ref.Name, Key: ref.KeyOr(DefaultSigningSecretKey)}
	}
	return SecretKeySelector{Name: w.Name + "-signing-secret", Key: DefaultSigningSecretKey}
}
