package contract

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

// DefaultRedisKeyPrefix starts the Redis key of every merchant's rate limit bucket unless --redis-key-prefix
// names another.
const DefaultRedisKeyPrefix = "parley:ratelimit:"

// DefaultIndexCacheBytes is --index-cache-bytes when neither the operator nor the user sets it: a quarter of the
// memory the operator requests for a runtime by default (256 MiB), room for one merchant at the default
// knowledgeCharacters or about thirty of 100 short items.
const DefaultIndexCacheBytes = 64 << 20

// DefaultDeletedMerchantRetention is how long a deleted merchant's data is kept before the runtime erases it,
// unless --deleted-merchant-retention says otherwise: time to undo a mistaken deletion.
const DefaultDeletedMerchantRetention = 720 * time.Hour

// Runtime is the configuration of `parley runtime`: its flags and the environment variables it reads. The
// operator renders it from a ChatRuntime; ParseRuntime reads it back.
type Runtime struct {
	// Namespace holds the tenant bundle Secrets to serve (--namespace, default $POD_NAMESPACE).
	Namespace string
	// RuntimeName is the ChatRuntime whose tenant bundles to serve (--runtime-name).
	RuntimeName string
	// TenantsDir, when set, is a directory of bundle files read instead of Kubernetes Secrets (--tenants-dir).
	TenantsDir string
	// Listen is the address to serve on (--listen).
	Listen string
	// MetricsListen is the address the Prometheus metrics are served on, apart from the public port
	// (--metrics-listen); empty serves none.
	MetricsListen string
	// PprofListen, when set, is the address Go's profiles (net/http/pprof) are served on, apart from the
	// public port and the metrics (--pprof-listen): for profiling a runtime under load, never for visitors.
	PprofListen string
	// PublicURL is the address visitors reach the API at, written into widget.js (--public-url).
	PublicURL string
	// WidgetURL is the address widget.js is served from (--widget-url).
	WidgetURL string
	// Storage is StorageSQLite or StoragePostgres (--storage).
	Storage string
	// SQLitePath is the SQLite database file (--sqlite-path).
	SQLitePath string
	// Assistant names the answer provider (--assistant).
	Assistant string
	// OpenAI configures --assistant=openai.
	OpenAI OpenAI
	// Providers are the named model servers tenant bundles may name (--providers), each key from
	// $PARLEY_PROVIDER_API_KEY_<NAME>.
	Providers Providers
	// OIDCIssuer and OIDCAudience check dashboard ID tokens (--oidc-issuer, --oidc-audience); without them
	// the dashboard endpoints answer 401.
	OIDCIssuer, OIDCAudience string
	// TLSCertFile and TLSKeyFile, when set, make the runtime serve HTTPS (--tls-cert-file, --tls-key-file).
	TLSCertFile, TLSKeyFile string
	// WebhookAllowPrivate lets webhooks reach loopback, private and link-local addresses
	// (--webhook-allow-private).
	WebhookAllowPrivate bool
	// LogLevel and LogFormat ("json" or "text") shape the logs (--log-level, --log-format).
	LogLevel  slog.Level
	LogFormat string
	// RedisAddress, when set, is the host:port of the Redis through which replicas share the rate limits
	// (--redis-address), reached with TLS when RedisTLS (--redis-tls), under keys starting with RedisKeyPrefix
	// (--redis-key-prefix).
	RedisAddress   string
	RedisTLS       bool
	RedisKeyPrefix string
	// TrustedProxies are the networks of the proxies in front of the runtime, whose X-Forwarded-For names the
	// client address (--trusted-proxies, comma-separated CIDRs); from anyone else the header is ignored.
	TrustedProxies Prefixes
	// IndexCacheBytes bounds the estimated bytes of the merchants' retrieval indexes kept in memory, least
	// recently used evicted first (--index-cache-bytes); 0 keeps every index.
	IndexCacheBytes int64
	// DeletedMerchantRetention is how long after its Merchant was deleted a merchant's data is erased
	// (--deleted-merchant-retention); 0 erases it at once.
	DeletedMerchantRetention time.Duration
	// Backup configures the scheduled backups of a SQLite store.
	Backup Backup

	// DatabaseURL is PostgreSQL's connection URL ($PARLEY_DATABASE_URL): never a flag, which would show its
	// password in the process list.
	DatabaseURL string
	// RedisPassword is the Redis password ($PARLEY_REDIS_PASSWORD).
	RedisPassword string
	// SessionKey signs the dashboard's session cookies ($PARLEY_SESSION_KEY).
	SessionKey string
}

