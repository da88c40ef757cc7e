package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// StorageType names where the runtime keeps conversations, knowledge and counters.
// +kubebuilder:validation:Enum=sqlite;postgres
type StorageType string

const (
	// StorageSQLite keeps data in an embedded SQLite file on a PersistentVolumeClaim; one replica only.
	StorageSQLite StorageType = "sqlite"
	// StoragePostgres keeps data in PostgreSQL, shared by any number of replicas.
	StoragePostgres StorageType = "postgres"
)

// AssistantProvider names what writes the chatbot's answers. The enum lists only what `parley runtime` serves
// (internal/contract), so that a valid ChatRuntime never renders a runtime that refuses to start.
// +kubebuilder:validation:Enum=retrieval;openai
type AssistantProvider string

const (
	// AssistantRetrieval answers from the merchant's knowledge base with no network access.
	AssistantRetrieval AssistantProvider = "retrieval"
	// AssistantOpenAI answers with a model behind an OpenAI-compatible chat completions endpoint, grounded in the
	// knowledge base, falling back to retrieval when the model fails.
	AssistantOpenAI AssistantProvider = "openai"
)

// ChatRuntimeWebhooks configures a runtime's webhook deliveries.
type ChatRuntimeWebhooks struct {
	// AllowPrivateAddresses lets deliveries reach loopback, private and link-local addresses and in-cluster
	// service names (*.svc, *.cluster.local), for endpoints inside the cluster. Off by default: a tenant's Webhook
	// could otherwise reach the platform's internal services. On a runtime without it, a Webhook to such a URL
	// is Ready=False with reason TargetNotAllowed, as the runtime refuses every delivery to it.
	// +optional
	AllowPrivateAddresses bool `json:"allowPrivateAddresses,omitempty"`
}

// TenantLimits bound what one tenant namespace may declare on a runtime. Of the objects of a kind, the oldest (by
// creation time, then name) are served; the others wait, Ready=False, until older ones are deleted or the limit
// is raised.
type TenantLimits struct {
	// MerchantsPerNamespace is how many Merchants of one namespace the runtime serves. A Merchant past it
	// publishes no bundle and is Ready=False with reason TooManyMerchants. Defaults to 10.
	// +optional
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	MerchantsPerNamespace *int32 `json:"merchantsPerNamespace,omitempty"`

	// APIKeysPerMerchant is how many APIKeys of one Merchant are published in its bundle. An APIKey past it is
	// not published and is Ready=False with reason TooManyAPIKeys. Defaults to 20.
	// +optional
	// +kubebuilder:default=20
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	APIKeysPerMerchant *int32 `json:"apiKeysPerMerchant,omitempty"`
}

// ChatRuntimeMetrics says who may scrape a runtime's metrics port.
type ChatRuntimeMetrics struct {
	// AllowedNamespaces selects, by their labels, the namespaces whose pods may reach the runtime's metrics port
	// besides the operator's own, for example the monitoring stack's Prometheus
	// ({matchLabels: {kubernetes.io/metadata.name: monitoring}}). Unset admits the operator's namespace only; an
	// empty selector admits every namespace.
	// +optional
	AllowedNamespaces *metav1.LabelSelector `json:"allowedNamespaces,omitempty"`
}

