package v1alpha1

// Condition types. Every Parley kind reports a Ready condition, so that `kubectl wait --for=condition=Ready`,
// kstatus (Flux) and Argo CD health checks work on all of them.
const (
	// ConditionReady is True when the object is fully reconciled and in effect.
	ConditionReady = "Ready"
	// ConditionReconciling is True while Ready is Unknown, or False for a reason that resolves without anyone's
	// change (ReasonResolvesItself), and absent otherwise: kstatus (Flux) reports the object InProgress. Its
	// reason and message are the Ready condition's. Every kind.
	ConditionReconciling = "Reconciling"
	// ConditionStalled is True while Ready is False for a reason that needs someone to change a spec, a grant
	// or a Secret, and absent otherwise: kstatus (Flux) reports the object Failed instead of waiting out its
	// timeout. Its reason and message are the Ready condition's. Every kind.
	ConditionStalled = "Stalled"
	// ConditionIsolated is True when a ChatRuntime's runtime has a namespace of its own (spec.targetNamespace),
	// where it can read only its own tenant bundles. ChatRuntime.
	ConditionIsolated = "Isolated"
	// ConditionProxiesTrusted is True when a ChatRuntime lists the proxies in front of its runtime
	// (spec.trustedProxies), so that the plans' abuse limits count each visitor's own address. ChatRuntime.
	ConditionProxiesTrusted = "ProxiesTrusted"
	// ConditionLastBackupSucceeded is True when a SQLite runtime's latest scheduled backup (spec.backup)
	// succeeded and False when it failed; absent before the first and without spec.backup. It does not change
	// Ready: the runtime serves either way. ChatRuntime.
	ConditionLastBackupSucceeded = "LastBackupSucceeded"
)

