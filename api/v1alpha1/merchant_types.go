package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WidgetPosition is the corner of the page the widget's launcher sits in.
// +kubebuilder:validation:Enum=bottom-right;bottom-left
type WidgetPosition string

// MerchantSpec describes a merchant: one tenant of the chat runtime.
// +kubebuilder:validation:XValidation:rule="has(self.merchantID) == has(oldSelf.merchantID)",message="merchantID cannot be added or removed after creation"
type MerchantSpec struct {
	// DisplayName is the merchant's name as people see it.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=200
	DisplayName string `json:"displayName"`

	// MerchantID is the merchant's public identifier (the embed's data-merchant-id). It is immutable. When empty it
	// is derived from the namespace and name, so deleting and re-creating the Merchant (as GitOps does) keeps it.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="merchantID must be a DNS label: lowercase letters, digits and '-', starting and ending with a letter or digit"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="merchantID is immutable"
	MerchantID string `json:"merchantID,omitempty"`

	// PlanRef names the cluster-scoped Plan the merchant is on.
	PlanRef LocalObjectReference `json:"planRef"`

	// RuntimeRef names the ChatRuntime, in the operator's namespace, that serves this merchant.
	// +optional
	// +kubebuilder:default={name: "default"}
	RuntimeRef LocalObjectReference `json:"runtimeRef,omitzero"`

	// AllowedOrigins are the web origins (scheme://host[:port]) a publishable key is accepted from; CORS answers
	// come from the same list. Empty means publishable keys work from no origin at all: an empty list never means
	// "any origin".
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MaxLength=300
	// +kubebuilder:validation:items:XValidation:rule="self.matches('^https?://(\\\\[[0-9a-f:.]+\\\\]|[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)(:[0-9]{1,5})?$')",message="each allowed origin must be scheme://host[:port] in lowercase, with scheme http or https and no path"
	AllowedOrigins []string `json:"allowedOrigins,omitempty"`

	// Owners are the identity-provider principals allowed on this merchant's dashboard endpoints
	// (conversations, knowledge, analytics). When the platform team has granted the namespace owners
	// (annotations chat.parley.dev/owner-email-domains and chat.parley.dev/owner-subjects), owners outside the
	// grant are left out, the others kept, and the Merchant is Ready=True with reason OwnersNotAllowed.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	Owners []Owner `json:"owners,omitempty"`

	// Widget configures how the embedded chat widget looks and greets visitors.
	// +optional
	Widget WidgetSpec `json:"widget,omitempty"`

	// Assistant configures how the chatbot answers for this merchant.
	// +optional
	Assistant MerchantAssistantSpec `json:"assistant,omitempty"`

	// Suspended keeps the merchant's data and settings but refuses chat with 403. The platform team suspends every
	// Merchant of a namespace with the namespace label chat.parley.dev/suspended=true, which this field cannot
	// override.
	// +optional
	Suspended bool `json:"suspended,omitempty"`

	// DisableSelfServiceKeys stops the merchant's owners from creating API keys in the dashboard, and refuses the
	// ones they created, so that every key is declared as an APIKey resource (in Git). Off by default.
	// +optional
	DisableSelfServiceKeys bool `json:"disableSelfServiceKeys,omitempty"`

	// Retention shortens its Plan's retention for this merchant, kind by kind: the shorter of the two applies, so
	// a merchant never keeps data longer than its plan allows.
	// +optional
	Retention Retention `json:"retention,omitzero"`
}

// Owner is one identity-provider principal, matched against a verified ID token's claims.
// +kubebuilder:validation:XValidation:rule="has(self.email) != has(self.subject)",message="an owner has exactly one of email or subject"
type Owner struct {
	// Email matches the token's `email` claim, only when `email_verified` is true.
	// +optional
	// +kubebuilder:validation:MaxLength=254
	// +kubebuilder:validation:Pattern=`^[^@\s]+@[^@\s]+$`
	Email string `json:"email,omitempty"`

	// Subject matches the token's `sub` claim.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=255
	Subject string `json:"subject,omitempty"`
}

// WidgetSpec is the look of the embedded widget.
type WidgetSpec struct {
	// Title is shown at the top of the chat panel. Defaults to the display name.
	// +optional
	// +kubebuilder:validation:MaxLength=80
	Title string `json:"title,omitempty"`

	// Greeting is the first message a visitor sees.
	// +optional
	// +kubebuilder:validation:MaxLength=500
	Greeting string `json:"greeting,omitempty"`

	// Color is the accent colour, as #rrggbb.
	// +optional
	// +kubebuilder:validation:Pattern=`^#[0-9a-fA-F]{6}$`
	Color string `json:"color,omitempty"`

	// Position is the corner the launcher sits in.
	// +optional
	Position WidgetPosition `json:"position,omitempty"`

	// Locale is the BCP 47 language tag of the site, for example "en" or "de": the language its knowledge is
	// searched in, and the widget's own texts for a visitor whose browser asks for none the widget speaks.
	// +optional
	// +kubebuilder:validation:MaxLength=35
	// +kubebuilder:validation:Pattern=`^[a-zA-Z]{2,3}(-[a-zA-Z0-9]{2,8})*$`
	Locale string `json:"locale,omitempty"`

	// FixedLocale shows the widget's own texts in Locale to every visitor. Without it, the widget speaks the first
	// of the visitor's browser languages it has texts for, and Locale only when it has none of them.
	// +optional
	FixedLocale bool `json:"fixedLocale,omitempty"`
}

