//go:build integration

package controllers

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
)

// TestSchemaRejectsBadObjects checks every validation rule of the CRDs against the real API server: each bad
// object is refused with a message that says what is wrong.
func TestSchemaRejectsBadObjects(t *testing.T) {
	ns := newNamespace(t)
	cases := []struct {
		name string
		obj  func() client.Object
		want string
	}{
		{"plan rate zero", func() client.Object { p := plan("bad-rate", 10, false); p.Spec.RequestsPerSecond = -1; return p },
			"spec.requestsPerSecond"},
		{"plan burst zero", func() client.Object { p := plan("bad-burst0", 10, false); p.Spec.Burst = new(int32(0)); return p },
			"spec.burst"},
		{"plan burst below rate", func() client.Object { p := plan("bad-burst", 10, false); p.Spec.Burst = new(int32(5)); return p },
			"burst must be at least requestsPerSecond"},
		{"sqlite with two replicas", func() client.Object { r := runtimeObj("bad-sqlite"); r.Spec.Replicas = new(int32(2)); return r },
			"sqlite storage supports one replica only"},
		{"autoscaling on sqlite", func() client.Object {
			r := runtimeObj("bad-sqlite-hpa")
			r.Spec.Autoscaling = &chatv1alpha1.AutoscalingSpec{MaxReplicas: 3}
			return r
		}, "autoscaling needs storage.type postgres"},
		{"autoscaling min above max", func() client.Object {
			r := runtimeObj("bad-hpa")
			r.Spec.Storage = chatv1alpha1.StorageSpec{Type: chatv1alpha1.StoragePostgres,
				Postgres: &chatv1alpha1.PostgresStorage{URLSecretRef: chatv1alpha1.SecretKeySelector{Name: "pg"}}}
			r.Spec.Autoscaling = &chatv1alpha1.AutoscalingSpec{MinReplicas: new(int32(4)), MaxReplicas: 3}
			return r
		}, "autoscaling.minReplicas must not exceed autoscaling.maxReplicas"},
		{"redis address without a port", func() client.Object {
			r := runtimeObj("bad-redis")
			r.Spec.RateLimiter = &chatv1alpha1.RateLimiterSpec{Redis: &chatv1alpha1.RedisRateLimiter{Address: "redis.example"}}
			return r
		}, "spec.rateLimiter.redis.address"},
		{"postgres without connection", func() client.Object {
			r := runtimeObj("bad-pg")
			r.Spec.Storage.Type = chatv1alpha1.StoragePostgres
			return r
		}, "storage.postgres is required"},
		{"openai provider without its settings", func() client.Object {
			r := runtimeObj("bad-ai")
			r.Spec.Assistant.Provider = chatv1alpha1.AssistantOpenAI
			return r
		}, "assistant.openai is required with provider openai"},
		{"openai timeout over five minutes", func() client.Object {
			r := runtimeObj("bad-ai-timeout")
			r.Spec.Assistant = chatv1alpha1.AssistantSpec{Provider: chatv1alpha1.AssistantOpenAI, OpenAI: &chatv1alpha1.OpenAISpec{
				BaseURL: "http://vllm:8000/v1", Model: "llama", ModelSettings: chatv1alpha1.ModelSettings{Timeout: &metav1.Duration{Duration: 6 * time.Minute}}}}
			return r
		}, "timeout must be between 0s and 300s"},
		{"openai first-token timeout of nothing", func() client.Object {
			r := runtimeObj("bad-ai-first-token")
			r.Spec.Assistant = chatv1alpha1.AssistantSpec{Provider: chatv1alpha1.AssistantOpenAI, OpenAI: &chatv1alpha1.OpenAISpec{
				BaseURL: "http://vllm:8000/v1", Model: "llama", ModelSettings: chatv1alpha1.ModelSettings{FirstTokenTimeout: &metav1.Duration{}}}}
			return r
		}, "firstTokenTimeout must be between 0s and 300s"},
		{"a provider without models", func() client.Object {
			r := runtimeObj("bad-provider-models")
			r.Spec.Assistant.Providers = []chatv1alpha1.ModelProviderSpec{{Name: "small", BaseURL: "http://ollama:11434/v1"}}
			return r
		}, "spec.assistant.providers[0].models"},
		{"a provider name that is no DNS label", func() client.Object {
			r := runtimeObj("bad-provider-name")
			r.Spec.Assistant.Providers = []chatv1alpha1.ModelProviderSpec{{Name: "Small_1", BaseURL: "http://ollama:11434/v1",
				Models: []chatv1alpha1.ProviderModelSpec{{Name: "llama3.2"}}}}
			return r
		}, "spec.assistant.providers[0].name"},
		{"a provider's model idle timeout over five minutes", func() client.Object {
			r := runtimeObj("bad-provider-idle")
			r.Spec.Assistant.Providers = []chatv1alpha1.ModelProviderSpec{{Name: "small", BaseURL: "http://ollama:11434/v1",
				Models: []chatv1alpha1.ProviderModelSpec{{Name: "llama3.2", ModelSettings: chatv1alpha1.ModelSettings{
					IdleTimeout: &metav1.Duration{Duration: time.Hour}}}}}}
			return r
		}, "idleTimeout must be between 0s and 300s"},
		{"a provider's model with temperature omitted and set", func() client.Object {
			r := runtimeObj("bad-provider-temperature")
			r.Spec.Assistant.Providers = []chatv1alpha1.ModelProviderSpec{{Name: "large", BaseURL: "https://api.openai.com/v1",
				Models: []chatv1alpha1.ProviderModelSpec{{Name: "o4-mini", ModelSettings: chatv1alpha1.ModelSettings{
					Temperature: "0.2", OmitTemperature: true}}}}}
			return r
		}, "temperature is not sent when omitTemperature is set"},
		{"a plan's model without its provider", func() client.Object {
			p := &chatv1alpha1.Plan{ObjectMeta: metav1.ObjectMeta{Name: "bad-plan-model"}}
			p.Spec.Assistant.Model = "llama3.2"
			return p
		}, "assistant.model needs assistant.provider"},
		{"openai temperature out of range", func() client.Object {
			r := runtimeObj("bad-ai-temperature")
			r.Spec.Assistant = chatv1alpha1.AssistantSpec{Provider: chatv1alpha1.AssistantOpenAI, OpenAI: &chatv1alpha1.OpenAISpec{
				BaseURL: "http://vllm:8000/v1", Model: "llama", ModelSettings: chatv1alpha1.ModelSettings{Temperature: "2.5"}}}
			return r
		}, "spec.assistant.openai.temperature"},
		{"openai temperature omitted and set", func() client.Object {
			r := runtimeObj("bad-ai-omitted-temperature")
			r.Spec.Assistant = chatv1alpha1.AssistantSpec{Provider: chatv1alpha1.AssistantOpenAI, OpenAI: &chatv1alpha1.OpenAISpec{
				BaseURL: "https://api.openai.com/v1", Model: "o4-mini", ModelSettings: chatv1alpha1.ModelSettings{Temperature: "0.2", OmitTemperature: true}}}
			return r
		}, "temperature is not sent when omitTemperature is set"},
		{"openai context window within the default max tokens", func() client.Object {
			r := runtimeObj("bad-ai-window")
			window := int32(1024)
			maxTokens := int32(2048)
			r.Spec.Assistant = chatv1alpha1.AssistantSpec{Provider: chatv1alpha1.AssistantOpenAI, OpenAI: &chatv1alpha1.OpenAISpec{
				BaseURL: "http://ollama:11434/v1", Model: "llama3.2", ModelSettings: chatv1alpha1.ModelSettings{ContextWindow: &window, MaxTokens: &maxTokens}}}
			return r
		}, "contextWindow must be larger than maxTokens"},
		{"embeddings without a model", func() client.Object {
			r := runtimeObj("bad-embed-model")
			r.Spec.Assistant = chatv1alpha1.AssistantSpec{Provider: chatv1alpha1.AssistantOpenAI, OpenAI: &chatv1alpha1.OpenAISpec{
				BaseURL: "http://ollama:11434/v1", Model: "llama3.2", Embeddings: &chatv1alpha1.EmbeddingsSpec{}}}
			return r
		}, "spec.assistant.openai.embeddings.model"},
		{"embeddings in batches of none", func() client.Object {
			r := runtimeObj("bad-embed-batch")
			batch := int32(0)
			r.Spec.Assistant = chatv1alpha1.AssistantSpec{Provider: chatv1alpha1.AssistantOpenAI, OpenAI: &chatv1alpha1.OpenAISpec{
				BaseURL: "http://ollama:11434/v1", Model: "llama3.2", Embeddings: &chatv1alpha1.EmbeddingsSpec{Model: "bge-m3", BatchSize: &batch}}}
			return r
		}, "spec.assistant.openai.embeddings.batchSize"},
		{"openai Azure api-version not a date", func() client.Object {
			r := runtimeObj("bad-ai-azure")
			r.Spec.Assistant = chatv1alpha1.AssistantSpec{Provider: chatv1alpha1.AssistantOpenAI, OpenAI: &chatv1alpha1.OpenAISpec{
				BaseURL: "https://shop-ai.openai.azure.com", Model: "gpt-4o-mini", AzureAPIVersion: "latest"}}
			return r
		}, "spec.assistant.openai.azureAPIVersion"},
		{"public URL not a URL", func() client.Object { r := runtimeObj("bad-url"); r.Spec.PublicURL = "chat.example.com"; return r },
			"publicURL must be an absolute http or https URL"},
		{"OIDC issuer over http", func() client.Object {
			r := runtimeObj("bad-oidc")
			r.Spec.OIDC = &chatv1alpha1.OIDCSpec{IssuerURL: "http://idp.example", Audience: "parley"}
			return r
		}, "issuerURL must be an https URL"},
		{"merchant ID not a DNS label", func() client.Object {
			m := merchant(ns, "bad-id", "starter", "default")
			m.Spec.MerchantID = "Acme_Shop"
			return m
		}, "merchantID must be a DNS label"},
		{"allowed origin with a path", func() client.Object {
			m := merchant(ns, "bad-origin", "starter", "default")
			m.Spec.AllowedOrigins = []string{"https://shop.example/checkout"}
			return m
		}, "each allowed origin must be scheme://host[:port]"},
		{"allowed origin wildcard", func() client.Object {
			m := merchant(ns, "bad-wild", "starter", "default")
			m.Spec.AllowedOrigins = []string{"*"}
			return m
		}, "each allowed origin must be scheme://host[:port]"},
		{"owner with email and subject", func() client.Object {
			m := merchant(ns, "bad-owner", "starter", "default")
			m.Spec.Owners = []chatv1alpha1.Owner{{Email: "a@b.example", Subject: "123"}}
			return m
		}, "an owner has exactly one of email or subject"},
		{"widget colour", func() client.Object {
			m := merchant(ns, "bad-color", "starter", "default")
			m.Spec.Widget.Color = "teal"
			return m
		}, "spec.widget.color"},
		{"key with both secret sources", func() client.Object {
			k := apiKey(ns, "bad-key", "m", chatv1alpha1.APIKeySecret)
			k.Spec.SecretName = "mine"
			k.Spec.ExistingSecretRef = &chatv1alpha1.SecretKeySelector{Name: "theirs"}
			return k
		}, "secretName and existingSecretRef are mutually exclusive"},
		{"key of unknown type", func() client.Object { return apiKey(ns, "bad-type", "m", "admin") }, "spec.type"},
		{"webhook over http", func() client.Object {
			w := webhook(ns, "bad-http", "m")
			w.Spec.URL = "http://crm.example/hooks"
			return w
		}, "url must use https"},
		{"webhook URL not a URL", func() client.Object {
			w := webhook(ns, "bad-hook-url", "m")
			w.Spec.URL = "crm.example"
			return w
		}, "url must be an absolute URL"},
		{"webhook unknown event", func() client.Object {
			w := webhook(ns, "bad-event", "m")
			w.Spec.Events = []chatv1alpha1.WebhookEvent{"order.paid"}
			return w
		}, "spec.events[0]"},
		{"webhook no events", func() client.Object {
			w := webhook(ns, "bad-none", "m")
			w.Spec.Events = nil
			return w
		}, "spec.events"},
		{"knowledge source file url", func() client.Object { return knowledgeSource(ns, "bad-file", "m", "file:///etc/passwd") },
			"url must be an absolute http or https URL"},
		{"knowledge source relative url", func() client.Object { return knowledgeSource(ns, "bad-relative", "m", "/help") },
			"url must be an absolute http or https URL"},
		{"knowledge source ref of a website", func() client.Object {
			ks := knowledgeSource(ns, "bad-ref", "m", "https://shop.example/")
			ks.Spec.Ref = "main"
			return ks
		}, "ref is for git sources only"},
		{"knowledge source type", func() client.Object {
			ks := knowledgeSource(ns, "bad-type", "m", "https://shop.example/")
			ks.Spec.Type = "ftp"
			return ks
		}, "spec.type"},
		{"knowledge source interval too short", func() client.Object {
			ks := knowledgeSource(ns, "bad-interval", "m", "https://shop.example/")
			ks.Spec.SyncInterval = &metav1.Duration{Duration: 30 * time.Second}
			return ks
		}, "syncInterval must be between 1m and 720h"},
		{"knowledge source no pages", func() client.Object {
			ks := knowledgeSource(ns, "bad-pages", "m", "https://shop.example/")
			ks.Spec.MaxPages = -1
			return ks
		}, "spec.maxPages"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := k8s.Create(ctxT(t), tc.obj())
			if err == nil {
				t.Fatal("the API server accepted a bad object")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error does not mention %q:\n%v", tc.want, err)
			}
		})
	}

	t.Run("http webhooks to loopback and in-cluster hosts are accepted", func(t *testing.T) {
		for i, u := range []string{"http://localhost:9000/h", "http://127.0.0.1/h", "http://crm.tools.svc/h", "http://crm.tools.svc.cluster.local:8080/h"} {
			w := webhook(ns, "ok-http-"+string(rune('a'+i)), "m")
			w.Spec.URL = u
			create(t, w)
		}
	})
	t.Run("a git knowledge source with a ref is accepted, its type defaulted otherwise", func(t *testing.T) {
		git := knowledgeSource(ns, "ok-git", "m", "https://git.example/docs.git")
		git.Spec.Type, git.Spec.Ref = chatv1alpha1.KnowledgeSourceGit, "v2"
		site := knowledgeSource(ns, "ok-site", "m", "https://shop.example/help/")
		create(t, git, site)
		if site.Spec.Type != chatv1alpha1.KnowledgeSourceWebsite || site.Status.ObservedGeneration != -1 {
			t.Errorf("a new source's type %q and observedGeneration %d", site.Spec.Type, site.Status.ObservedGeneration)
		}
	})
	t.Run("an openai runtime is accepted", func(t *testing.T) {
		r := runtimeObj("ai")
		r.Spec.Assistant = chatv1alpha1.AssistantSpec{Provider: chatv1alpha1.AssistantOpenAI, OpenAI: &chatv1alpha1.OpenAISpec{
			BaseURL: "http://ollama.ai.svc:11434/v1", Model: "llama3.2", APIKeySecretRef: &chatv1alpha1.SecretKeySelector{Name: "llm"},
			ModelSettings: chatv1alpha1.ModelSettings{Timeout: &metav1.Duration{Duration: 10 * time.Second}, Temperature: "0.7"}}}
		r.Namespace = ns
		create(t, r)
	})
	t.Run("defaults", func(t *testing.T) {
		r := &chatv1alpha1.ChatRuntime{ObjectMeta: metav1.ObjectMeta{Name: "defaults", Namespace: ns}}
		m := &chatv1alpha1.Merchant{ObjectMeta: metav1.ObjectMeta{Name: "defaults", Namespace: ns},
			Spec: chatv1alpha1.MerchantSpec{DisplayName: "D", PlanRef: chatv1alpha1.LocalObjectReference{Name: "p"}}}
		p := &chatv1alpha1.Plan{ObjectMeta: metav1.ObjectMeta{Name: "defaults"}}
		create(t, r, m, p)
		if *r.Spec.Replicas != 1 || r.Spec.Storage.Type != chatv1alpha1.StorageSQLite || r.Spec.Assistant.Provider != chatv1alpha1.AssistantRetrieval {
			t.Errorf("runtime defaults: %+v", r.Spec)
		}
		if m.Spec.RuntimeRef.Name != "default" {
			t.Errorf("runtimeRef defaults to %q", m.Spec.RuntimeRef.Name)
		}
		if p.Spec.RequestsPerSecond != 10 || p.Spec.Features.APIAccess == nil || !*p.Spec.Features.APIAccess {
			t.Errorf("plan defaults: %+v", p.Spec)
		}
	})
}