// ParseRuntime reads `parley runtime`'s configuration from its arguments (without the subcommand) and its
// environment, as getenv returns it, and validates it. Usage and flag errors are written to output.
func ParseRuntime(args []string, getenv func(string) string, output io.Writer) (Runtime, error) {
	var c Runtime
	fs := c.flagSet(getenv)
	fs.SetOutput(output)
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	c.DatabaseURL = getenv(EnvDatabaseURL)
	c.RedisPassword = getenv(EnvRedisPassword)
	c.OpenAI.APIKey = getenv(EnvOpenAIAPIKey)
	for i := range c.Providers {
		c.Providers[i].APIKey = getenv(EnvProviderAPIKey(c.Providers[i].Name))
	}
	c.SessionKey = getenv(EnvSessionKey)
	return c, c.Validate()
}

// flagSet binds `parley runtime`'s flags to c, with their defaults.
func (c *Runtime) flagSet(getenv func(string) string) *flag.FlagSet {
	fs := flag.NewFlagSet("parley "+RuntimeCommand, flag.ContinueOnError)
	fs.StringVar(&c.Namespace, FlagNamespace, getenv(EnvPodNamespace), "namespace of the tenant bundle Secrets (default: the pod's namespace, $"+EnvPodNamespace+")")
	fs.StringVar(&c.RuntimeName, FlagRuntimeName, "default", "the ChatRuntime whose tenant bundles to serve")
	fs.StringVar(&c.TenantsDir, FlagTenantsDir, "", "read tenant bundles from this directory instead of Kubernetes Secrets")
	fs.StringVar(&c.Listen, FlagListen, ":8080", "address to serve on")
	fs.StringVar(&c.MetricsListen, FlagMetricsListen, ":9090", "address to serve the Prometheus metrics on (/metrics), apart from the public port; empty serves none")
	fs.StringVar(&c.PprofListen, FlagPprofListen, "", "serve Go's profiles (net/http/pprof) on this address, e.g. localhost:6060, apart from the public port; off when empty")
	fs.StringVar(&c.PublicURL, FlagPublicURL, "", "the address visitors reach the API at (written into widget.js)")
	fs.StringVar(&c.WidgetURL, FlagWidgetURL, "", "the address widget.js is served from (default: --"+FlagPublicURL+")")
	fs.StringVar(&c.Storage, FlagStorage, StorageSQLite, "store: "+StorageSQLite+" (a file, one replica) or "+StoragePostgres+
		" (shared by replicas; the connection URL is read from $"+EnvDatabaseURL+")")
	fs.StringVar(&c.SQLitePath, FlagSQLitePath, "parley.db", "SQLite database file")
	BindAssistantFlags(fs, &c.Assistant, &c.OpenAI)
	fs.Var(&c.Providers, FlagProviders, "further model servers tenant bundles name, as a JSON array of {name, baseURL, azureAPIVersion, "+
		"models: [{name, timeout, firstTokenTimeout, idleTimeout, temperature, maxTokens, maxCompletionTokens, omitTemperature, contextWindow}], "+
		"embeddings: {model, dimensions, batchSize}}; "+
		"each key from $"+EnvProviderAPIKeyPrefix+"<NAME>")
	fs.StringVar(&c.OIDCIssuer, FlagOIDCIssuer, "", "OIDC issuer of dashboard ID tokens; without it the dashboard endpoints answer 401")
	fs.StringVar(&c.OIDCAudience, FlagOIDCAudience, "", "the client ID dashboard ID tokens must be issued for")
	fs.StringVar(&c.TLSCertFile, FlagTLSCertFile, "", "serve HTTPS (TLS 1.3) with this certificate")
	fs.StringVar(&c.TLSKeyFile, FlagTLSKeyFile, "", "the certificate's private key")
	fs.BoolVar(&c.WebhookAllowPrivate, FlagWebhookAllowPrivate, false, "let webhooks reach loopback, private and link-local addresses (refused by default)")
	fs.TextVar(&c.LogLevel, FlagLogLevel, slog.LevelInfo, "log level: debug, info, warn or error")
	fs.StringVar(&c.LogFormat, FlagLogFormat, "json", "log format: json or text")
	fs.StringVar(&c.RedisAddress, FlagRedisAddress, "", "host:port of a Redis through which the replicas share the merchants' rate limits "+
		"(password from $"+EnvRedisPassword+"); without it each replica limits on its own")
	fs.BoolVar(&c.RedisTLS, FlagRedisTLS, false, "connect to Redis with TLS")
	fs.StringVar(&c.RedisKeyPrefix, FlagRedisKeyPrefix, DefaultRedisKeyPrefix, "prefix of the Redis keys of the rate limit buckets")
	fs.Int64Var(&c.IndexCacheBytes, FlagIndexCacheBytes, DefaultIndexCacheBytes, "the most bytes of merchants' retrieval indexes kept in memory, "+
		"least recently used evicted first (an evicted merchant's next question rebuilds its index); 0 keeps every index")
	fs.DurationVar(&c.DeletedMerchantRetention, FlagDeletedMerchantRetention, DefaultDeletedMerchantRetention,
		"how long after its Merchant was deleted a merchant's data (conversations, leads, knowledge, deliveries, counters, keys) is erased; 0 erases it at once")
	fs.StringVar(&c.Backup.Dir, FlagBackupDir, "", "write scheduled backups of the SQLite store into this directory; off when empty")
	fs.StringVar(&c.Backup.Schedule, FlagBackupSchedule, DefaultBackupSchedule, "when backups are taken: five cron fields (UTC unless CRON_TZ=<zone> leads), "+
		"@hourly, @daily, @weekly or @every <duration> of at least "+MinBackupInterval.String())
	fs.IntVar(&c.Backup.Keep, FlagBackupKeep, DefaultBackupKeep, "how many backups to keep, newest first")
	fs.DurationVar(&c.Backup.MaxAge, FlagBackupMaxAge, 0, "remove backups older than this, the newest excepted; 0 removes none by age")
	fs.Var(&c.TrustedProxies, FlagTrustedProxies, "comma-separated networks (CIDR) of the proxies in front of the runtime whose X-Forwarded-For names the client address; ignored from anyone else")
	return fs
}