// Reasons of the Ready condition. The operator also records each change of reason as an Event with the reason
// as its own, Normal when the object became Ready and Warning otherwise.
const (
	// ReasonReconciled means the object is in effect. Every kind.
	ReasonReconciled = "Reconciled"

	// ReasonPlanNotFound means the referenced Plan does not exist (yet). Merchant, Webhook.
	ReasonPlanNotFound = "PlanNotFound"
	// ReasonRuntimeNotFound means the referenced ChatRuntime does not exist (yet). Merchant.
	ReasonRuntimeNotFound = "RuntimeNotFound"
	// ReasonPlanNotAllowed means the referenced Plan's allowedNamespaces does not select the Merchant's
	// namespace. Chat stops in a bundle published before. Merchant.
	ReasonPlanNotAllowed = "PlanNotAllowed"
	// ReasonRuntimeNotAllowed means the referenced ChatRuntime's allowedNamespaces does not select the
	// Merchant's namespace. Chat stops in a bundle published before. Merchant.
	ReasonRuntimeNotAllowed = "RuntimeNotAllowed"
	// ReasonMerchantNotFound means the referenced Merchant does not exist (yet) in the object's namespace.
	// APIKey, Webhook, KnowledgeSource.
	ReasonMerchantNotFound = "MerchantNotFound"

	// ReasonSecretNotFound means a referenced Secret, or the key in it, does not exist. APIKey, Webhook.
	ReasonSecretNotFound = "SecretNotFound"
	// ReasonSecretNotLabelled means a referenced Secret exists but lacks the label that lets the operator watch
	// it. APIKey, Webhook.
	ReasonSecretNotLabelled = "SecretNotLabelled"
	// ReasonInvalidSecret means a referenced Secret holds a value that cannot be used. APIKey, Webhook.
	ReasonInvalidSecret = "InvalidSecret"
	// ReasonSecretConflict means the Secret to generate exists and is not owned by this object. APIKey, Webhook.
	ReasonSecretConflict = "SecretConflict"
	// ReasonSecretsNotGranted means the Secret to generate cannot be created: the platform team has not granted
	// the operator Secrets in the namespace. APIKey, Webhook.
	ReasonSecretsNotGranted = "SecretsNotGranted"

	// ReasonSuspended means the merchant is suspended: its bundle is published, but chat is refused. Ready stays
	// True. Merchant.
	ReasonSuspended = "Suspended"
	// ReasonOwnersNotAllowed means some owners are outside the email domains and subjects granted to the
	// Merchant's namespace: they are left out, and the merchant serves its other owners. Ready stays True. Merchant.
	ReasonOwnersNotAllowed = "OwnersNotAllowed"
	// ReasonMerchantIDConflict means another Merchant already holds the merchant ID; the first one keeps it.
	// Merchant.
	ReasonMerchantIDConflict = "MerchantIDConflict"
	// ReasonInvalidBundle means the merchant's tenant bundle, as rendered, fails the runtime's validation.
	// Merchant.
	ReasonInvalidBundle = "InvalidBundle"
	// ReasonBundleTooLarge means the merchant's tenant bundle would be larger than the 256 KiB a bundle may take
	// (too many API keys or webhooks), which every runtime replica holds in memory: the last published bundle
	// stays, with revoked keys withdrawn and suspensions applied. Merchant.
	ReasonBundleTooLarge = "BundleTooLarge"
	// ReasonTooManyMerchants means the Merchant's namespace has as many older Merchants on its runtime as the
	// runtime's tenantLimits.merchantsPerNamespace: the Merchant publishes no bundle until one of them is deleted
	// or the limit is raised. Merchant.
	ReasonTooManyMerchants = "TooManyMerchants"
	// ReasonTooManyAPIKeys means the Merchant has as many older APIKeys as its runtime's
	// tenantLimits.apiKeysPerMerchant: the key is not published until one of them is deleted or the limit is
	// raised. APIKey.
	ReasonTooManyAPIKeys = "TooManyAPIKeys"
	// ReasonInvalidAllowedNamespaces means allowedNamespaces is not a valid label selector: no namespace is
	// granted the object until it is. Plan.
	ReasonInvalidAllowedNamespaces = "InvalidAllowedNamespaces"

	// ReasonExpired means an API key has passed its expiry time. APIKey.
	ReasonExpired = "Expired"
	// ReasonKeyInUse means another merchant already uses a key with the same value; the first one keeps it, and
	// this key is not published. The message names neither the other merchant nor any Secret. APIKey.
	ReasonKeyInUse = "KeyInUse"

	// ReasonDisabled means a webhook is paused by spec.disabled. Ready stays True. Webhook.
	ReasonDisabled = "Disabled"
	// ReasonTargetNotAllowed means a webhook's URL names a loopback, private or link-local address or an
	// in-cluster name, which the merchant's runtime refuses to deliver to unless its
	// spec.webhooks.allowPrivateAddresses is set. Webhook.
	ReasonTargetNotAllowed = "TargetNotAllowed"
	// ReasonPlanDoesNotIncludeWebhooks means the merchant's plan has no webhooks feature. Webhook.
	ReasonPlanDoesNotIncludeWebhooks = "PlanDoesNotIncludeWebhooks"

	// ReasonSyncing means the runtime has not finished a sync of the KnowledgeSource's current spec yet: the
	// bundle is on its way to the runtime, or the sync is due or running. KnowledgeSource.
	ReasonSyncing = "Syncing"
	// ReasonSyncFailed means the runtime's last sync of the KnowledgeSource failed (the site unreachable, a
	// spec the merchant's plan refuses, a type the runtime does not read); the message is the runtime's error,
	// and the items of earlier syncs stay. KnowledgeSource.
	ReasonSyncFailed = "SyncFailed"

	// ReasonWrongNamespace means a ChatRuntime is outside the operator's namespace, where Merchants cannot use
	// it. ChatRuntime.
	ReasonWrongNamespace = "WrongNamespace"
	// ReasonDeploymentNotReady means the runtime Deployment has fewer ready replicas than desired. ChatRuntime.
	ReasonDeploymentNotReady = "DeploymentNotReady"
	// ReasonProviderNotFound means the Merchant's Plan names a model provider (spec.assistant.provider) its
	// ChatRuntime does not declare. Merchant.
	ReasonProviderNotFound = "ProviderNotFound"
	// ReasonModelNotFound means the Merchant's Plan names a model (spec.assistant.model) its provider does not
	// list. Merchant.
	ReasonModelNotFound = "ModelNotFound"
	// ReasonOwnKeyNotAllowed means the Merchant names its own provider key (spec.assistant.apiKeySecretRef) on a
	// Plan without spec.assistant.allowOwnKey. Merchant.
	ReasonOwnKeyNotAllowed = "OwnKeyNotAllowed"
	// ReasonTargetNamespaceInUse means another, older ChatRuntime already has the same target namespace; this
	// one renders nothing, as its runtime could read the other's bundles, and its Merchants publish none (chat
	// stops in a bundle published before). ChatRuntime, Merchant.
	ReasonTargetNamespaceInUse = "TargetNamespaceInUse"
	// ReasonApplyFailed means writing a rendered object to the API server failed. ChatRuntime.
	ReasonApplyFailed = "ApplyFailed"
	// ReasonNamespaceNotGranted means the operator may not write the runtime's objects in its target namespace:
	// the platform team has not bound the ClusterRole parley-runtime-namespace there. ChatRuntime.
	ReasonNamespaceNotGranted = "NamespaceNotGranted"
	// ReasonInvalidBackupSchedule means spec.backup.schedule passes the schema but not the parse the runtime
	// makes of it (a range that runs backwards, an unknown time zone): the operator applies nothing until it is
	// changed, so a runtime already running keeps its settings instead of failing at its start. ChatRuntime.
	ReasonInvalidBackupSchedule = "InvalidBackupSchedule"
)

