package contract

import (
	"io"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/labels"
)

func TestParseRuntimeDefaults(t *testing.T) {
	env := map[string]string{EnvPodNamespace: "parley-system"}
	c, err := ParseRuntime(nil, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := Runtime{Namespace: "parley-system", RuntimeName: "default", Listen: ":8080", MetricsListen: ":9090", Storage: StorageSQLite,
		SQLitePath: "parley.db", Assistant: AssistantRetrieval, LogLevel: slog.LevelInfo, LogFormat: "json",
		RedisKeyPrefix: DefaultRedisKeyPrefix, DeletedMerchantRetention: DefaultDeletedMerchantRetention,
		IndexCacheBytes: DefaultIndexCacheBytes, Backup: Backup{Schedule: DefaultBackupSchedule, Keep: DefaultBackupKeep}, OpenAI: OpenAI{BaseURL: "https://api.openai.com/v1",
			Timeout: DefaultModelTimeout, FirstTokenTimeout: DefaultFirstTokenTimeout, IdleTimeout: DefaultIdleTimeout, Temperature: DefaultOpenAITemperature, MaxTokens: DefaultOpenAIMaxTokens,
			ContextItems: DefaultOpenAIContextItems, HistoryTokens: DefaultOpenAIHistoryTokens,
			Embeddings: Embeddings{BatchSize: DefaultEmbeddingsBatchSize}}}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("got %+v\nwant %+v", c, want)
	}
}