// Validate reports the first setting the runtime cannot run with.
func (c Runtime) Validate() error {
	switch {
	case c.Storage != StorageSQLite && c.Storage != StoragePostgres:
		return fmt.Errorf("--%s=%s is not available in this version; use %s or %s", FlagStorage, c.Storage, StorageSQLite, StoragePostgres)
	case c.Storage == StoragePostgres && c.DatabaseURL == "":
		return fmt.Errorf("--%s=%s needs the database's connection URL in $%s", FlagStorage, StoragePostgres, EnvDatabaseURL)
	case c.Assistant != AssistantRetrieval && c.Assistant != AssistantOpenAI:
		return fmt.Errorf("--%s=%s is not available in this version; use %s or %s", FlagAssistant, c.Assistant,
			AssistantRetrieval, AssistantOpenAI)
	case (c.TLSCertFile == "") != (c.TLSKeyFile == ""):
		return fmt.Errorf("--%s and --%s go together", FlagTLSCertFile, FlagTLSKeyFile)
	case (c.OIDCIssuer == "") != (c.OIDCAudience == ""):
		return fmt.Errorf("--%s and --%s go together", FlagOIDCIssuer, FlagOIDCAudience)
	case c.TenantsDir == "" && c.Namespace == "":
		return fmt.Errorf("--%s is required to read tenant bundles from Kubernetes (or give --%s)", FlagNamespace, FlagTenantsDir)
	case c.MetricsListen != "" && c.MetricsListen == c.Listen && !strings.HasSuffix(c.Listen, ":0"):
		return fmt.Errorf("--%s must differ from --%s: the metrics are not for the public port", FlagMetricsListen, FlagListen)
	case c.PprofListen != "" && (c.PprofListen == c.Listen || c.PprofListen == c.MetricsListen) && !strings.HasSuffix(c.PprofListen, ":0"):
		return fmt.Errorf("--%s must differ from --%s and --%s: the profiles are not for visitors", FlagPprofListen, FlagListen, FlagMetricsListen)
	case c.IndexCacheBytes < 0:
		return fmt.Errorf("--%s must not be negative", FlagIndexCacheBytes)
	case c.RedisTLS && c.RedisAddress == "":
		return fmt.Errorf("--%s needs --%s", FlagRedisTLS, FlagRedisAddress)
	case c.DeletedMerchantRetention < 0:
		return fmt.Errorf("--%s must not be negative", FlagDeletedMerchantRetention)
	case c.SessionKey != "" && len(c.SessionKey) < 32:
		return fmt.Errorf("$%s must be at least 32 bytes", EnvSessionKey)
	}
	if c.Backup.Dir != "" {
		if c.Storage != StorageSQLite {
			return fmt.Errorf("--%s backs up the SQLite store; back up PostgreSQL with its own tools", FlagBackupDir)
		}
		if err := c.Backup.Validate(); err != nil {
			return err
		}
	}
	if c.Assistant == AssistantOpenAI {
		if err := c.OpenAI.Validate(); err != nil {
			return err
		}
	}
	if err := c.Providers.Validate(); err != nil {
		return err
	}
	if c.RedisAddress != "" {
		if host, _, err := net.SplitHostPort(c.RedisAddress); err != nil || host == "" {
			return fmt.Errorf("--%s=%s is not host:port", FlagRedisAddress, c.RedisAddress)
		}
	}
	return nil
}

