package render

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/internal/contract"
)

// The operator-runtime contract from the operator's side: the Deployment rendered for every shape of ChatRuntime
// the CRD accepts starts `parley runtime`, parsed by the runtime's own flag set and validation, with the settings
// the ChatRuntime asks for. A flag the runtime does not know, a value it refuses, or an environment variable it
// does not read fails here, not in a crash-looping pod.
func TestRenderedRuntimeStarts(t *testing.T) {
	crd := readCRD(t, "chat.parley.dev_chatruntimes.yaml")
	for _, tc := range runtimeShapes(t, crd) {
		t.Run(tc.name, func(t *testing.T) {
			rt := &chatv1alpha1.ChatRuntime{ObjectMeta: metav1.ObjectMeta{Name: "blue", Namespace: "parley-system"}, Spec: tc.spec}
			got := parseRendered(t, rt)
			if want := TargetNamespace(rt); got.Namespace != want || got.RuntimeName != rt.Name {
				t.Errorf("the runtime serves the bundles of %s/%s, want %s/%s", got.Namespace, got.RuntimeName, want, rt.Name)
			}
			if got.Storage != string(rt.Spec.Storage.Type) || got.Assistant != string(rt.Spec.Assistant.Provider) {
				t.Errorf("storage %q, assistant %q", got.Storage, got.Assistant)
			}
			if got.PublicURL != rt.Spec.PublicURL || got.WidgetURL != rt.Spec.WidgetURL {
				t.Errorf("public URL %q, widget URL %q", got.PublicURL, got.WidgetURL)
			}
			if o := rt.Spec.OIDC; (o == nil && got.OIDCIssuer != "") || (o != nil && (got.OIDCIssuer != o.IssuerURL || got.OIDCAudience != o.Audience)) {
				t.Errorf("OIDC issuer %q, audience %q", got.OIDCIssuer, got.OIDCAudience)
			}
			if got.WebhookAllowPrivate != rt.Spec.Webhooks.AllowPrivateAddresses {
				t.Errorf("webhook private targets allowed %v for spec.webhooks %+v", got.WebhookAllowPrivate, rt.Spec.Webhooks)
			}
			if (rt.Spec.TLS != nil) != (got.TLSCertFile != "") {
				t.Errorf("TLS certificate %q for spec.tls %v", got.TLSCertFile, rt.Spec.TLS)
			}
			if got.TrustedProxies.String() != strings.Join(rt.Spec.TrustedProxies, ",") {
				t.Errorf("trusted proxies %q, want %q", got.TrustedProxies.String(), rt.Spec.TrustedProxies)
			}
			if want := IndexCacheBytes(rt); got.IndexCacheBytes != want && (want != 0 || got.IndexCacheBytes != contract.DefaultIndexCacheBytes) {
				t.Errorf("index cache of %d bytes for resources %+v, want %d", got.IndexCacheBytes, rt.Spec.Resources, want)
			}
			wantRetention := contract.DefaultDeletedMerchantRetention
			if d := rt.Spec.DeletedMerchantRetention; d != nil {
				wantRetention = d.Duration
			}
			if got.DeletedMerchantRetention != wantRetention {
				t.Errorf("deleted merchants' data kept %s, want %s", got.DeletedMerchantRetention, wantRetention)
			}
			checkOpenAI(t, rt, got.OpenAI)
			checkProviders(t, rt, got.Providers)
			checkBackup(t, rt, got.Backup)
			r := redisRateLimiter(rt)
			switch {
			case r == nil && got.RedisAddress != "":
				t.Errorf("Redis %q without spec.rateLimiter.redis", got.RedisAddress)
			case r != nil && (got.RedisAddress != r.Address || got.RedisTLS != r.TLS ||
				(r.KeyPrefix != "" && got.RedisKeyPrefix != r.KeyPrefix)):
				t.Errorf("Redis %q (TLS %v, prefix %q) for %+v", got.RedisAddress, got.RedisTLS, got.RedisKeyPrefix, *r)
			case r != nil && r.PasswordSecretRef != nil && got.RedisPassword == "":
				t.Error("the Redis password does not reach the runtime")
			}
			if o := rt.Spec.OIDC; (o != nil && o.SessionKeySecretRef != nil) != (got.SessionKey != "") {
				t.Errorf("session key %v for spec.oidc %+v", got.SessionKey != "", o)
			}
		})
	}
}