// MerchantAssistantSpec is the merchant's part of the assistant's behaviour.
type MerchantAssistantSpec struct {
	// Instructions are added to the assistant's system prompt (openai provider), for example tone and scope.
	// +optional
	// +kubebuilder:validation:MaxLength=4000
	Instructions string `json:"instructions,omitempty"`

	// FallbackMessage is said when the knowledge base has no good answer; the assistant then offers to take
	// contact details.
	// +optional
	// +kubebuilder:validation:MaxLength=1000
	FallbackMessage string `json:"fallbackMessage,omitempty"`

	// APIKeySecretRef selects the merchant's own API key for the model provider its plan names, a Secret in the
	// Merchant's namespace labelled chat.parley.dev/secret; the key defaults to "apiKey". The merchant's answers
	// are then billed to it. Only where the plan allows it (spec.assistant.allowOwnKey): otherwise the Merchant
	// is Ready=False with reason OwnKeyNotAllowed. The key travels to the runtime in the tenant bundle Secret,
	// never in a status, event or log.
	// +optional
	APIKeySecretRef *SecretKeySelector `json:"apiKeySecretRef,omitempty"`
}

// MerchantStatus is the observed state of a Merchant.
type MerchantStatus struct {
	// ObservedGeneration is the generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// MerchantID is the merchant's public identifier in effect.
	// +optional
	MerchantID string `json:"merchantID,omitempty"`

	// Plan is the name of the plan in effect.
	// +optional
	Plan string `json:"plan,omitempty"`

	// APIKeys is the number of usable API keys published for the merchant.
	// +optional
	// +kubebuilder:default=0
	APIKeys int32 `json:"apiKeys"`

	// Webhooks is the number of webhook endpoints published for the merchant.
	// +optional
	// +kubebuilder:default=0
	Webhooks int32 `json:"webhooks"`

	// BundleSecret is the namespace/name of the tenant bundle Secret the runtime reads.
	// +optional
	BundleSecret string `json:"bundleSecret,omitempty"`

	// EmbedSnippet is the script element to paste into the merchant's pages; replace <API_KEY> with a
	// publishable key.
	// +optional
	EmbedSnippet string `json:"embedSnippet,omitempty"`

	// Usage is the merchant's use of its plan this month, as its ChatRuntime last reported it. The operator asks
	// each runtime periodically (its --usage-interval) and writes it only when the figures change.
	// +optional
	Usage *MerchantUsage `json:"usage,omitempty"`

	// KeysInUse are the IDs (an APIKey's status.keyID) of the merchant's published keys that its ChatRuntime
	// refuses: another merchant created a key with the same value first, in its dashboard, and keeps it. The
	// operator copies them from the runtime's report with the usage; each such APIKey is Ready=False, reason
	// KeyInUse.
	// +optional
	// +listType=set
	KeysInUse []string `json:"keysInUse,omitempty"`

	// Conditions describe the merchant's state; Ready is True when its bundle is published.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// MerchantUsage is a merchant's use of its plan's monthly conversation ceiling.
type MerchantUsage struct {
	// Month is the UTC month counted, as YYYY-MM.
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-[0-9]{2}$`
	Month string `json:"month"`

	// Conversations is the number of conversations started in Month.
	// +kubebuilder:validation:Minimum=0
	Conversations int32 `json:"conversations"`

	// ConversationLimit is the plan's monthly conversation ceiling; 0 means none.
	// +kubebuilder:validation:Minimum=0
	ConversationLimit int32 `json:"conversationLimit"`

	// Summary is the same in short for `kubectl get merchants`: "87/100", or "87" without a ceiling.
	Summary string `json:"summary"`

	// ObservedTime is when the runtime counted these figures. It moves only when they change, so that an
	// unchanged count writes nothing.
	ObservedTime metav1.Time `json:"observedTime"`
}

// Merchant is one tenant of the chat runtime: a business whose website visitors chat with its bot.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=parley,shortName=merchant;mer
// +kubebuilder:printcolumn:name="Merchant ID",type=string,JSONPath=`.status.merchantID`
// +kubebuilder:printcolumn:name="Plan",type=string,JSONPath=`.spec.planRef.name`
// +kubebuilder:printcolumn:name="Keys",type=integer,JSONPath=`.status.apiKeys`
// +kubebuilder:printcolumn:name="Webhooks",type=integer,JSONPath=`.status.webhooks`
// +kubebuilder:printcolumn:name="Conversations",type=string,JSONPath=`.status.usage.summary`,description="Conversations this month against the plan's ceiling"
// +kubebuilder:printcolumn:name="Suspended",type=boolean,JSONPath=`.spec.suspended`,priority=1
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Merchant struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec describes the merchant.
	Spec MerchantSpec `json:"spec"`

	// Status is the observed state of the merchant.
	// A new object reads as observedGeneration -1 until the operator reports, which kstatus (Flux) takes
	// for in progress rather than for current.
	// +optional
	// +kubebuilder:default={"observedGeneration":-1}
	Status MerchantStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// MerchantList is a list of Merchants.
type MerchantList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Merchants.
	Items []Merchant `json:"items"`
}
