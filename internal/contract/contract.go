// Package contract is the one definition of what the operator and the chat runtime must agree on besides the
// tenant bundle document (runtime/tenant): the `parley runtime` command line and environment, the labels on
// tenant bundle Secrets, and the webhook event names.
//
// The operator renders the runtime's Deployment from these names (internal/render) and `parley runtime` parses
// its arguments with ParseRuntime, so a test can start from what the operator renders and check that the
// runtime accepts it. The package depends on the standard library only, so both sides can import it.
package contract

import (
	"os"
	"runtime/debug"
	"strconv"
)

// RuntimeCommand is the parley subcommand that serves the chat runtime.
const RuntimeCommand = "runtime"

// The flags of `parley runtime`.
const (
	FlagNamespace                 = "namespace"
	FlagRuntimeName               = "runtime-name"
	FlagTenantsDir                = "tenants-dir"
	FlagListen                    = "listen"
	FlagPublicURL                 = "public-url"
	FlagWidgetURL                 = "widget-url"
	FlagStorage                   = "storage"
	FlagSQLitePath                = "sqlite-path"
	FlagAssistant                 = "assistant"
	FlagOIDCIssuer                = "oidc-issuer"
	FlagOIDCAudience              = "oidc-audience"
	FlagTLSCertFile               = "tls-cert-file"
	FlagTLSKeyFile                = "tls-key-file"
	FlagWebhookAllowPrivate       = "webhook-allow-private"
	FlagLogLevel                  = "log-level"
	FlagLogFormat                 = "log-format"
	FlagRedisAddress              = "redis-address"
	FlagRedisTLS                  = "redis-tls"
	FlagRedisKeyPrefix            = "redis-key-prefix"
	FlagTrustedProxies            = "trusted-proxies"
	FlagMetricsListen             = "metrics-listen"
	FlagIndexCacheBytes           = "index-cache-bytes"
	FlagPprofListen               = "pprof-listen"
	FlagOpenAIBaseURL             = "openai-base-url"
	FlagOpenAIModel               = "openai-model"
	FlagOpenAITimeout             = "openai-timeout"
	FlagOpenAITemperature         = "openai-temperature"
	FlagOpenAIAzureAPIVersion     = "openai-azure-api-version"
	FlagOpenAIMaxTokens           = "openai-max-tokens"
	FlagOpenAIMaxCompletionTokens = "openai-max-completion-tokens"
	FlagOpenAIOmitTemperature     = "openai-omit-temperature"
	FlagOpenAIContextItems        = "openai-context-items"
	FlagOpenAIHistoryTokens       = "openai-history-tokens"
	FlagOpenAIContextWindow       = "openai-context-window"
	FlagOpenAIEmbeddingsModel     = "openai-embeddings-model"
	FlagOpenAIEmbeddingsDims      = "openai-embeddings-dimensions"
	FlagOpenAIEmbeddingsBatchSize = "openai-embeddings-batch-size"
	FlagOpenAIFirstTokenTimeout   = "openai-first-token-timeout"
	FlagOpenAIIdleTimeout         = "openai-idle-timeout"
	FlagProviders                 = "providers"
	FlagDeletedMerchantRetention  = "deleted-merchant-retention"
	FlagBackupDir                 = "backup-dir"
	FlagBackupSchedule            = "backup-schedule"
	FlagBackupKeep                = "backup-keep"
	FlagBackupMaxAge              = "backup-max-age"
)

// Arg is the command-line argument that sets a flag to a value: --name=value.
func Arg(flag, value string) string { return "--" + flag + "=" + value }

// BoolArg is the command-line argument that turns a boolean flag on: --name.
func BoolArg(flag string) string { return "--" + flag }