// checkOpenAI checks that the runtime answers with the model the ChatRuntime names, tuned as it asks.
func checkOpenAI(t *testing.T, rt *chatv1alpha1.ChatRuntime, got contract.OpenAI) {
	t.Helper()
	o := openAISpec(rt)
	if o == nil {
		return
	}
	if got.BaseURL != o.BaseURL || got.Model != o.Model {
		t.Errorf("openai base URL %q, model %q", got.BaseURL, got.Model)
	}
	if (o.APIKeySecretRef != nil) != (got.APIKey != "") {
		t.Errorf("the API key reaches the runtime: %v, for %v", got.APIKey != "", o.APIKeySecretRef)
	}
	for _, d := range []struct {
		spec *metav1.Duration
		got  time.Duration
	}{{o.Timeout, got.Timeout}, {o.FirstTokenTimeout, got.FirstTokenTimeout}, {o.IdleTimeout, got.IdleTimeout}} {
		if d.spec != nil && d.got != d.spec.Duration {
			t.Errorf("timeouts %v, %v, %v", got.Timeout, got.FirstTokenTimeout, got.IdleTimeout)
		}
	}
	if o.Temperature != "" && strconv.FormatFloat(got.Temperature, 'f', -1, 64) != o.Temperature {
		t.Errorf("temperature %v", got.Temperature)
	}
	if got.AzureAPIVersion != o.AzureAPIVersion {
		t.Errorf("Azure api-version %q", got.AzureAPIVersion)
	}
	if got.MaxCompletionTokens != o.MaxCompletionTokens || got.OmitTemperature != o.OmitTemperature {
		t.Errorf("max_completion_tokens %v, temperature omitted %v", got.MaxCompletionTokens, got.OmitTemperature)
	}
	if o.MaxTokens != nil && got.MaxTokens != int(*o.MaxTokens) || o.ContextItems != nil && got.ContextItems != int(*o.ContextItems) ||
		o.HistoryTokens != nil && got.HistoryTokens != int(*o.HistoryTokens) ||
		(o.ContextWindow == nil) != (got.ContextWindow == 0) || o.ContextWindow != nil && got.ContextWindow != int(*o.ContextWindow) {
		t.Errorf("max tokens %d, context items %d, history tokens %d, context window %d", got.MaxTokens, got.ContextItems,
			got.HistoryTokens, got.ContextWindow)
	}
	if want := wantEmbeddings(o.Embeddings, contract.DefaultEmbeddingsBatchSize); got.Embeddings != want {
		t.Errorf("embeddings %+v, want %+v", got.Embeddings, want)
	}
}

// wantEmbeddings is what the runtime takes of e: batchSize, its flag's default, where e sets none.
func wantEmbeddings(e *chatv1alpha1.EmbeddingsSpec, batchSize int) contract.Embeddings {
	want := contract.Embeddings{BatchSize: batchSize}
	if e != nil {
		want.Model = e.Model
		if e.Dimensions != nil {
			want.Dimensions = int(*e.Dimensions)
		}
		if e.BatchSize != nil {
			want.BatchSize = int(*e.BatchSize)
		}
	}
	return want
}