// ChatRuntimeSpec describes a deployment of the shared chat runtime.
// +kubebuilder:validation:XValidation:rule="self.storage.type == 'postgres' || self.replicas <= 1",message="sqlite storage supports one replica only; use storage.type postgres to run more"
// +kubebuilder:validation:XValidation:rule="self.storage.type == 'postgres' || !has(self.autoscaling)",message="autoscaling needs storage.type postgres: sqlite storage supports one replica only"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.targetNamespace) || has(self.targetNamespace)",message="targetNamespace cannot be removed once set"
// +kubebuilder:validation:XValidation:rule="!has(self.backup) || self.storage.type == 'sqlite'",message="backup takes backups of sqlite storage; back up PostgreSQL with its own tools"
type ChatRuntimeSpec struct {
	// TargetNamespace is where the operator puts the runtime's workload (Deployment, Services, ServiceAccount,
	// Role and RoleBinding, PersistentVolumeClaim, PodDisruptionBudget, HorizontalPodAutoscaler) and the tenant
	// bundles of its merchants. The runtime's Role lets it read every Secret of that namespace, so each runtime
	// should have a namespace of its own, holding nothing but its bundles and the Secrets this spec names
	// (which must be there too). The operator must be granted it: a RoleBinding there to the ClusterRole
	// parley-runtime-namespace. Empty keeps the ChatRuntime's own namespace, where the runtime can read the
	// platform's Secrets and other runtimes' bundles; the ChatRuntime then reports Isolated=False. Two
	// ChatRuntimes cannot share a target namespace: the younger is Ready=False with reason TargetNamespaceInUse.
	// It can be set on an existing ChatRuntime, which moves the workload there (the old one is deleted; a SQLite
	// runtime's data stays in the old PersistentVolumeClaim), but not changed or removed once set.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="targetNamespace cannot be changed"
	TargetNamespace string `json:"targetNamespace,omitempty"`

	// AllowedNamespaces selects, by their labels, the namespaces whose Merchants may be placed on this runtime,
	// in the manner of Gateway API's allowedRoutes. Unset or empty grants the runtime to every namespace. A
	// Merchant outside the grant is Ready=False with reason RuntimeNotAllowed.
	// +optional
	AllowedNamespaces *metav1.LabelSelector `json:"allowedNamespaces,omitempty"`

	// TenantLimits bound what one tenant namespace may make the runtime serve, so that no tenant can grow the
	// shared runtime's memory or the operator's work at will.
	// +optional
	// +kubebuilder:default={}
	TenantLimits TenantLimits `json:"tenantLimits,omitempty"`

	// Webhooks configures the runtime's webhook deliveries.
	// +optional
	Webhooks ChatRuntimeWebhooks `json:"webhooks,omitempty"`

	// Metrics says who may reach the runtime's metrics port, which serves /metrics and the usage report (/usage),
	// naming every merchant of the runtime. The operator renders a NetworkPolicy that admits to it only pods of the
	// operator's namespace, which reads the usage report, and of the namespaces metrics.allowedNamespaces selects;
	// the public port stays open to everyone. It takes a network plugin that enforces NetworkPolicies.
	// +optional
	Metrics ChatRuntimeMetrics `json:"metrics,omitempty"`

	// Image is the runtime's container image. Defaults to the operator's own image, so that upgrading the
	// operator upgrades the runtime with it.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Image string `json:"image,omitempty"`

	// ImagePullPolicy is the runtime container's image pull policy.
	// +optional
	// +kubebuilder:validation:Enum=Always;IfNotPresent;Never
	ImagePullPolicy corev1.PullPolicy `json:"imagePullPolicy,omitempty"`

	// Replicas is the number of runtime pods. It is ignored when autoscaling is set: the HorizontalPodAutoscaler
	// then owns the Deployment's replica count.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	Replicas *int32 `json:"replicas,omitempty"`

	// PublicURL is the address visitors and merchants' servers reach the REST API at (the {base_url}), for
	// example https://chat.example.com. It is written into the widget script and the embed snippets.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="isURL(self) && url(self).getScheme() in ['http', 'https'] && url(self).getHostname() != ''",message="publicURL must be an absolute http or https URL"
	PublicURL string `json:"publicURL,omitempty"`

	// WidgetURL is the address widget.js is served from (the {widget_url}), for example a CDN in front of the
	// runtime. Defaults to publicURL.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="isURL(self) && url(self).getScheme() in ['http', 'https'] && url(self).getHostname() != ''",message="widgetURL must be an absolute http or https URL"
	WidgetURL string `json:"widgetURL,omitempty"`

	// TrustedProxies are the networks (CIDR) of the proxies in front of the runtime, such as the ingress
	// controller's pods: from them, X-Forwarded-For names the client address that the plans' abuse limits count
	// new conversations per. From anyone else the header is ignored. Without it, every visitor behind a proxy
	// shares the proxy's address.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=49
	// +kubebuilder:validation:items:Pattern=`^[0-9a-fA-F:.]+/[0-9]{1,3}$`
	TrustedProxies []string `json:"trustedProxies,omitempty"`

	// DeletedMerchantRetention is how long the runtime keeps a deleted Merchant's data (conversations, messages,
	// leads, knowledge, webhook deliveries, counters and self-service keys) before erasing it: time to restore a
	// Merchant deleted by mistake, which keeps its data when created again within it. "0s" erases at once.
	// The merchant ID stays reserved to the deleted Merchant's namespace and name, before and after erasure.
	// +optional
	// +kubebuilder:default="720h"
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('0s')",message="deletedMerchantRetention must not be negative"
	DeletedMerchantRetention *metav1.Duration `json:"deletedMerchantRetention,omitempty"`

	// Autoscaling runs a HorizontalPodAutoscaler that scales the runtime between minReplicas and maxReplicas on
	// CPU (and optionally memory) use, instead of the fixed replicas. Needs storage.type postgres. Rate limits
	// stay per merchant across replicas only with rateLimiter.redis.
	// +optional
	Autoscaling *AutoscalingSpec `json:"autoscaling,omitempty"`

	// RateLimiter says where the merchants' rate limit buckets are kept. By default each replica keeps its own,
	// so N replicas allow a merchant up to N times its plan's rate; with rateLimiter.redis all replicas share one
	// bucket per merchant.
	// +optional
	RateLimiter *RateLimiterSpec `json:"rateLimiter,omitempty"`

	// Storage says where conversations, knowledge and counters are kept.
	// +optional
	// +kubebuilder:default={type: sqlite}
	Storage StorageSpec `json:"storage"`

	// Backup takes scheduled backups of a SQLite runtime's database onto a volume the platform chooses, with
	// retention; status.backup and the LastBackupSucceeded condition report them. Needs storage.type sqlite.
	// `parley restore` restores one (docs/operating.md, "Backup and restore").
	// +optional
	Backup *BackupSpec `json:"backup,omitempty"`

	// Assistant chooses what writes the answers.
	// +optional
	// +kubebuilder:default={provider: retrieval}
	Assistant AssistantSpec `json:"assistant"`

	// OIDC configures how the dashboard endpoints verify `Authorization: Bearer` ID tokens. Without it the
	// dashboard endpoints answer 401 to every request.
	// +optional
	OIDC *OIDCSpec `json:"oidc,omitempty"`

	// TLS names a kubernetes.io/tls Secret in the runtime's namespace; when set the runtime serves HTTPS
	// (TLS 1.3 minimum) itself instead of relying on an ingress to terminate TLS.
	// +optional
	TLS *TLSSpec `json:"tls,omitempty"`

	// Resources are the runtime container's compute requests and limits; when empty, 100m CPU and 256Mi memory
	// requested and a 512Mi memory limit. A quarter of the memory request (an eighth of the limit without one)
	// bounds the merchants' retrieval indexes kept in memory (--index-cache-bytes), least recently used evicted
	// first.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`
}

