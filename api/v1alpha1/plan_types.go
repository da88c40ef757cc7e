package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PlanSpec sets the limits and features of the merchants on a plan.
// +kubebuilder:validation:XValidation:rule="!has(self.burst) || self.burst >= self.requestsPerSecond",message="burst must be at least requestsPerSecond"
type PlanSpec struct {
	// DisplayName is the plan's name as merchants see it, for example "Starter".
	// +optional
	// +kubebuilder:validation:MaxLength=63
	DisplayName string `json:"displayName,omitempty"`

	// RequestsPerSecond is the sustained API request rate allowed per merchant, across all its keys and
	// runtime replicas.
	// +optional
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	RequestsPerSecond int32 `json:"requestsPerSecond,omitempty"`

	// Burst is how many requests a merchant may make at once above the sustained rate. Defaults to
	// requestsPerSecond.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000
	Burst *int32 `json:"burst,omitempty"`

	// MonthlyConversations is the number of new conversations a merchant may start per calendar month (UTC).
	// Past it, new conversations are refused and running ones go on. 0 means no ceiling.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MonthlyConversations int32 `json:"monthlyConversations,omitempty"`

	// KnowledgeItems is the largest number of knowledge base items a merchant may keep. 0 means no ceiling.
	// +optional
	// +kubebuilder:validation:Minimum=0
	KnowledgeItems int32 `json:"knowledgeItems,omitempty"`

	// KnowledgeCharacters is the largest number of characters (titles, contents and listed questions) a merchant's
	// knowledge items may hold together; it bounds the memory of the merchant's retrieval index in the shared
	// runtime. 0 means no ceiling.
	// +optional
	// +kubebuilder:default=2000000
	// +kubebuilder:validation:Minimum=0
	KnowledgeCharacters int32 `json:"knowledgeCharacters,omitempty"`

	// ImportItems is the most items one knowledge import (a JSON or CSV file uploaded on the dashboard) may hold.
	// A file with more is refused as soon as its next item is read, and nothing of it is imported; it bounds the
	// work and memory one upload takes in the shared runtime. knowledgeItems still bounds what is kept.
	// +optional
	// +kubebuilder:default=1000
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	ImportItems int32 `json:"importItems,omitempty"`

	// ImportBytes is the largest knowledge import file, in bytes. A larger file is refused unread past this
	// size, and nothing of it is imported. At most 4 MiB, what the dashboard reads of an upload.
	// +optional
	// +kubebuilder:default=4194304
	// +kubebuilder:validation:Minimum=1024
	// +kubebuilder:validation:Maximum=4194304
	ImportBytes int32 `json:"importBytes,omitempty"`

	// ConversationsPerAddressPerHour is how many new conversations one client address may start in an hour
	// with a publishable key (the widget); past it, 429 conversation_rate_limited. As many contact forms, counted
	// apart, may be sent from it in an hour; past that, 429 rate_limited. Secret keys are exempt.
	// +optional
	// +kubebuilder:default=20
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	ConversationsPerAddressPerHour int32 `json:"conversationsPerAddressPerHour,omitempty"`

	// ConversationsPerVisitorPerHour is how many new conversations one visitor (the widget's visitor ID) may
	// start in an hour with a publishable key; past it, 429 conversation_rate_limited. As many contact forms,
	// counted apart, may the visitor send in an hour; past that, 429 rate_limited.
	// +optional
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	ConversationsPerVisitorPerHour int32 `json:"conversationsPerVisitorPerHour,omitempty"`
	// MonthlyTokens is the number of model tokens (prompt and completion) a merchant's answers may take per
	// calendar month (UTC) with the openai assistant. Past it, answers come from the offline assistant. 0 means no
	// ceiling.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MonthlyTokens int64 `json:"monthlyTokens,omitempty"`

	// TurnsPerConversation is how many of a visitor's messages one conversation answers with a publishable key (the
	// widget); past it, 429 conversation_limit_reached, and the visitor goes on in a new conversation (which
	// conversationsPerVisitorPerHour and conversationsPerAddressPerHour bound). Secret keys are exempt from this
	// and the three bounds below: the merchant's own server spends its monthlyTokens as it sees fit.
	// +optional
	// +kubebuilder:default=50
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=500
	TurnsPerConversation int32 `json:"turnsPerConversation,omitempty"`

	// TokensPerConversation is how many model tokens (prompt and completion) the answers of one conversation may
	// take with a publishable key; past it, 429 conversation_limit_reached. It bounds what one visitor holding the page's public key can
	// spend in one conversation.
	// +optional
	// +kubebuilder:default=100000
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000000000
	TokensPerConversation int64 `json:"tokensPerConversation,omitempty"`

	// TurnsPerVisitorPerDay is how many messages one visitor (the widget's visitor ID) may have answered in the
	// conversations it started in the last 24 hours; past it, 429 visitor_limit_reached.
	// +optional
	// +kubebuilder:default=200
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000
	TurnsPerVisitorPerDay int32 `json:"turnsPerVisitorPerDay,omitempty"`

	// TokensPerVisitorPerDay is how many model tokens the answers of one visitor's conversations started in the
	// last 24 hours may take; past it, 429 visitor_limit_reached.
	// +optional
	// +kubebuilder:default=400000
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000000000
	TokensPerVisitorPerDay int64 `json:"tokensPerVisitorPerDay,omitempty"`

	// KnowledgeSources is how many knowledge sources (websites whose pages become knowledge items and are kept in
	// sync) a merchant may keep; past it, 403 knowledge_limit_reached. What sources make counts against
	// knowledgeItems and knowledgeCharacters.
	// +optional
	// +kubebuilder:default=5
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	KnowledgeSources int32 `json:"knowledgeSources,omitempty"`

	// PagesPerSource is the most pages one sync of a knowledge source reads; it bounds the requests, time and
	// memory one crawl takes in the shared runtime, and a merchant's source may ask for fewer.
	// +optional
	// +kubebuilder:default=500
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	PagesPerSource int32 `json:"pagesPerSource,omitempty"`

	// MinSourceSyncInterval is the shortest time between the scheduled syncs of a knowledge source a merchant may
	// ask for, so that the sites read and the runtime are not crawled more often than the plan pays for. A sync
	// asked for by hand is not bound by it.
	// +optional
	// +kubebuilder:default="1h"
	MinSourceSyncInterval *metav1.Duration `json:"minSourceSyncInterval,omitempty"`

	// Features switches plan-gated features on.
	// +optional
	Features PlanFeatures `json:"features,omitempty"`

	// AllowedNamespaces selects, by their labels, the namespaces whose Merchants may use this plan, in the
	// manner of Gateway API's allowedRoutes. Unset or empty grants the plan to every namespace. A Merchant
	// outside the grant is Ready=False with reason PlanNotAllowed. Namespace labels are the platform team's:
	// tenants with rights in their own namespace only cannot change them.
	// +optional
	AllowedNamespaces *metav1.LabelSelector `json:"allowedNamespaces,omitempty"`

	// Retention is how long the runtime keeps the personal data of the plan's merchants, each kind as days
	// ("90d"); a Merchant may keep its own shorter. Unset kinds are kept until deleted.
	// +optional
	Retention Retention `json:"retention,omitzero"`

	// Assistant chooses the model that answers the plan's merchants, of those their ChatRuntime declares.
	// +optional
	Assistant PlanAssistantSpec `json:"assistant,omitzero"`
}