// checkProviders checks that the runtime declares the ChatRuntime's providers, each model asked as it says and
// each key from its Secret.
func checkProviders(t *testing.T, rt *chatv1alpha1.ChatRuntime, got contract.Providers) {
	t.Helper()
	specs := rt.Spec.Assistant.Providers
	if len(got) != len(specs) {
		t.Fatalf("the runtime declares %d providers, the ChatRuntime %d", len(got), len(specs))
	}
	for i, s := range specs {
		p := got[i]
		if p.Name != s.Name || p.BaseURL != s.BaseURL || p.AzureAPIVersion != s.AzureAPIVersion || len(p.Models) != len(s.Models) {
			t.Errorf("provider %+v for %+v", p, s)
			continue
		}
		if (p.Embeddings == nil) != (s.Embeddings == nil) || p.Embeddings != nil && *p.Embeddings != wantEmbeddings(s.Embeddings, 0) {
			t.Errorf("provider %s's embeddings %+v for %+v", s.Name, p.Embeddings, s.Embeddings)
		}
		if want := "from-secret-"; s.APIKeySecretRef != nil && !strings.HasPrefix(p.APIKey, want+s.APIKeySecretRef.Name+"-") ||
			s.APIKeySecretRef == nil && p.APIKey != "" {
			t.Errorf("provider %s's key %q for %+v", s.Name, p.APIKey, s.APIKeySecretRef)
		}
		for j, ms := range s.Models {
			m, timeouts := p.Models[j], p.Models[j].Timeouts()
			want := contract.Timeouts{FirstToken: contract.DefaultFirstTokenTimeout, Idle: contract.DefaultIdleTimeout, Overall: contract.DefaultModelTimeout}
			for _, d := range []struct {
				spec *metav1.Duration
				to   *time.Duration
			}{{ms.Timeout, &want.Overall}, {ms.FirstTokenTimeout, &want.FirstToken}, {ms.IdleTimeout, &want.Idle}} {
				if d.spec != nil {
					*d.to = d.spec.Duration
				}
			}
			wantTemperature, wantMax, wantWindow := contract.DefaultOpenAITemperature, contract.DefaultOpenAIMaxTokens, 0
			if ms.Temperature != "" {
				wantTemperature, _ = strconv.ParseFloat(ms.Temperature, 64)
			}
			if ms.MaxTokens != nil {
				wantMax = int(*ms.MaxTokens)
			}
			if ms.ContextWindow != nil {
				wantWindow = int(*ms.ContextWindow)
			}
			if m.Name != ms.Name || timeouts != want || m.TemperatureOrDefault() != wantTemperature || m.MaxTokensOrDefault() != wantMax ||
				m.ContextWindow != wantWindow || m.MaxCompletionTokens != ms.MaxCompletionTokens || m.OmitTemperature != ms.OmitTemperature {
				t.Errorf("provider %s's model %+v (timeouts %+v) for %+v", s.Name, m, timeouts, ms)
			}
		}
	}
}

// checkBackup checks that the runtime takes the backups the ChatRuntime asks for, and none it does not.
func checkBackup(t *testing.T, rt *chatv1alpha1.ChatRuntime, got contract.Backup) {
	t.Helper()
	b := rt.Spec.Backup
	if b == nil {
		if got.Dir != "" {
			t.Errorf("backups into %s without spec.backup", got.Dir)
		}
		return
	}
	want := contract.Backup{Dir: backupDir, Schedule: b.Schedule, Keep: int(b.Retention.Keeps())}
	if want.Schedule == "" {
		want.Schedule = "@daily" // the CRD's default
	}
	if b.Retention.MaxAge != nil {
		want.MaxAge = b.Retention.MaxAge.Duration
	}
	if got != want {
		t.Errorf("backups %+v, want %+v", got, want)
	}
}

// runtimeShape is one kind of ChatRuntime the operator must render a working runtime for.
type runtimeShape struct {
	name string
	spec chatv1alpha1.ChatRuntimeSpec
}