// Prefixes is a comma-separated list of networks in CIDR notation, as a flag value.
type Prefixes []netip.Prefix

// String implements flag.Value.
func (p *Prefixes) String() string {
	if p == nil {
		return ""
	}
	out := make([]string, len(*p))
	for i, n := range *p {
		out[i] = n.String()
	}
	return strings.Join(out, ",")
}

// Set implements flag.Value: it replaces the list with the networks of v.
func (p *Prefixes) Set(v string) error {
	var out Prefixes
	for _, f := range strings.Split(v, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := netip.ParsePrefix(f)
		if err != nil {
			return fmt.Errorf("%q is not a network in CIDR notation (10.0.0.0/8, fd00::/8): %w", f, err)
		}
		out = append(out, n.Masked())
	}
	*p = out
	return nil
}

// OpenAI configures the openai assistant: an OpenAI-compatible chat completions endpoint.
type OpenAI struct {
	// BaseURL is the API's address, such as https://api.openai.com/v1 (--openai-base-url).
	BaseURL string
	// Model is the model name sent with each request (--openai-model), or the Azure deployment's name.
	Model string
	// AzureAPIVersion, when set, speaks to an Azure OpenAI classic deployments endpoint with this api-version
	// (--openai-azure-api-version).
	AzureAPIVersion string
	// Timeout bounds one answer, after which the offline answer is given (--openai-timeout).
	Timeout time.Duration
	// FirstTokenTimeout bounds the wait for the answer's first text (--openai-first-token-timeout).
	FirstTokenTimeout time.Duration
	// IdleTimeout bounds the wait between two pieces of the answer (--openai-idle-timeout).
	IdleTimeout time.Duration
	// Temperature is the sampling temperature (--openai-temperature).
	Temperature float64
	// MaxTokens caps the tokens of one answer (--openai-max-tokens).
	MaxTokens int
	// MaxCompletionTokens sends MaxTokens as max_completion_tokens rather than max_tokens, without waiting for
	// the model to refuse max_tokens (--openai-max-completion-tokens).
	MaxCompletionTokens bool
	// OmitTemperature sends no temperature, without waiting for the model to refuse it
	// (--openai-omit-temperature).
	OmitTemperature bool
	// ContextItems is how many retrieved knowledge items the prompt carries (--openai-context-items).
	ContextItems int
	// HistoryTokens bounds the conversation's earlier turns in the prompt, in estimated tokens
	// (--openai-history-tokens).
	HistoryTokens int
	// ContextWindow is the model's context window in tokens, which the prompt and MaxTokens share; 0 for none
	// (--openai-context-window).
	ContextWindow int
	// APIKey is sent as a bearer token ($PARLEY_OPENAI_API_KEY): never a flag, which the process list shows.
	APIKey string
	// Embeddings configures the search by meaning with the same server's embedding model.
	Embeddings Embeddings
}