// AutoscalingSpec configures the runtime's HorizontalPodAutoscaler (autoscaling/v2). Utilization targets are
// percentages of the runtime container's resource requests, so the requests must be set (they are by default).
// +kubebuilder:validation:XValidation:rule="!has(self.minReplicas) || self.minReplicas <= self.maxReplicas",message="autoscaling.minReplicas must not exceed autoscaling.maxReplicas"
type AutoscalingSpec struct {
	// MinReplicas is the fewest runtime pods the autoscaler keeps. With more than one, the runtime gets a
	// PodDisruptionBudget.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	MinReplicas *int32 `json:"minReplicas,omitempty"`

	// MaxReplicas is the most runtime pods the autoscaler may run.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	MaxReplicas int32 `json:"maxReplicas"`

	// TargetCPUUtilizationPercentage is the average CPU use, as a percentage of the CPU request, the autoscaler
	// scales to keep. Defaults to 80.
	// +optional
	// +kubebuilder:default=80
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	TargetCPUUtilizationPercentage *int32 `json:"targetCPUUtilizationPercentage,omitempty"`

	// TargetMemoryUtilizationPercentage, when set, is the average memory use, as a percentage of the memory
	// request, the autoscaler also scales to keep; it follows whichever target asks for more pods.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	TargetMemoryUtilizationPercentage *int32 `json:"targetMemoryUtilizationPercentage,omitempty"`
}