func TestParseRuntimeTrustedProxies(t *testing.T) {
	c, err := ParseRuntime([]string{"--tenants-dir=b", "--trusted-proxies=10.0.0.0/8, fd00::1/8"}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.TrustedProxies.String(); got != "10.0.0.0/8,fd00::/8" {
		t.Errorf("trusted proxies %s", got)
	}
}

func TestParseRuntimeRefuses(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		env     map[string]string
		wantErr string
	}{
		{"unknown flag", []string{"--no-such-flag"}, nil, "flag provided but not defined"},
		{"stray argument", []string{"stray"}, nil, "unexpected arguments"},
		{"unknown store", []string{"--storage=mysql"}, nil, "use sqlite or postgres"},
		{"postgres without a URL", []string{"--storage=postgres"}, nil, "$PARLEY_DATABASE_URL"},
		{"unknown assistant", []string{"--assistant=claude"}, nil, "--assistant=claude is not available"},
		{"openai without a model", []string{"--assistant=openai"}, nil, "needs --openai-model"},
		{"openai with a bad URL", []string{"--assistant=openai", "--openai-model=m", "--openai-base-url=localhost:11434"}, nil, "absolute http or https URL"},
		{"openai with a bad Azure api-version", []string{"--assistant=openai", "--openai-model=m", "--openai-azure-api-version=latest"}, nil,
			"--openai-azure-api-version must be a date"},
		{"openai with a bad timeout", []string{"--assistant=openai", "--openai-model=m", "--openai-timeout=0s"}, nil, "--openai-timeout, --openai-first-token-timeout and --openai-idle-timeout must be positive"},
		{"openai with a first-token timeout past the most", []string{"--assistant=openai", "--openai-model=m", "--openai-first-token-timeout=301s"}, nil,
			"at most 5m0s"},
		{"providers that are no JSON", []string{"--providers=small"}, nil, "not a JSON array of providers"},
		{"a provider field the runtime does not know", []string{`--providers=[{"name":"a","baseURL":"http://a/v1","models":[{"name":"m"}],"style":"x"}]`}, nil,
			"unknown field"},
		{"a provider name that is no DNS label", []string{`--providers=[{"name":"A_1","baseURL":"http://a/v1","models":[{"name":"m"}]}]`}, nil,
			"must be a DNS label"},
		{"a provider twice", []string{`--providers=[{"name":"a","baseURL":"http://a/v1","models":[{"name":"m"}]},{"name":"a","baseURL":"http://b/v1","models":[{"name":"m"}]}]`}, nil,
			"listed twice"},
		{"a provider without models", []string{`--providers=[{"name":"a","baseURL":"http://a/v1","models":[]}]`}, nil, "has no models"},
		{"a provider with a relative URL", []string{`--providers=[{"name":"a","baseURL":"a:11434","models":[{"name":"m"}]}]`}, nil, "absolute http"},
		{"a model twice", []string{`--providers=[{"name":"a","baseURL":"http://a/v1","models":[{"name":"m"},{"name":"m"}]}]`}, nil, "listed twice"},
		{"a model with a bad timeout", []string{`--providers=[{"name":"a","baseURL":"http://a/v1","models":[{"name":"m","idleTimeout":"10m"}]}]`}, nil,
			"every timeout must be positive and at most 5m0s"},
		{"a model with a bad temperature", []string{`--providers=[{"name":"a","baseURL":"http://a/v1","models":[{"name":"m","temperature":3}]}]`}, nil,
			"temperature must be between 0 and 2"},
		{"provider embeddings without a model", []string{`--providers=[{"name":"a","baseURL":"http://a/v1","models":[{"name":"m"}],"embeddings":{"batchSize":8}}]`}, nil,
			"embeddings.model is required"},
		{"provider embeddings of too large a batch", []string{`--providers=[{"name":"a","baseURL":"http://a/v1","models":[{"name":"m"}],"embeddings":{"model":"e","batchSize":4096}}]`}, nil,
			"embeddings.batchSize must be between 1 and 2048"},
		{"provider embeddings too long", []string{`--providers=[{"name":"a","baseURL":"http://a/v1","models":[{"name":"m"}],"embeddings":{"model":"e","dimensions":-1}}]`}, nil,
			"embeddings.dimensions must be between 0 and 8192"},
		{"a model with a small window", []string{`--providers=[{"name":"a","baseURL":"http://a/v1","models":[{"name":"m","maxTokens":2048,"contextWindow":2048}]}]`}, nil,
			"contextWindow must be 0 or more than maxTokens"},
		{"openai with a window no larger than its answers", []string{"--assistant=openai", "--openai-model=m", "--openai-context-window=512"}, nil,
			"--openai-context-window must be 0 or more than --openai-max-tokens"},
		{"openai with a batch of no texts", []string{"--assistant=openai", "--openai-model=m", "--openai-embeddings-model=e",
			"--openai-embeddings-batch-size=0"}, nil, "--openai-embeddings-batch-size must be between 1 and 2048"},
		{"openai with vectors too long", []string{"--assistant=openai", "--openai-model=m", "--openai-embeddings-model=e",
			"--openai-embeddings-dimensions=9000"}, nil, "--openai-embeddings-dimensions must be between 0 and 8192"},
		{"certificate without key", []string{"--tls-cert-file=c"}, nil, "go together"},
		{"issuer without audience", []string{"--oidc-issuer=https://idp"}, nil, "go together"},
		{"no namespace", nil, nil, "--namespace is required"},
		{"redis TLS without address", []string{"--redis-tls"}, nil, "--redis-tls needs --redis-address"},
		{"redis address without port", []string{"--redis-address=redis"}, nil, "is not host:port"},
		{"bad log level", []string{"--log-level=loud"}, nil, "invalid value"},
		{"metrics on the public port", []string{"--metrics-listen=:8080"}, nil, "must differ"},
		{"profiles on the public port", []string{"--pprof-listen=:8080"}, nil, "must differ"},
		{"profiles on the metrics port", []string{"--pprof-listen=:9090"}, nil, "must differ"},
		{"a negative retention", []string{"--deleted-merchant-retention=-1h"}, nil, "--deleted-merchant-retention must not be negative"},
		{"a trusted proxy that is no network", []string{"--trusted-proxies=10.0.0.1"}, nil, "not a network in CIDR notation"},
		{"a negative index cache", []string{"--index-cache-bytes=-1"}, nil, "--index-cache-bytes must not be negative"},
		{"backups of postgres", []string{"--storage=postgres", "--backup-dir=/backups"}, map[string]string{EnvDatabaseURL: "postgres://db"},
			"--backup-dir backs up the SQLite store"},
		{"a bad backup schedule", []string{"--backup-dir=/backups", "--backup-schedule=nightly"}, nil, "--backup-schedule: schedule \"nightly\""},
		{"backups too often", []string{"--backup-dir=/backups", "--backup-schedule=@every 10s"}, nil, "backups at most every 1m0s"},
		{"no backup kept", []string{"--backup-dir=/backups", "--backup-keep=0"}, nil, "--backup-keep must be at least 1"},
		{"a negative backup age", []string{"--backup-dir=/backups", "--backup-max-age=-1h"}, nil, "--backup-max-age must not be negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if tc.name != "no namespace" {
				args = append([]string{"--tenants-dir=bundles"}, args...)
			}
			_, err := ParseRuntime(args, func(k string) string { return tc.env[k] }, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("want error %q, got %v", tc.wantErr, err)
			}
		})
	}
}