// runtimeShapes are a ChatRuntime of every storage type and assistant provider the CRD accepts, and one with each
// optional feature that changes the runtime's arguments or environment.
func runtimeShapes(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition) []runtimeShape {
	t.Helper()
	one, three := int32(1), int32(3)
	base := func() chatv1alpha1.ChatRuntimeSpec {
		return chatv1alpha1.ChatRuntimeSpec{
			Replicas:  &one,
			Storage:   chatv1alpha1.StorageSpec{Type: chatv1alpha1.StorageSQLite},
			Assistant: chatv1alpha1.AssistantSpec{Provider: chatv1alpha1.AssistantRetrieval},
		}
	}
	postgres := func() chatv1alpha1.ChatRuntimeSpec {
		s := base()
		s.Replicas = &three
		s.Storage = chatv1alpha1.StorageSpec{Type: chatv1alpha1.StoragePostgres,
			Postgres: &chatv1alpha1.PostgresStorage{URLSecretRef: chatv1alpha1.SecretKeySelector{Name: "pg"}}}
		return s
	}
	var shapes []runtimeShape
	for _, storage := range enum(t, crd, "spec", "storage", "type") {
		s := base()
		if storage == string(chatv1alpha1.StoragePostgres) {
			s = postgres()
		}
		s.Storage.Type = chatv1alpha1.StorageType(storage)
		shapes = append(shapes, runtimeShape{"storage " + storage, s})
	}
	for _, provider := range enum(t, crd, "spec", "assistant", "provider") {
		s := base()
		s.Assistant.Provider = chatv1alpha1.AssistantProvider(provider)
		if s.Assistant.Provider == chatv1alpha1.AssistantOpenAI { // the CRD requires its configuration
			s.Assistant.OpenAI = &chatv1alpha1.OpenAISpec{BaseURL: "https://api.openai.com/v1", Model: "gpt-4o-mini"}
		}
		shapes = append(shapes, runtimeShape{"assistant " + provider, s})
	}
	add := func(name string, edit func(*chatv1alpha1.ChatRuntimeSpec), from func() chatv1alpha1.ChatRuntimeSpec) {
		s := from()
		edit(&s)
		shapes = append(shapes, runtimeShape{name, s})
	}
	add("public and widget URLs", func(s *chatv1alpha1.ChatRuntimeSpec) {
		s.PublicURL, s.WidgetURL = "https://chat.example.com", "https://cdn.example.com"
	}, base)
	add("redis", func(s *chatv1alpha1.ChatRuntimeSpec) {
		s.RateLimiter = &chatv1alpha1.RateLimiterSpec{Redis: &chatv1alpha1.RedisRateLimiter{Address: "redis.parley-system.svc:6379"}}
	}, postgres)
	add("redis with TLS, password and key prefix", func(s *chatv1alpha1.ChatRuntimeSpec) {
		s.RateLimiter = &chatv1alpha1.RateLimiterSpec{Redis: &chatv1alpha1.RedisRateLimiter{Address: "[fd00::1]:6380", TLS: true,
			KeyPrefix: "eu:", PasswordSecretRef: &chatv1alpha1.SecretKeySelector{Name: "redis"}}}
	}, postgres)
	add("TLS", func(s *chatv1alpha1.ChatRuntimeSpec) { s.TLS = &chatv1alpha1.TLSSpec{SecretName: "chat-tls"} }, base)
	add("trusted proxies", func(s *chatv1alpha1.ChatRuntimeSpec) { s.TrustedProxies = []string{"10.0.0.0/8", "fd00::/8"} }, base)
	add("webhooks to private addresses", func(s *chatv1alpha1.ChatRuntimeSpec) { s.Webhooks.AllowPrivateAddresses = true }, base)
	add("deleted merchants' data kept 90 days", func(s *chatv1alpha1.ChatRuntimeSpec) {
		s.DeletedMerchantRetention = &metav1.Duration{Duration: 90 * 24 * time.Hour}
	}, base)
	add("deleted merchants' data erased at once", func(s *chatv1alpha1.ChatRuntimeSpec) {
		s.DeletedMerchantRetention = &metav1.Duration{}
	}, base)
	add("OIDC", func(s *chatv1alpha1.ChatRuntimeSpec) {
		s.OIDC = &chatv1alpha1.OIDCSpec{IssuerURL: "https://login.example.com", Audience: "parley"}
	}, base)
	add("openai with a key and tuning", func(s *chatv1alpha1.ChatRuntimeSpec) {
		maxTokens, items, history, window := int32(300), int32(8), int32(0), int32(4096)
		s.Assistant = chatv1alpha1.AssistantSpec{Provider: chatv1alpha1.AssistantOpenAI, OpenAI: &chatv1alpha1.OpenAISpec{
			BaseURL: "http://ollama.ai.svc:11434/v1", Model: "llama3.2", APIKeySecretRef: &chatv1alpha1.SecretKeySelector{Name: "llm"},
			ModelSettings: chatv1alpha1.ModelSettings{Timeout: &metav1.Duration{Duration: 8 * time.Second},
				FirstTokenTimeout: &metav1.Duration{Duration: 45 * time.Second}, IdleTimeout: &metav1.Duration{Duration: 4 * time.Second},
				Temperature: "0.7", MaxTokens: &maxTokens, ContextWindow: &window},
			ContextItems: &items, HistoryTokens: &history}}
	}, base)
	add("openai with embeddings of its own length", func(s *chatv1alpha1.ChatRuntimeSpec) {
		s.Assistant = chatv1alpha1.AssistantSpec{Provider: chatv1alpha1.AssistantOpenAI, OpenAI: &chatv1alpha1.OpenAISpec{
			BaseURL: "http://ollama.ai.svc:11434/v1", Model: "llama3.2",
			Embeddings: &chatv1alpha1.EmbeddingsSpec{Model: "bge-m3"}}}
	}, base)
	add("openai with shortened embeddings in small batches", func(s *chatv1alpha1.ChatRuntimeSpec) {
		dims, batch := int32(256), int32(16)
		s.Assistant = chatv1alpha1.AssistantSpec{Provider: chatv1alpha1.AssistantOpenAI, OpenAI: &chatv1alpha1.OpenAISpec{
			BaseURL: "https://api.openai.com/v1", Model: "gpt-4o-mini", APIKeySecretRef: &chatv1alpha1.SecretKeySelector{Name: "llm"},
			Embeddings: &chatv1alpha1.EmbeddingsSpec{Model: "text-embedding-3-small", Dimensions: &dims, BatchSize: &batch}}}
	}, base)
	add("openai reasoning model", func(s *chatv1alpha1.ChatRuntimeSpec) {
		s.Assistant = chatv1alpha1.AssistantSpec{Provider: chatv1alpha1.AssistantOpenAI, OpenAI: &chatv1alpha1.OpenAISpec{
			BaseURL: "https://api.openai.com/v1", Model: "o4-mini",
			ModelSettings: chatv1alpha1.ModelSettings{MaxCompletionTokens: true, OmitTemperature: true}}}
	}, base)
	add("openai on an Azure classic deployment", func(s *chatv1alpha1.ChatRuntimeSpec) {
		s.Assistant = chatv1alpha1.AssistantSpec{Provider: chatv1alpha1.AssistantOpenAI, OpenAI: &chatv1alpha1.OpenAISpec{
			BaseURL: "https://shop-ai.openai.azure.com", Model: "gpt-4o-mini-prod", AzureAPIVersion: "2024-10-21",
			APIKeySecretRef: &chatv1alpha1.SecretKeySelector{Name: "azure-openai"}}}
	}, base)
	add("providers for plans, beside retrieval", func(s *chatv1alpha1.ChatRuntimeSpec) {
		maxTokens, window, dims := int32(1024), int32(8192), int32(512)
		s.Assistant.Providers = []chatv1alpha1.ModelProviderSpec{
			{Name: "small-cpu", BaseURL: "http://ollama.ai.svc:11434/v1", Embeddings: &chatv1alpha1.EmbeddingsSpec{Model: "bge-m3", Dimensions: &dims},
				Models: []chatv1alpha1.ProviderModelSpec{
					{Name: "llama3.2:1b"},
					{Name: "qwen3:4b", ModelSettings: chatv1alpha1.ModelSettings{Timeout: &metav1.Duration{Duration: 4 * time.Minute},
						FirstTokenTimeout: &metav1.Duration{Duration: time.Minute}, IdleTimeout: &metav1.Duration{Duration: 20 * time.Second},
						Temperature: "0", MaxTokens: &maxTokens, ContextWindow: &window}},
				}},
			{Name: "large", BaseURL: "https://shop-ai.openai.azure.com", AzureAPIVersion: "2024-10-21",
				APIKeySecretRef: &chatv1alpha1.SecretKeySelector{Name: "azure-openai", Key: "key"},
				Models: []chatv1alpha1.ProviderModelSpec{{Name: "gpt-5-prod", ModelSettings: chatv1alpha1.ModelSettings{
					MaxCompletionTokens: true, OmitTemperature: true}}}},
		}
	}, base)
	add("providers for plans, beside openai", func(s *chatv1alpha1.ChatRuntimeSpec) {
		batch := int32(32)
		s.Assistant = chatv1alpha1.AssistantSpec{Provider: chatv1alpha1.AssistantOpenAI,
			OpenAI: &chatv1alpha1.OpenAISpec{BaseURL: "https://api.openai.com/v1", Model: "gpt-4o-mini"},
			Providers: []chatv1alpha1.ModelProviderSpec{{Name: "gpu", BaseURL: "http://vllm.ai.svc:8000/v1",
				APIKeySecretRef: &chatv1alpha1.SecretKeySelector{Name: "vllm"}, Models: []chatv1alpha1.ProviderModelSpec{{Name: "llama3.1:70b"}},
				Embeddings: &chatv1alpha1.EmbeddingsSpec{Model: "intfloat/multilingual-e5-large", BatchSize: &batch}}}}
	}, base)
	add("OIDC with a shared session key", func(s *chatv1alpha1.ChatRuntimeSpec) {
		s.OIDC = &chatv1alpha1.OIDCSpec{IssuerURL: "https://login.example.com", Audience: "parley",
			SessionKeySecretRef: &chatv1alpha1.SecretKeySelector{Name: "dashboard-session-key"}}
	}, base)
	add("a memory request", func(s *chatv1alpha1.ChatRuntimeSpec) {
		s.Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}
	}, base)
	add("a memory limit only", func(s *chatv1alpha1.ChatRuntimeSpec) {
		s.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")}
	}, base)
	add("no memory resources", func(s *chatv1alpha1.ChatRuntimeSpec) {
		s.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	}, base)
	add("a target namespace of its own", func(s *chatv1alpha1.ChatRuntimeSpec) { s.TargetNamespace = "parley-runtime-blue" }, postgres)
	add("backups to a claim, by default", func(s *chatv1alpha1.ChatRuntimeSpec) {
		s.Backup = &chatv1alpha1.BackupSpec{ClaimName: "parley-backups"}
	}, base)
	add("backups to NFS on a schedule, with retention", func(s *chatv1alpha1.ChatRuntimeSpec) {
		keep := int32(14)
		s.Backup = &chatv1alpha1.BackupSpec{Schedule: "CRON_TZ=Europe/Berlin 30 2 * * *",
			Volume:    &chatv1alpha1.BackupVolumeSource{NFS: &corev1.NFSVolumeSource{Server: "nfs.example", Path: "/exports/parley"}},
			Retention: chatv1alpha1.BackupRetention{Keep: &keep, MaxAge: &metav1.Duration{Duration: 30 * 24 * time.Hour}}}
	}, base)
	add("backups every six hours", func(s *chatv1alpha1.ChatRuntimeSpec) {
		s.Backup = &chatv1alpha1.BackupSpec{Schedule: "@every 6h", ClaimName: "parley-backups"}
	}, base)
	add("autoscaling", func(s *chatv1alpha1.ChatRuntimeSpec) {
		s.Autoscaling = &chatv1alpha1.AutoscalingSpec{MinReplicas: &three, MaxReplicas: 10}
	}, postgres)
	return shapes
}