// Embeddings configures the search by meaning: the knowledge and each question embedded by a model of the
// openai assistant's server, or of a --providers provider's (/v1/embeddings), fused with the word ranking. Off
// when Model is empty.
type Embeddings struct {
	// Model is the embedding model, or the Azure deployment's name (--openai-embeddings-model).
	Model string `json:"model"`
	// Dimensions asks the model for vectors of this length; 0 takes the model's own
	// (--openai-embeddings-dimensions).
	Dimensions int `json:"dimensions,omitempty"`
	// BatchSize is the most texts one request carries (--openai-embeddings-batch-size); in --providers,
	// DefaultEmbeddingsBatchSize when 0.
	BatchSize int `json:"batchSize,omitempty"`
}

// validate reports whether the length asked for and the batch size, set as dims and batch say, are within
// their bounds.
func (e Embeddings) validate(dims, batch string) error {
	switch {
	case e.Dimensions < 0 || e.Dimensions > MaxEmbeddingsDimensions:
		return fmt.Errorf("%s must be between 0 and %d", dims, MaxEmbeddingsDimensions)
	case e.BatchSize < 1 || e.BatchSize > MaxEmbeddingsBatchSize:
		return fmt.Errorf("%s must be between 1 and %d", batch, MaxEmbeddingsBatchSize)
	}
	return nil
}

// The bounds of the embeddings flags.
const (
	DefaultEmbeddingsBatchSize = 64
	MaxEmbeddingsBatchSize     = 2048
	MaxEmbeddingsDimensions    = 8192
)

// The defaults of the openai flags.
const (
	DefaultOpenAITemperature   = 0.2
	DefaultOpenAIMaxTokens     = 512
	DefaultOpenAIContextItems  = 5
	DefaultOpenAIHistoryTokens = 1500
)

// BindAssistantFlags binds --assistant and the openai flags to assistant and o, with their defaults. `parley
// runtime` and `parley dev` share them.
func BindAssistantFlags(fs *flag.FlagSet, assistant *string, o *OpenAI) {
	fs.StringVar(assistant, FlagAssistant, AssistantRetrieval, "answer provider: "+AssistantRetrieval+
		" (the knowledge base, no network) or "+AssistantOpenAI+" (a model behind an OpenAI-compatible API, key from $"+
		EnvOpenAIAPIKey+", falling back to "+AssistantRetrieval+")")
	fs.StringVar(&o.BaseURL, FlagOpenAIBaseURL, "https://api.openai.com/v1", "the OpenAI-compatible API's address, such as http://localhost:11434/v1 for Ollama")
	fs.StringVar(&o.Model, FlagOpenAIModel, "", "the model that answers, such as gpt-4o-mini")
	fs.StringVar(&o.AzureAPIVersion, FlagOpenAIAzureAPIVersion, "", "the api-version of an Azure OpenAI classic endpoint, such as 2024-10-21: "+
		"--"+FlagOpenAIBaseURL+" is then the resource's endpoint and --"+FlagOpenAIModel+" the deployment's name")
	fs.DurationVar(&o.Timeout, FlagOpenAITimeout, DefaultModelTimeout, "how long an answer may take before the offline answer is given")
	fs.DurationVar(&o.FirstTokenTimeout, FlagOpenAIFirstTokenTimeout, DefaultFirstTokenTimeout,
		"how long the model may take to start its answer (to read the prompt) before the offline answer is given")
	fs.DurationVar(&o.IdleTimeout, FlagOpenAIIdleTimeout, DefaultIdleTimeout,
		"how long the model may stop writing midway before the offline answer is given")
	fs.Float64Var(&o.Temperature, FlagOpenAITemperature, DefaultOpenAITemperature, "sampling temperature, 0 to 2")
	fs.IntVar(&o.MaxTokens, FlagOpenAIMaxTokens, DefaultOpenAIMaxTokens, "the most tokens of one answer")
	fs.BoolVar(&o.MaxCompletionTokens, FlagOpenAIMaxCompletionTokens, false, "send --"+FlagOpenAIMaxTokens+
		" as max_completion_tokens (OpenAI's reasoning models); otherwise max_tokens, until the model refuses it")
	fs.BoolVar(&o.OmitTemperature, FlagOpenAIOmitTemperature, false, "send no temperature (models that accept only their default); "+
		"otherwise it is sent until the model refuses it")
	fs.IntVar(&o.ContextItems, FlagOpenAIContextItems, DefaultOpenAIContextItems, "how many retrieved knowledge items the prompt carries")
	fs.IntVar(&o.HistoryTokens, FlagOpenAIHistoryTokens, DefaultOpenAIHistoryTokens, "estimated tokens of earlier turns the prompt carries")
	fs.IntVar(&o.ContextWindow, FlagOpenAIContextWindow, 0, "the model's context window in tokens, which the prompt and --"+
		FlagOpenAIMaxTokens+" share: earlier turns, then the least relevant items, are cut to fit (0: none)")
	fs.StringVar(&o.Embeddings.Model, FlagOpenAIEmbeddingsModel, "", "the embedding model that searches the knowledge by meaning, "+
		"such as text-embedding-3-small or nomic-embed-text (empty: by words alone)")
	fs.IntVar(&o.Embeddings.Dimensions, FlagOpenAIEmbeddingsDims, 0, "the length of the vectors asked of the embedding model (0: the model's own)")
	fs.IntVar(&o.Embeddings.BatchSize, FlagOpenAIEmbeddingsBatchSize, DefaultEmbeddingsBatchSize, "the most texts one embeddings request carries")
}