// RateLimiterSpec says where the merchants' rate limit buckets are kept.
type RateLimiterSpec struct {
	// Redis keeps one token bucket per merchant in Redis, shared by all replicas, so a merchant's plan rate holds
	// across the whole runtime. While Redis does not answer, each replica limits on its own (fail open) and
	// reports it in the parley_runtime_ratelimit_redis_up metric.
	// +optional
	Redis *RedisRateLimiter `json:"redis,omitempty"`
}

// RedisRateLimiter is the Redis server the replicas share rate limits through. Any Redis 6 or later, or a
// compatible server with Lua scripting (Valkey, KeyDB), works; a single primary is enough, nothing is persisted
// that matters.
type RedisRateLimiter struct {
	// Address is host:port of the Redis server, for example redis.parley-system.svc:6379.
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9]([-A-Za-z0-9.]*[A-Za-z0-9])?):[0-9]{1,5}$`
	Address string `json:"address"`

	// PasswordSecretRef selects the key of a Secret in the runtime's namespace that holds the Redis password
	// (AUTH); none is sent when empty. The key defaults to "password". It reaches the runtime as an environment
	// variable from the Secret, never in the Deployment itself.
	// +optional
	PasswordSecretRef *SecretKeySelector `json:"passwordSecretRef,omitempty"`

	// TLS connects to Redis over TLS, verifying its certificate against the system's certificate authorities.
	// +optional
	TLS bool `json:"tls,omitempty"`

	// KeyPrefix starts the Redis key of every merchant's bucket (<keyPrefix><merchantID>); defaults to
	// "parley:ratelimit:". Runtimes of different clusters sharing one Redis need different prefixes.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[-A-Za-z0-9:_.{}/]*$`
	KeyPrefix string `json:"keyPrefix,omitempty"`
}

// StorageSpec selects and configures the runtime's store.
// +kubebuilder:validation:XValidation:rule="self.type != 'postgres' || has(self.postgres)",message="storage.postgres is required when storage.type is postgres"
type StorageSpec struct {
	// Type is the kind of store: sqlite (embedded, one replica) or postgres (shared).
	// +optional
	// +kubebuilder:default=sqlite
	Type StorageType `json:"type,omitempty"`

	// SQLite configures the volume that holds the SQLite database.
	// +optional
	SQLite *SQLiteStorage `json:"sqlite,omitempty"`

	// Postgres configures the PostgreSQL connection.
	// +optional
	Postgres *PostgresStorage `json:"postgres,omitempty"`
}