// parseRendered renders the runtime's Deployment and parses its container's command line and environment as
// `parley runtime` does. Environment variables from Secrets get a placeholder value; files the runtime opens must
// be on the container's volumes.
func parseRendered(t *testing.T, rt *chatv1alpha1.ChatRuntime) contract.Runtime {
	t.Helper()
	d := RuntimeDeployment(rt, "parley:test")
	c := d.Spec.Template.Spec.Containers[0]
	if len(c.Command) != 0 {
		t.Fatalf("the container overrides the image's entrypoint: %v", c.Command)
	}
	if len(c.Args) == 0 || c.Args[0] != contract.RuntimeCommand {
		t.Fatalf("the container runs %v, not parley %s", c.Args, contract.RuntimeCommand)
	}
	env := map[string]string{}
	for _, e := range c.Env {
		if !contract.RuntimeReadsEnv(*e.Name) {
			t.Errorf("the Deployment sets $%s, which parley runtime does not read", *e.Name)
		}
		switch {
		case e.Value != nil:
			env[*e.Name] = *e.Value
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			env[*e.Name] = "from-secret-" + *e.ValueFrom.SecretKeyRef.Name + "-" + *e.ValueFrom.SecretKeyRef.Key
		case e.ValueFrom != nil && e.ValueFrom.ResourceFieldRef != nil:
			if r := e.ValueFrom.ResourceFieldRef; *r.ContainerName != *c.Name || *r.Resource != "limits.memory" {
				t.Errorf("$%s is from %s of container %s", *e.Name, *r.Resource, *r.ContainerName)
			}
			env[*e.Name] = "536870912"
		default:
			t.Errorf("$%s has neither a value nor a Secret", *e.Name)
		}
	}
	got, err := contract.ParseRuntime(c.Args[1:], func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatalf("parley %s refuses the rendered arguments %q: %v", contract.RuntimeCommand, c.Args, err)
	}

	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[*p.Name] = *p.ContainerPort
	}
	if _, port, err := splitListen(got.Listen); err != nil || len(c.Ports) != 2 || ports["http"] != port {
		t.Errorf("the runtime listens on %q, the container ports are %v (%v)", got.Listen, ports, err)
	}
	if _, port, err := splitListen(got.MetricsListen); err != nil || ports["metrics"] != port || port == ports["http"] {
		t.Errorf("the runtime serves its metrics on %q, the container ports are %v (%v)", got.MetricsListen, ports, err)
	}
	mounted := func(path string) bool {
		for _, m := range c.VolumeMounts {
			if strings.HasPrefix(path, strings.TrimSuffix(*m.MountPath, "/")+"/") {
				return true
			}
		}
		return false
	}
	for _, path := range []string{got.TLSCertFile, got.TLSKeyFile} {
		if path != "" && !mounted(path) {
			t.Errorf("%s is on no volume of the container", path)
		}
	}
	if got.Backup.Dir != "" && !mounted(got.Backup.Dir+"/parley-20260101T000000Z.db") {
		t.Errorf("the backups' directory %s is on no volume: they would be lost with the pod", got.Backup.Dir)
	}
	if got.Storage == contract.StorageSQLite && !mounted(got.SQLitePath) {
		t.Errorf("the SQLite database %s is on no volume: it would be lost with the pod (or unwritable)", got.SQLitePath)
	}
	return got
}

