package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KnowledgeSourceType says where a knowledge source's pages come from.
// +kubebuilder:validation:Enum=website;git
type KnowledgeSourceType string

const (
	// KnowledgeSourceWebsite is a website, read from a start address or a sitemap.
	KnowledgeSourceWebsite KnowledgeSourceType = "website"
	// KnowledgeSourceGit is a Git repository of Markdown files, at a branch or tag.
	KnowledgeSourceGit KnowledgeSourceType = "git"
)

// KnowledgeSourceSpec describes where a merchant's knowledge comes from and how often it is read again. The
// fields are the REST API's (POST /api/v1/knowledge/sources), so a source kept in Git reads like one made there.
// +kubebuilder:validation:XValidation:rule="self.type == 'git' || !has(self.ref)",message="ref is for git sources only"
type KnowledgeSourceSpec struct {
	// MerchantRef names the Merchant, in the same namespace, whose knowledge the source makes. Immutable.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="merchantRef is immutable"
	MerchantRef LocalObjectReference `json:"merchantRef"`

	// Type is website (a start address or a sitemap) or git (a repository of Markdown). Immutable.
	// +optional
	// +kubebuilder:default=website
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="type is immutable"
	Type KnowledgeSourceType `json:"type,omitempty"`

	// URL is the website's start address or sitemap, or the Git repository's address, http or https. The crawl
	// stays on its host. The runtime refuses loopback, private and link-local addresses unless its ChatRuntime's
	// spec.webhooks.allowPrivateAddresses is set.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="isURL(self) && url(self).getHostname() != '' && url(self).getScheme() in ['http', 'https']",message="url must be an absolute http or https URL"
	URL string `json:"url"`

	// Ref is a Git source's branch or tag; empty reads the repository's default branch.
	// +optional
	// +kubebuilder:validation:MaxLength=200
	Ref string `json:"ref,omitempty"`

	// Include are path patterns ("/help/*", "/faq"): a page is read only when it matches one of them. Empty
	// reads every page of the site.
	// +optional
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:items:MaxLength=200
	// +listType=atomic
	Include []string `json:"include,omitempty"`

	// Exclude are path patterns of pages never read, even when Include matches them.
	// +optional
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:items:MaxLength=200
	// +listType=atomic
	Exclude []string `json:"exclude,omitempty"`

	// MaxPages bounds the pages one sync reads; unset is the plan's pages per source, and more than that is
	// refused by the runtime (Ready False, SyncFailed).
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	MaxPages int32 `json:"maxPages,omitempty"`

	// SyncInterval is the time between the end of a sync and the start of the next ("24h", "90m"); unset is
	// daily. It must be at least the plan's minSourceSyncInterval and at most 720h.
	// +optional
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1m') && duration(self) <= duration('720h')",message="syncInterval must be between 1m and 720h"
	SyncInterval *metav1.Duration `json:"syncInterval,omitempty"`
}

// KnowledgeSourceSyncState is how the runtime's last sync of a source stands.
// +kubebuilder:validation:Enum=Pending;Syncing;Ready;Failed
type KnowledgeSourceSyncState string

const (
	// SyncPending is a source the runtime has not synced yet.
	SyncPending KnowledgeSourceSyncState = "Pending"
	// SyncSyncing is a source one of the runtime's replicas is syncing.
	SyncSyncing KnowledgeSourceSyncState = "Syncing"
	// SyncReady is a source whose last sync finished.
	SyncReady KnowledgeSourceSyncState = "Ready"
	// SyncFailed is a source whose last sync failed; the items of its earlier syncs stay.
	SyncFailed KnowledgeSourceSyncState = "Failed"
)

// KnowledgeSourceSync is what the merchant's runtime reports of a source's syncs.
type KnowledgeSourceSync struct {
	// State is Pending, Syncing, Ready or Failed.
	State KnowledgeSourceSyncState `json:"state"`
	// SyncedGeneration is the generation of the spec the last finished sync read; 0 before the first.
	// +optional
	SyncedGeneration int64 `json:"syncedGeneration,omitempty"`
	// LastOutcome is how the last finished sync ended, Ready or Failed, kept while the next one runs.
	// +optional
	LastOutcome KnowledgeSourceSyncState `json:"lastOutcome,omitempty"`
	// PagesFound counts the pages the running or last sync found.
	// +optional
	PagesFound int32 `json:"pagesFound,omitempty"`
	// Pages counts the pages the running or last sync read, unchanged ones included.
	// +optional
	Pages int32 `json:"pages,omitempty"`
	// Items counts the knowledge items the source holds, as of its last sync.
	// +optional
	Items int32 `json:"items,omitempty"`
	// LastSyncedAt is when the last sync ended; unset before the first.
	// +optional
	LastSyncedAt *metav1.Time `json:"lastSyncedAt,omitempty"`
	// NextSyncAt is when the next sync is due.
	// +optional
	NextSyncAt *metav1.Time `json:"nextSyncAt,omitempty"`
	// Error says why the last sync failed, or which pages it left out; empty when nothing went wrong.
	// +optional
	Error string `json:"error,omitempty"`
	// ObservedTime is when the runtime reported this.
	ObservedTime metav1.Time `json:"observedTime"`
}

// KnowledgeSourceStatus is the observed state of a KnowledgeSource.
type KnowledgeSourceStatus struct {
	// ObservedGeneration is the generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// MerchantID is the merchant ID of the Merchant the source belongs to.
	// +optional
	MerchantID string `json:"merchantID,omitempty"`

	// Sync is the runtime's report of the source's syncs, copied by the operator at each of its reads of the
	// runtime's report (--usage-interval, a minute by default).
	// +optional
	Sync *KnowledgeSourceSync `json:"sync,omitempty"`

	// Conditions describe the source's state; Ready is True once the runtime's last sync of the current spec
	// succeeded, and False with the crawl's error when it failed.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// KnowledgeSource keeps a merchant's knowledge in step with where the merchant already keeps it: a website, or a
// Git repository of Markdown. The operator puts it into the merchant's tenant bundle; the runtime reads it on
// its schedule and makes its pages knowledge items, which the REST API and the dashboard show but cannot edit or
// delete.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=parley,shortName=ks
// +kubebuilder:printcolumn:name="Merchant",type=string,JSONPath=`.spec.merchantRef.name`
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.type`,priority=1
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.spec.url`
// +kubebuilder:printcolumn:name="Pages",type=integer,JSONPath=`.status.sync.pages`
// +kubebuilder:printcolumn:name="Items",type=integer,JSONPath=`.status.sync.items`
// +kubebuilder:printcolumn:name="Synced",type=date,JSONPath=`.status.sync.lastSyncedAt`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type KnowledgeSource struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec describes the source.
	Spec KnowledgeSourceSpec `json:"spec"`

	// Status is the observed state of the source.
	// A new object reads as observedGeneration -1 until the operator reports, which kstatus (Flux) takes
	// for in progress rather than for current.
	// +optional
	// +kubebuilder:default={"observedGeneration":-1}
	Status KnowledgeSourceStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// KnowledgeSourceList is a list of KnowledgeSources.
type KnowledgeSourceList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the KnowledgeSources.
	Items []KnowledgeSource `json:"items"`
}