// isAzureAPIVersion reports whether v names an Azure OpenAI API version: a date, or a date and -preview.
func isAzureAPIVersion(v string) bool {
	_, err := time.Parse(time.DateOnly, strings.TrimSuffix(v, "-preview"))
	return err == nil
}

// Validate reports the first openai setting the runtime cannot run with.
func (o OpenAI) Validate() error {
	u, err := url.Parse(o.BaseURL)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fmt.Errorf("--%s must be an absolute http or https URL", FlagOpenAIBaseURL)
	case o.Model == "":
		return fmt.Errorf("--%s=%s needs --%s", FlagAssistant, AssistantOpenAI, FlagOpenAIModel)
	case o.AzureAPIVersion != "" && !isAzureAPIVersion(o.AzureAPIVersion):
		return fmt.Errorf("--%s must be a date such as 2024-10-21, with -preview for a preview version", FlagOpenAIAzureAPIVersion)
	case Timeouts{FirstToken: o.FirstTokenTimeout, Idle: o.IdleTimeout, Overall: o.Timeout}.validate("") != nil:
		return fmt.Errorf("--%s, --%s and --%s must be positive and at most %s", FlagOpenAITimeout, FlagOpenAIFirstTokenTimeout,
			FlagOpenAIIdleTimeout, MaxModelTimeout)
	case o.Temperature < 0 || o.Temperature > 2:
		return fmt.Errorf("--%s must be between 0 and 2", FlagOpenAITemperature)
	case o.MaxTokens < 1:
		return fmt.Errorf("--%s must be positive", FlagOpenAIMaxTokens)
	case o.ContextItems < 1 || o.ContextItems > 20:
		return fmt.Errorf("--%s must be between 1 and 20", FlagOpenAIContextItems)
	case o.HistoryTokens < 0:
		return fmt.Errorf("--%s must not be negative", FlagOpenAIHistoryTokens)
	case o.ContextWindow < 0 || o.ContextWindow > 0 && o.ContextWindow <= o.MaxTokens:
		return fmt.Errorf("--%s must be 0 or more than --%s", FlagOpenAIContextWindow, FlagOpenAIMaxTokens)
	}
	return o.Embeddings.validate("--"+FlagOpenAIEmbeddingsDims, "--"+FlagOpenAIEmbeddingsBatchSize)
}