func splitListen(addr string) (string, int32, error) {
	i := strings.LastIndex(addr, ":")
	port, err := strconv.ParseInt(addr[i+1:], 10, 32)
	return addr[:i], int32(port), err
}

// The names the API types, the CRDs, the bundle and the runtime use for webhook events and bundle labels are the
// contract's.
func TestAPINamesAreTheContracts(t *testing.T) {
	crd := readCRD(t, "chat.parley.dev_webhooks.yaml")
	if got := enum(t, crd, "spec", "events", "items"); !slices.Equal(got, contract.Events()) {
		t.Errorf("the Webhook CRD accepts the events %v, the runtime sends %v", got, contract.Events())
	}
	api := []chatv1alpha1.WebhookEvent{chatv1alpha1.EventConversationCreated, chatv1alpha1.EventLeadCreated, chatv1alpha1.EventLeadUpdated,
		chatv1alpha1.EventConversationHandoffRequested, chatv1alpha1.EventConversationAgentMessage,
		chatv1alpha1.EventConversationClosed, chatv1alpha1.EventFeedbackCreated, chatv1alpha1.EventPrivacyErased}
	if len(api) != len(contract.Events()) {
		t.Errorf("api/v1alpha1 names %d events, the contract %d", len(api), len(contract.Events()))
	}
	for i, e := range api {
		if string(e) != contract.Events()[i] {
			t.Errorf("api/v1alpha1 names event %d %q, the contract %q", i, e, contract.Events()[i])
		}
	}
	if chatv1alpha1.TenantLabel != contract.LabelTenant || chatv1alpha1.RuntimeLabel != contract.LabelRuntime {
		t.Errorf("api/v1alpha1's bundle labels %q, %q differ from the contract's", chatv1alpha1.TenantLabel, chatv1alpha1.RuntimeLabel)
	}
	if string(chatv1alpha1.StorageSQLite) != contract.StorageSQLite || string(chatv1alpha1.StoragePostgres) != contract.StoragePostgres {
		t.Error("api/v1alpha1's storage types differ from the contract's")
	}
	s := BundleSecret(&chatv1alpha1.ChatRuntime{ObjectMeta: metav1.ObjectMeta{Name: "blue", Namespace: "ns"}}, "acme", "acme/shop", nil)
	for k, v := range contract.BundleLabels("blue") {
		if s.Labels[k] != v {
			t.Errorf("the bundle Secret's label %s is %q, the runtime selects %q", k, s.Labels[k], v)
		}
	}
}