// PlanAssistantSpec chooses the model that answers a plan's merchants. A Merchant whose ChatRuntime declares no
// such provider or model is Ready=False with reason ProviderNotFound or ModelNotFound, and publishes no bundle.
// +kubebuilder:validation:XValidation:rule="!has(self.model) || has(self.provider)",message="assistant.model needs assistant.provider"
type PlanAssistantSpec struct {
	// Provider names one of the ChatRuntime's spec.assistant.providers. Unset, the runtime's default answers
	// (its spec.assistant.provider).
	// +optional
	// +kubebuilder:validation:MaxLength=40
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Provider string `json:"provider,omitempty"`

	// Model names one of the provider's models. Unset, the provider's first.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Model string `json:"model,omitempty"`

	// AllowOwnKey lets the plan's merchants send their own API key to the provider (a Merchant's
	// spec.assistant.apiKeySecretRef) instead of the platform's. A Merchant that names one on a plan without it
	// is Ready=False with reason OwnKeyNotAllowed.
	// +optional
	AllowOwnKey bool `json:"allowOwnKey,omitempty"`
}

// Retention is how long each kind of personal data is kept, as a number of days followed by "d", from 1d to
// 9999d. The runtime deletes what is older every hour, in small batches.
type Retention struct {
	// Conversations are deleted this long after their last message, with their messages and citations; their
	// leads follow their own retention.
	// +optional
	// +kubebuilder:validation:Pattern=`^[1-9][0-9]{0,3}d$`
	Conversations string `json:"conversations,omitempty"`

	// Leads are deleted this long after their last change.
	// +optional
	// +kubebuilder:validation:Pattern=`^[1-9][0-9]{0,3}d$`
	Leads string `json:"leads,omitempty"`

	// WebhookDeliveries are deleted, with their payloads and attempts, this long after their event. A payload
	// repeats a conversation or a lead, so it is never kept longer than conversations or leads.
	// +optional
	// +kubebuilder:validation:Pattern=`^[1-9][0-9]{0,3}d$`
	WebhookDeliveries string `json:"webhookDeliveries,omitempty"`
}