// ReasonResolvesItself says whether a Ready=False reason resolves without anyone's change: a referenced object
// that does not exist yet (GitOps creates it in a later wave, External Secrets writes a Secret later), or a
// runtime's pods that are starting, or a knowledge source's sync that is running. Every other reason, one added later included, needs someone to change a
// spec, a grant or a Secret. Argo CD's health check (charts/parley/argocd/health.lua) lists the same reasons.
func ReasonResolvesItself(reason string) bool {
	switch reason {
	case ReasonPlanNotFound, ReasonRuntimeNotFound, ReasonMerchantNotFound, ReasonSecretNotFound,
		ReasonDeploymentNotReady, ReasonSyncing:
		return true
	}
	return false
}

// Reasons of the Isolated condition of a ChatRuntime.
const (
	// ReasonOwnNamespace means the runtime's workload and bundles are in a namespace of their own.
	ReasonOwnNamespace = "OwnNamespace"
	// ReasonSharesNamespace means the runtime runs in the operator's namespace (no spec.targetNamespace), where
	// it can read every Secret: other runtimes' bundles and the platform's credentials.
	ReasonSharesNamespace = "SharesNamespace"
)

// Reasons of the ProxiesTrusted condition of a ChatRuntime.
const (
	// ReasonProxiesListed means spec.trustedProxies lists the proxies whose X-Forwarded-For the runtime follows.
	ReasonProxiesListed = "ProxiesListed"
	// ReasonNoTrustedProxies means spec.trustedProxies is empty: behind an ingress or load balancer, every visitor
	// comes from its address, and the abuse limits hold all of them to one ceiling (the runtime then also logs a
	// warning and counts parley_runtime_untrusted_forwarded_requests_total). Nothing to do when visitors reach
	// the runtime directly.
	ReasonNoTrustedProxies = "NoTrustedProxies"
)

// Reasons of the LastBackupSucceeded condition of a ChatRuntime.
const (
	// ReasonBackupSucceeded means the latest backup was written and checked.
	ReasonBackupSucceeded = "BackupSucceeded"
	// ReasonBackupFailed means the latest backup failed; the message and status.backup.lastError say why.
	ReasonBackupFailed = "BackupFailed"
)

// Reasons of Events that are not about the Ready condition.
const (
	// EventReasonKeyGenerated is recorded on an APIKey when the operator generated its key into a new Secret
	// after the APIKey's first reconcile: its Secret was deleted (the key is replaced), or could not be created.
	EventReasonKeyGenerated = "KeyGenerated"
	// EventReasonSigningSecretGenerated is recorded on a Webhook when the operator generated its signing secret
	// into a new Secret after the Webhook's first reconcile, as EventReasonKeyGenerated.
	EventReasonSigningSecretGenerated = "SigningSecretGenerated"
)