func TestParseRuntimeReadsSecretsFromEnv(t *testing.T) {
	env := map[string]string{EnvDatabaseURL: "postgres://db", EnvRedisPassword: "pw"}
	c, err := ParseRuntime([]string{"--namespace=ns", "--storage=postgres", "--redis-address=redis:6379", "--redis-tls"},
		func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.DatabaseURL != "postgres://db" || c.RedisPassword != "pw" || !c.RedisTLS || c.RedisAddress != "redis:6379" {
		t.Errorf("got %+v", c)
	}
}

func TestParseRuntimeReadsTheOpenAIKeyFromEnv(t *testing.T) {
	env := map[string]string{EnvOpenAIAPIKey: "sk-test"}
	c, err := ParseRuntime([]string{"--namespace=ns", "--assistant=openai", "--openai-base-url=http://localhost:11434/v1",
		"--openai-model=llama3.2", "--openai-timeout=5s"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.OpenAI.APIKey != "sk-test" || c.OpenAI.Model != "llama3.2" || c.OpenAI.BaseURL != "http://localhost:11434/v1" ||
		c.OpenAI.Timeout != 5*time.Second {
		t.Errorf("got %+v", c.OpenAI)
	}
}

// Each provider's key comes from its own variable, and each model's settings from the flag, the defaults where
// it sets none.
func TestParseRuntimeReadsProviders(t *testing.T) {
	env := map[string]string{EnvProviderAPIKey("large-gpu"): "sk-large"}
	c, err := ParseRuntime([]string{"--namespace=ns", `--providers=[{"name":"small","baseURL":"http://ollama:11434/v1","models":[{"name":"llama3.2"}],"embeddings":{"model":"bge-m3","dimensions":512}},` +
		`{"name":"large-gpu","baseURL":"https://large.example/v1","models":[{"name":"big","timeout":"1m","firstTokenTimeout":"5s","idleTimeout":"2s",` +
		`"temperature":0,"maxTokens":1024,"omitTemperature":true,"maxCompletionTokens":true,"contextWindow":8192}]}]`},
		func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if EnvProviderAPIKey("large-gpu") != "PARLEY_PROVIDER_API_KEY_LARGE_GPU" || !RuntimeReadsEnv("PARLEY_PROVIDER_API_KEY_LARGE_GPU") ||
		RuntimeReadsEnv(EnvProviderAPIKeyPrefix) || RuntimeReadsEnv("PARLEY_OTHER") {
		t.Errorf("the providers' key variables are not what the runtime reads")
	}
	if len(c.Providers) != 2 || c.Providers[0].APIKey != "" || c.Providers[1].APIKey != "sk-large" {
		t.Fatalf("providers %+v", c.Providers)
	}
	if e := c.Providers[0].Embeddings; e == nil || *e != (Embeddings{Model: "bge-m3", Dimensions: 512}) || c.Providers[1].Embeddings != nil {
		t.Errorf("the providers' embeddings are %+v and %+v", e, c.Providers[1].Embeddings)
	}
	small, big := c.Providers[0].Models[0], c.Providers[1].Models[0]
	if got := small.Timeouts(); got != (Timeouts{FirstToken: DefaultFirstTokenTimeout, Idle: DefaultIdleTimeout, Overall: DefaultModelTimeout}) ||
		small.TemperatureOrDefault() != DefaultOpenAITemperature || small.MaxTokensOrDefault() != DefaultOpenAIMaxTokens {
		t.Errorf("a model with no settings: %+v, timeouts %+v", small, got)
	}
	if got := big.Timeouts(); got != (Timeouts{FirstToken: 5 * time.Second, Idle: 2 * time.Second, Overall: time.Minute}) ||
		big.TemperatureOrDefault() != 0 || big.MaxTokensOrDefault() != 1024 || !big.OmitTemperature || !big.MaxCompletionTokens ||
		big.ContextWindow != 8192 {
		t.Errorf("a model with every setting: %+v, timeouts %+v", big, got)
	}
	var again Providers
	if err := again.Set(c.Providers.String()); err != nil || again.String() != c.Providers.String() {
		t.Errorf("the flag does not read what it writes: %v", err)
	}
}

func TestBundleSelectorMatchesBundleLabels(t *testing.T) {
	sel, err := labels.Parse(BundleSelector("blue"))
	if err != nil {
		t.Fatal(err)
	}
	retired := BundleLabels("blue")
	retired[LabelTenant] = TenantRetired
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   bool
	}{
		{"served", BundleLabels("blue"), true},
		{"retired", retired, true},
		{"another runtime's", BundleLabels("green"), false},
		{"not a bundle", map[string]string{LabelRuntime: "blue"}, false},
	} {
		if got := sel.Matches(labels.Set(tc.labels)); got != tc.want {
			t.Errorf("%s bundle %v: selected %v, want %v", tc.name, tc.labels, got, tc.want)
		}
	}
}

func TestMemoryLimit(t *testing.T) {
	for _, tc := range []struct {
		name     string
		limit    string
		goMemSet bool
		want     int64
		wantOK   bool
	}{
		{"a large limit keeps a tenth for what Go does not count", "2147483648", false, 2147483648 - 214748364, true},
		{"a 512 MiB limit keeps the least reserve, 96 MiB", "536870912", false, 416 << 20, true},
		{"a 400 MiB limit keeps 96 MiB", "419430400", false, 304 << 20, true},
		{"a limit under twice the reserve keeps half for Go", "134217728", false, 64 << 20, true},
		{"GOMEMLIMIT wins", "536870912", true, 0, false},
		{"no limit", "", false, 0, false},
		{"not a number", "512Mi", false, 0, false},
		{"zero", "0", false, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := MemoryLimit(tc.limit, tc.goMemSet)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("MemoryLimit(%q, %v) = %d, %v; want %d, %v", tc.limit, tc.goMemSet, got, ok, tc.want, tc.wantOK)
			}
		})
	}
}