// PlanFeatures lists the plan-gated features.
type PlanFeatures struct {
	// APIAccess allows server-side callers to use secret API keys on the REST API. Publishable keys used by the
	// widget work on every plan.
	// +optional
	// +kubebuilder:default=true
	APIAccess *bool `json:"apiAccess,omitempty"`

	// Webhooks delivers events (new conversations, leads) to the merchant's Webhook endpoints.
	// +optional
	Webhooks bool `json:"webhooks,omitempty"`
}

// PlanStatus is the observed state of a Plan.
type PlanStatus struct {
	// ObservedGeneration is the generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Merchants is the number of merchants on this plan, in every namespace.
	// +optional
	// +kubebuilder:default=0
	Merchants int32 `json:"merchants"`

	// Conditions describe the plan's state; Ready is True once it is reconciled.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Plan is a cluster-wide set of limits and features that merchants subscribe to.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories=parley,shortName=plan
// +kubebuilder:printcolumn:name="Requests/s",type=integer,JSONPath=`.spec.requestsPerSecond`
// +kubebuilder:printcolumn:name="Conversations/mo",type=integer,JSONPath=`.spec.monthlyConversations`
// +kubebuilder:printcolumn:name="Webhooks",type=boolean,JSONPath=`.spec.features.webhooks`
// +kubebuilder:printcolumn:name="Merchants",type=integer,JSONPath=`.status.merchants`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Plan struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec holds the plan's limits and features.
	// +optional
	Spec PlanSpec `json:"spec,omitempty"`

	// Status is the observed state of the plan.
	// A new object reads as observedGeneration -1 until the operator reports, which kstatus (Flux) takes
	// for in progress rather than for current.
	// +optional
	// +kubebuilder:default={"observedGeneration":-1}
	Status PlanStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// PlanList is a list of Plans.
type PlanList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Plans.
	Items []Plan `json:"items"`
}

// EffectiveBurst returns the burst, defaulting to the sustained rate.
func (s PlanSpec) EffectiveBurst() int32 {
	if s.Burst != nil {
		return *s.Burst
	}
	return s.RequestsPerSecond
}