// TestSchemaRejectsBadUpdates checks the immutability rules.
func TestSchemaRejectsBadUpdates(t *testing.T) {
	ns := newNamespace(t)
	m := merchant(ns, "fixed", "starter", "default")
	m.Spec.MerchantID = "fixed-id"
	free := merchant(ns, "free", "starter", "default")
	k := apiKey(ns, "key", "fixed", chatv1alpha1.APIKeyPublishable)
	named := apiKey(ns, "named", "fixed", chatv1alpha1.APIKeyPublishable)
	named.Spec.SecretName = "named-key"
	w := webhook(ns, "hook", "fixed")
	ks := knowledgeSource(ns, "source", "fixed", "https://shop.example/")
	r := runtimeObj("immutable-" + ns)
	r.Namespace = ns
	r.Spec.Storage.SQLite = &chatv1alpha1.SQLiteStorage{Size: new(resource.MustParse("1Gi"))}
	create(t, m, free, k, named, w, ks, r)

	cases := []struct {
		name   string
		obj    client.Object
		mutate func()
		want   string
	}{
		{"merchantID changed", m, func() { m.Spec.MerchantID = "other-id" }, "merchantID is immutable"},
		{"merchantID removed", m, func() { m.Spec.MerchantID = "" }, "merchantID cannot be added or removed"},
		{"merchantID added", free, func() { free.Spec.MerchantID = "late-id" }, "merchantID cannot be added or removed"},
		{"key merchantRef changed", k, func() { k.Spec.MerchantRef.Name = "other" }, "merchantRef is immutable"},
		{"key type changed", k, func() { k.Spec.Type = chatv1alpha1.APIKeySecret }, "type is immutable"},
		{"key switched to bring-your-own", k, func() { k.Spec.ExistingSecretRef = &chatv1alpha1.SecretKeySelector{Name: "x"} },
			"a key cannot switch between generated and existingSecretRef"},
		{"key secretName added", k, func() { k.Spec.SecretName = "renamed" }, "secretName is immutable: it cannot be added or removed"},
		{"key secretName removed", named, func() { named.Spec.SecretName = "" }, "secretName is immutable: it cannot be added or removed"},
		{"webhook merchantRef changed", w, func() { w.Spec.MerchantRef.Name = "other" }, "merchantRef is immutable"},
		{"knowledge source merchantRef changed", ks, func() { ks.Spec.MerchantRef.Name = "other" }, "merchantRef is immutable"},
		{"knowledge source type changed", ks, func() { ks.Spec.Type = chatv1alpha1.KnowledgeSourceGit }, "type is immutable"},
		{"runtime scaled on sqlite", r, func() { r.Spec.Replicas = new(int32(3)) }, "sqlite storage supports one replica only"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The operator writes status meanwhile; retry until the API server judges the change itself.
			err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
				if err := k8s.Get(ctxT(t), client.ObjectKeyFromObject(tc.obj), tc.obj); err != nil {
					return err
				}
				tc.mutate()
				return k8s.Update(ctxT(t), tc.obj)
			})
			if err == nil {
				t.Fatal("the API server accepted a bad update")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error does not mention %q:\n%v", tc.want, err)
			}
		})
	}
	// An owner's subject set to the empty string, which a typed client leaves out but a patch can send.
	err := k8s.Patch(ctxT(t), free, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"owners":[{"email":"a@b.example"},{"subject":""}]}}`)))
	if err == nil || !strings.Contains(err.Error(), "subject") {
		t.Errorf("an owner with an empty subject: %v", err)
	}
}

// knowledgeSource is a website source of the merchant named merchantName.
func knowledgeSource(ns, name, merchantName, url string) *chatv1alpha1.KnowledgeSource {
	return &chatv1alpha1.KnowledgeSource{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: chatv1alpha1.KnowledgeSourceSpec{MerchantRef: chatv1alpha1.LocalObjectReference{Name: merchantName}, URL: url}}
}