// The environment variables `parley runtime` reads. Secrets travel only here, never in the arguments, where
// the process list would show them.
const (
	// EnvPodNamespace is the pod's namespace (from the downward API), the default of --namespace.
	EnvPodNamespace = "POD_NAMESPACE"
	// EnvDatabaseURL is PostgreSQL's connection URL with --storage=postgres; the operator sets it from the
	// ChatRuntime's spec.storage.postgres Secret.
	EnvDatabaseURL = "PARLEY_DATABASE_URL"
	// EnvRedisPassword is the password of --redis-address; the operator sets it from the ChatRuntime's
	// spec.rateLimiter.redis Secret.
	EnvRedisPassword = "PARLEY_REDIS_PASSWORD"
	// EnvOpenAIAPIKey is the key sent to the --assistant=openai provider; the operator sets it from the
	// ChatRuntime's spec.assistant.openai.apiKeySecretRef. None is sent when it is empty (Ollama, vLLM).
	EnvOpenAIAPIKey = "PARLEY_OPENAI_API_KEY"
	// EnvSessionKey signs the dashboard's session cookies (at least 32 bytes); replicas share it. Without it each
	// process makes its own, and sessions end when it restarts.
	EnvSessionKey = "PARLEY_SESSION_KEY"
	// EnvMemoryLimit is the container's memory limit in bytes, from the downward API (limits.memory); every
	// parley command sets the Go runtime's soft memory limit from it (MemoryLimit). The operator's Deployment
	// sets it too.
	EnvMemoryLimit = "PARLEY_MEMORY_LIMIT"
)

// SetMemoryLimit sets the Go runtime's soft memory limit from the environment, as MemoryLimit decides.
func SetMemoryLimit() {
	if limit, ok := MemoryLimit(os.Getenv(EnvMemoryLimit), os.Getenv("GOMEMLIMIT") != ""); ok {
		debug.SetMemoryLimit(limit)
	}
}

// MemoryLimit decides the Go runtime's soft memory limit from $PARLEY_MEMORY_LIMIT (containerLimit, in bytes)
// and whether $GOMEMLIMIT is set: the container's limit less a reserve for what the Go runtime does not count, so
// that the garbage collector works harder as the heap nears the limit instead of letting it grow to twice the
// live heap and the container be killed. ok is false when GOMEMLIMIT is set, which wins, or the limit is missing
// or not a positive number.
//
// The reserve is a tenth of the limit, but at least minMemoryReserve: what Go does not count is mostly the
// executable's own pages, a fixed amount, which a tenth of a small limit does not cover. A limit under twice
// that keeps half for Go, which has to have some.
func MemoryLimit(containerLimit string, goMemLimitSet bool) (limit int64, ok bool) {
	if goMemLimitSet || containerLimit == "" {
		return 0, false
	}
	n, err := strconv.ParseInt(containerLimit, 10, 64)
	if err != nil || n <= 0 {
		return 0, false
	}
	return max(n-max(n/10, minMemoryReserve), n/2), true
}

// minMemoryReserve is the least MemoryLimit leaves for what the Go runtime does not count. The executable's
// pages the process has touched are resident and charged to its container: when one binary held operator and
// runtime, the operator kept 64 to 83 MiB of them (RssFile in /proc/PID/status) at 1,000 merchants as at 10,000
// (`make bench-operator`), and with a Go limit of nine tenths of 400 MiB its peak resident set reached 418 to 425
// MiB. parley-operator alone keeps about 27 MiB, the runtime about 46; the rest covers SQLite's shared memory,
// C's malloc and the stacks of threads Go did not start.
const minMemoryReserve = 96 << 20

// RuntimeEnv lists every environment variable `parley runtime` reads.
func RuntimeEnv() []string {
	return []string{EnvPodNamespace, EnvDatabaseURL, EnvRedisPassword, EnvOpenAIAPIKey, EnvSessionKey, EnvMemoryLimit}
}

// The values of --storage.
const (
	// StorageSQLite keeps the runtime's data in a SQLite file: one replica.
	StorageSQLite = "sqlite"
	// StoragePostgres keeps the runtime's data in PostgreSQL, shared by replicas.
	StoragePostgres = "postgres"
)