// SQLiteStorage configures the PersistentVolumeClaim of the embedded store.
type SQLiteStorage struct {
	// Size of the volume. Defaults to 1Gi. Besides the database, the store's write-ahead log takes up to about
	// 256Mi of it under writes that never pause, and keeps that size once reached.
	// +optional
	Size *resource.Quantity `json:"size,omitempty"`

	// StorageClassName of the volume; the cluster's default class when empty.
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`
}

// PostgresStorage configures the PostgreSQL store.
type PostgresStorage struct {
	// URLSecretRef selects the key of a Secret that holds the connection URL
	// (postgres://user:password@host:5432/db?sslmode=verify-full). The key defaults to "url".
	URLSecretRef SecretKeySelector `json:"urlSecretRef"`
}

// AssistantSpec chooses and configures the answer provider.
// +kubebuilder:validation:XValidation:rule="!has(self.provider) || self.provider != 'openai' || has(self.openai)",message="assistant.openai is required with provider openai"
type AssistantSpec struct {
	// Provider writes the answers of merchants whose Plan names no provider: retrieval (from the knowledge
	// base, no network) or openai (a model behind any OpenAI-compatible chat completions endpoint, grounded in
	// the knowledge base, falling back to retrieval when it fails).
	// +optional
	// +kubebuilder:default=retrieval
	Provider AssistantProvider `json:"provider,omitempty"`

	// OpenAI configures the openai provider, the default one.
	// +optional
	OpenAI *OpenAISpec `json:"openai,omitempty"`

	// Providers are further model servers, each with the models it serves, that a Plan names
	// (spec.assistant.provider and model) so that its merchants are answered by that model: a small model for
	// one plan, a large one for another. A merchant whose plan names none is answered as provider says.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	Providers []ModelProviderSpec `json:"providers,omitempty"`
}

// ModelProviderSpec is a named OpenAI-compatible chat completions server and the models plans may use on it.
type ModelProviderSpec struct {
	// Name is how Plans name the provider (spec.assistant.provider).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=40
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// BaseURL of the API, for example https://api.openai.com/v1 or http://ollama.ai.svc:11434/v1.
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="isURL(self) && url(self).getScheme() in ['http', 'https']",message="baseURL must be an http or https URL"
	BaseURL string `json:"baseURL"`

	// APIKeySecretRef selects the provider's API key, a Secret in the runtime's namespace; none is sent when
	// empty. The key defaults to "apiKey". A merchant whose plan allows it may send its own instead.
	// +optional
	APIKeySecretRef *SecretKeySelector `json:"apiKeySecretRef,omitempty"`

	// AzureAPIVersion, such as "2024-10-21", speaks to an Azure OpenAI classic endpoint, as in
	// spec.assistant.openai: baseURL is the resource's endpoint and each model's name a deployment's.
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-[0-9]{2}-[0-9]{2}(-preview)?$`
	AzureAPIVersion string `json:"azureAPIVersion,omitempty"`

	// Models are the models plans may choose on this provider, with how each is asked; the first answers the
	// plans that name the provider alone.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	Models []ProviderModelSpec `json:"models"`

	// Embeddings searches the knowledge of the merchants this provider answers by meaning as well as by words,
	// with an embedding model of the same server, as spec.assistant.openai.embeddings does for the default
	// provider's: their knowledge and questions go to this provider alone, with the merchant's own key where
	// it brings one. Unset, those merchants are searched by words alone, counted in
	// parley_runtime_retrieval_words_only_total{reason="provider"}.
	// +optional
	Embeddings *EmbeddingsSpec `json:"embeddings,omitempty"`
}

// ProviderModelSpec is one model of a provider and how it is asked.
// +kubebuilder:validation:XValidation:rule="!(has(self.omitTemperature) && self.omitTemperature && has(self.temperature))",message="temperature is not sent when omitTemperature is set"
// +kubebuilder:validation:XValidation:rule="!has(self.contextWindow) || self.contextWindow > (has(self.maxTokens) ? self.maxTokens : 512)",message="contextWindow must be larger than maxTokens (default 512)"
type ProviderModelSpec struct {
	// Name is the model name sent with each request, or the Azure deployment's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Name string `json:"name"`

	ModelSettings `json:",inline"`
}