// readCRD reads a generated CustomResourceDefinition of config/crd/bases.
func readCRD(t *testing.T, file string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "config", "crd", "bases", file))
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(data, &crd); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return &crd
}

// enum returns the values the CRD's only version accepts at a path of properties ("items" steps into an array).
func enum(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition, path ...string) []string {
	t.Helper()
	if len(crd.Spec.Versions) != 1 {
		t.Fatalf("%s has %d versions", crd.Name, len(crd.Spec.Versions))
	}
	s := crd.Spec.Versions[0].Schema.OpenAPIV3Schema
	for _, p := range path {
		if p == "items" && s.Items != nil && s.Items.Schema != nil {
			s = s.Items.Schema
			continue
		}
		next, ok := s.Properties[p]
		if !ok {
			t.Fatalf("%s has no property %s", crd.Name, strings.Join(path, "."))
		}
		s = &next
	}
	var values []string
	for _, v := range s.Enum {
		var str string
		if err := yaml.Unmarshal(v.Raw, &str); err != nil {
			t.Fatalf("%s: enum value %s: %v", strings.Join(path, "."), v.Raw, err)
		}
		values = append(values, str)
	}
	if len(values) == 0 {
		t.Fatalf("%s.%s has no enum", crd.Name, strings.Join(path, "."))
	}
	return values
}