// The values of --assistant.
const (
	// AssistantRetrieval answers from the merchant's knowledge base, with no network.
	AssistantRetrieval = "retrieval"
	// AssistantOpenAI answers with a model behind an OpenAI-compatible chat completions endpoint, grounded in
	// the retrieved knowledge, and falls back to retrieval when the model fails.
	AssistantOpenAI = "openai"
)

// The labels and annotations the operator puts on tenant bundle Secrets and the runtime selects and reads them by.
const (
	// LabelTenant is TenantServed on a tenant bundle Secret the runtime serves, and TenantRetired on the bundle
	// of a deleted Merchant, which holds no data and whose merchant's data the runtime erases after the retention.
	LabelTenant = "chat.parley.dev/tenant"
	// LabelRuntime names the ChatRuntime (in the Secret's namespace) whose runtime serves the bundle, or served
	// it before it was retired (and so holds the merchant's data).
	LabelRuntime = "chat.parley.dev/runtime"
	// LabelMerchantID carries the merchant ID on a tenant bundle Secret, retired or not.
	LabelMerchantID = "chat.parley.dev/merchant-id"
	// AnnotationRetiredAt on a retired bundle is when its Merchant was deleted (RFC 3339).
	AnnotationRetiredAt = "chat.parley.dev/retired-at"
)

// The values of LabelTenant.
const (
	TenantServed  = "true"
	TenantRetired = "retired"
)

// BundleLabels are the labels of a tenant bundle Secret served by the named runtime.
func BundleLabels(runtimeName string) map[string]string {
	return map[string]string{LabelTenant: TenantServed, LabelRuntime: runtimeName}
}

// BundleSelector is the label selector of the tenant bundle Secrets of the named runtime: those it serves and
// those retired from it (whatever LabelTenant's value).
func BundleSelector(runtimeName string) string {
	return LabelTenant + "," + LabelRuntime + "=" + runtimeName
}

// The webhook event types: the names Webhooks subscribe to (spec.events, the bundle's webhooks) and the "type" of
// every delivered payload.
const (
	// EventConversationCreated fires when a visitor starts a conversation.
	EventConversationCreated = "conversation.created"
	// EventLeadCreated fires when a visitor leaves contact details for the first time in a conversation.
	EventLeadCreated = "lead.created"
	// EventLeadUpdated fires when a visitor adds to or changes contact details already left.
	EventLeadUpdated = "lead.updated"
	// EventConversationHandoffRequested fires when a visitor asks for a person of the merchant's team; it carries
	// the conversation's transcript, for a helpdesk to open a ticket with.
	EventConversationHandoffRequested = "conversation.handoff_requested"
	// EventConversationAgentMessage fires when the merchant's team writes in a conversation.
	EventConversationAgentMessage = "conversation.agent_message"
	// EventConversationClosed fires when the merchant's team closes a conversation.
	EventConversationClosed = "conversation.closed"
	// EventFeedbackCreated fires when a visitor rates an answer or a conversation, or changes a rating given.
	EventFeedbackCreated = "feedback.created"
	// EventPrivacyErased fires when a data subject's records were erased on request (POST
	// /api/v1/privacy/erase), so that the merchant's other systems erase them too. It carries counts, never
	// what was erased.
	EventPrivacyErased = "privacy.erased"
)

// EventWebhookTest is sent only when an owner asks for it (the dashboard's "Send a test event", or
// POST /api/v1/webhooks/endpoints/{id}/test), to that one endpoint whatever the events it subscribes to. It is
// not in Events: nothing happens that a Webhook could subscribe to.
const EventWebhookTest = "webhook.test"

// Events lists every webhook event type a Webhook subscribes to, in the order the documentation gives them.
func Events() []string {
	return []string{EventConversationCreated, EventLeadCreated, EventLeadUpdated, EventConversationHandoffRequested,
		EventConversationAgentMessage, EventConversationClosed, EventFeedbackCreated,
		EventPrivacyErased}
}