// OpenAISpec configures an OpenAI-compatible chat completions endpoint for the openai provider.
// +kubebuilder:validation:XValidation:rule="!(has(self.omitTemperature) && self.omitTemperature && has(self.temperature))",message="temperature is not sent when omitTemperature is set"
// +kubebuilder:validation:XValidation:rule="!has(self.contextWindow) || self.contextWindow > (has(self.maxTokens) ? self.maxTokens : 512)",message="contextWindow must be larger than maxTokens (default 512)"
type OpenAISpec struct {
	// BaseURL of the API, for example https://api.openai.com/v1 or http://vllm.ai.svc:8000/v1.
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="isURL(self) && url(self).getScheme() in ['http', 'https']",message="baseURL must be an http or https URL"
	BaseURL string `json:"baseURL"`

	// Model is the model name sent with each request.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Model string `json:"model"`

	// APIKeySecretRef selects the provider's API key; none is sent when empty. The key defaults to "apiKey".
	// +optional
	APIKeySecretRef *SecretKeySelector `json:"apiKeySecretRef,omitempty"`

	// AzureAPIVersion, such as "2024-10-21", speaks to an Azure OpenAI classic deployment: baseURL is then the
	// resource's endpoint (https://NAME.openai.azure.com), model the deployment's name, sent in the path
	// (/openai/deployments/{model}/chat/completions?api-version=...), and the key goes in an api-key header.
	// Leave it out for Azure's v1 endpoint (https://NAME.openai.azure.com/openai/v1), which speaks OpenAI's
	// protocol.
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-[0-9]{2}-[0-9]{2}(-preview)?$`
	AzureAPIVersion string `json:"azureAPIVersion,omitempty"`

	ModelSettings `json:",inline"`

	// ContextItems is how many retrieved knowledge items the prompt carries, for every provider's models.
	// Defaults to 5.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=20
	ContextItems *int32 `json:"contextItems,omitempty"`

	// HistoryTokens bounds the conversation's earlier turns in the prompt, in estimated tokens, for every
	// provider's models. Defaults to 1500.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=32000
	HistoryTokens *int32 `json:"historyTokens,omitempty"`

	// Embeddings searches the knowledge by meaning as well as by words, with an embedding model of the same
	// server (its /v1/embeddings endpoint): the knowledge is embedded in the background when it is written or
	// synced, each question once per turn, and the two rankings fused, so that paraphrases and questions in
	// another language than the knowledge's find their items. The embeddings' tokens count against the plans'
	// monthly tokens. Unset, the knowledge is searched by words alone.
	// +optional
	Embeddings *EmbeddingsSpec `json:"embeddings,omitempty"`
}

// ModelSettings are how one model is asked and how long it is waited for. Past any of the three timeouts the
// visitor gets the offline answer, counted in parley_runtime_assistant_offline_answers_total by reason.
type ModelSettings struct {
	// Timeout bounds one whole answer. Defaults to 120s: a 512-token answer from a small model on a CPU-only
	// server (5 to 15 tokens a second) ends within it. At most 300s.
	// +optional
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s') && duration(self) <= duration('300s')",message="timeout must be between 0s and 300s"
	Timeout *metav1.Duration `json:"timeout,omitempty"`

	// FirstTokenTimeout bounds the wait for the answer's first text (or reasoning), which a server writes once
	// it has read the whole prompt. Defaults to 30s: a CPU-only server reads the prompt of five knowledge items
	// and some history (about 2,000 tokens) at 100 tokens a second or more. A server that ignores streaming
	// sends its whole answer at once, and must do so within it. At most 300s.
	// +optional
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s') && duration(self) <= duration('300s')",message="firstTokenTimeout must be between 0s and 300s"
	FirstTokenTimeout *metav1.Duration `json:"firstTokenTimeout,omitempty"`

	// IdleTimeout bounds the wait between two pieces of the answer once it started. Defaults to 10s: a server
	// still writing sends a token every fraction of a second, so a longer silence is a stalled server. At most
	// 300s.
	// +optional
	// +kubebuilder:validation:XValidation:rule="duration(self) > duration('0s') && duration(self) <= duration('300s')",message="idleTimeout must be between 0s and 300s"
	IdleTimeout *metav1.Duration `json:"idleTimeout,omitempty"`

	// Temperature is the sampling temperature, from 0 to 2, as a decimal string such as "0.2". Defaults to 0.2.
	// +optional
	// +kubebuilder:validation:Pattern=`^(0(\.[0-9]{1,3})?|1(\.[0-9]{1,3})?|2(\.0{1,3})?)$`
	Temperature string `json:"temperature,omitempty"`

	// MaxTokens caps the tokens of one answer. Defaults to 512.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=32768
	MaxTokens *int32 `json:"maxTokens,omitempty"`

	// MaxCompletionTokens sends maxTokens as max_completion_tokens, which OpenAI's o-series and gpt-5 models (and
	// Azure deployments of them) require instead of max_tokens. Unset, max_tokens is sent, which every compatible
	// server reads, until the model refuses it; the runtime then asks again with max_completion_tokens and keeps
	// to it.
	// +optional
	MaxCompletionTokens bool `json:"maxCompletionTokens,omitempty"`

	// OmitTemperature sends no temperature, for models that accept only their default (OpenAI's o-series and
	// gpt-5). Unset, the temperature is sent until the model refuses it; the runtime then asks again without it
	// and keeps to that.
	// +optional
	OmitTemperature bool `json:"omitTemperature,omitempty"`

	// ContextWindow is the model's context window in tokens, which the prompt and maxTokens share: a longer
	// prompt loses the conversation's oldest turns, then its least relevant knowledge items (down to one), each
	// cut counted in parley_runtime_assistant_prompt_cuts_total. Set it for servers that serve less than the
	// model takes and cut a longer prompt silently, such as Ollama's OpenAI endpoint (2,048 to 4,096 tokens
	// unless the model's num_ctx is raised). Unset, the prompt is bounded by contextItems and historyTokens alone.
	// +optional
	// +kubebuilder:validation:Minimum=1024
	// +kubebuilder:validation:Maximum=2000000
	ContextWindow *int32 `json:"contextWindow,omitempty"`
}

// EmbeddingsSpec is the embedding model of an OpenAI-compatible server: OpenAI's text-embedding-3, an Azure
// OpenAI deployment of one, Ollama's nomic-embed-text or bge-m3, vLLM, or llama.cpp's server started with
// --embeddings and a pooling other than none.
type EmbeddingsSpec struct {
	// Model is the embedding model's name, or the Azure deployment's. Changing it embeds the knowledge again in
	// the background; until then, questions are searched by words.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Model string `json:"model"`

	// Dimensions asks the model for vectors of this length, for models that can shorten theirs (OpenAI's
	// text-embedding-3, Matryoshka models): shorter vectors take less of the runtime's memory. Unset, the
	// model's own length; a server that refuses it is answered with the model's own.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=8192
	Dimensions *int32 `json:"dimensions,omitempty"`

	// BatchSize is the most texts one request carries. Defaults to 64; a server that refuses a batch (llama.cpp
	// past its physical batch, Ollama past its context) is sent smaller ones.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=2048
	BatchSize *int32 `json:"batchSize,omitempty"`
}

// OIDCSpec names the identity provider whose ID tokens the dashboard endpoints accept.
type OIDCSpec struct {
	// IssuerURL is the issuer (`iss`); its discovery document and keys are fetched from it.
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="isURL(self) && url(self).getScheme() == 'https'",message="issuerURL must be an https URL"
	IssuerURL string `json:"issuerURL"`

	// Audience is the client ID the tokens must be issued for (`aud`).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Audience string `json:"audience"`

	// SessionKeySecretRef names the Secret key (default "sessionKey") holding the key, at least 32 bytes, that
	// signs the dashboard's session cookies; every replica reads the same one, so a session started on one is
	// accepted by the others. Without it each replica makes its own, and sessions end when a pod restarts; with
	// several replicas, set it.
	// +optional
	SessionKeySecretRef *SecretKeySelector `json:"sessionKeySecretRef,omitempty"`
}

// TLSSpec names the runtime's serving certificate.
type TLSSpec struct {
	// SecretName is a kubernetes.io/tls Secret in the runtime's namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	SecretName string `json:"secretName"`
}

// ChatRuntimeStatus is the observed state of a ChatRuntime.
type ChatRuntimeStatus struct {
	// ObservedGeneration is the generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Replicas is the number of runtime pods the Deployment has.
	// +optional
	// +kubebuilder:default=0
	Replicas int32 `json:"replicas"`

	// ReadyReplicas is the number of runtime pods ready to serve.
	// +optional
	// +kubebuilder:default=0
	ReadyReplicas int32 `json:"readyReplicas"`

	// Tenants is the number of merchant bundles published for this runtime.
	// +optional
	// +kubebuilder:default=0
	Tenants int32 `json:"tenants"`

	// Backup is the state of the scheduled backups (spec.backup), read from the runtime.
	// +optional
	Backup *BackupStatus `json:"backup,omitempty"`

	// Conditions describe the runtime's state; Ready is True when every desired replica is ready.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// LastOutage is the last time no replica of the runtime was ready, as the operator saw its Deployment. A
	// SQLite runtime has one at every rollout (a change of its image or settings): one writer owns its volume, so
	// the old pod stops before the new one opens the database. A PostgreSQL runtime rolls with no gap and has one
	// only when every replica fails.
	// +optional
	LastOutage *RuntimeOutage `json:"lastOutage,omitempty"`
}

// RuntimeOutage is a time during which no replica of a runtime was ready: its widgets and API were offline.
type RuntimeOutage struct {
	// Start is when the runtime's last ready replica went away.
	Start metav1.Time `json:"start"`

	// End is when a replica was ready again; unset while the outage lasts.
	// +optional
	End *metav1.Time `json:"end,omitempty"`

	// Duration is how long the outage lasted, once it is over.
	// +optional
	Duration *metav1.Duration `json:"duration,omitempty"`
}

// ChatRuntime is a deployment of the shared chat runtime that serves every merchant referring to it. It lives in
// the operator's namespace, its workload and tenant bundles in its spec.targetNamespace; Merchants in any
// namespace name it in their runtimeRef.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=parley,shortName=cr;chatrt
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.spec.replicas`
// +kubebuilder:printcolumn:name="Ready Replicas",type=integer,JSONPath=`.status.readyReplicas`
// +kubebuilder:printcolumn:name="Tenants",type=integer,JSONPath=`.status.tenants`
// +kubebuilder:printcolumn:name="Storage",type=string,JSONPath=`.spec.storage.type`
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.spec.publicURL`
// +kubebuilder:printcolumn:name="Target Namespace",type=string,JSONPath=`.spec.targetNamespace`
// +kubebuilder:printcolumn:name="Isolated",type=string,JSONPath=`.status.conditions[?(@.type=="Isolated")].status`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Last Backup",type=date,JSONPath=`.status.backup.lastBackupTime`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ChatRuntime struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec describes the runtime deployment.
	// +optional
	Spec ChatRuntimeSpec `json:"spec,omitempty"`

	// Status is the observed state of the runtime.
	// A new object reads as observedGeneration -1 until the operator reports, which kstatus (Flux) takes
	// for in progress rather than for current.
	// +optional
	// +kubebuilder:default={"observedGeneration":-1}
	Status ChatRuntimeStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ChatRuntimeList is a list of ChatRuntimes.
type ChatRuntimeList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the ChatRuntimes.
	Items []ChatRuntime `json:"items"`
}

// Defaults of TenantLimits, for a ChatRuntime stored before the fields existed.
const (
	DefaultMerchantsPerNamespace int32 = 10
	DefaultAPIKeysPerMerchant    int32 = 20
)

// Merchants is MerchantsPerNamespace, defaulted.
func (l TenantLimits) Merchants() int32 {
	if l.MerchantsPerNamespace == nil {
		return DefaultMerchantsPerNamespace
	}
	return *l.MerchantsPerNamespace
}

// APIKeys is APIKeysPerMerchant, defaulted.
func (l TenantLimits) APIKeys() int32 {
	if l.APIKeysPerMerchant == nil {
		return DefaultAPIKeysPerMerchant
	}
	return *l.APIKeysPerMerchant
}
