package main

import (
	"io"
	"log/slog"
	"maps"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/internal/contract"
	"github.com/parley-dev/parley/internal/render"
	"github.com/parley-dev/parley/internal/testutil/fakeembed"
)

// TestEmbeddersOfRenderedProviders starts the runtime's embedding models from the arguments and environment the
// operator renders for a ChatRuntime whose default provider and one plan provider have embedding models and
// another has none: each model is reached at its own server, with its provider's key, and the provider without
// one has no embedder.
func TestEmbeddersOfRenderedProviders(t *testing.T) {
	house, small, chatOnly := fakeembed.New(t), fakeembed.New(t), fakeembed.New(t)
	dims := int32(256)
	rt := &chatv1alpha1.ChatRuntime{ObjectMeta: metav1.ObjectMeta{Name: "blue", Namespace: "parley-system"},
		Spec: chatv1alpha1.ChatRuntimeSpec{Storage: chatv1alpha1.StorageSpec{Type: chatv1alpha1.StorageSQLite},
			Assistant: chatv1alpha1.AssistantSpec{Provider: chatv1alpha1.AssistantOpenAI,
				OpenAI: &chatv1alpha1.OpenAISpec{BaseURL: house.URL(), Model: "gpt-4o-mini",
					Embeddings: &chatv1alpha1.EmbeddingsSpec{Model: "text-embedding-3-small", Dimensions: &dims}},
				Providers: []chatv1alpha1.ModelProviderSpec{
					{Name: "small", BaseURL: small.URL(), APIKeySecretRef: &chatv1alpha1.SecretKeySelector{Name: "small-llm"},
						Models: []chatv1alpha1.ProviderModelSpec{{Name: "llama3.2"}}, Embeddings: &chatv1alpha1.EmbeddingsSpec{Model: "bge-m3"}},
					{Name: "chat-only", BaseURL: chatOnly.URL(), Models: []chatv1alpha1.ProviderModelSpec{{Name: "qwen3"}}},
				}}}}
	c := render.RuntimeDeployment(rt, "parley:test").Spec.Template.Spec.Containers[0]
	secrets := map[string]string{"small-llm": "sk-small-platform"}
	env := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.Value != nil:
			env[*e.Name] = *e.Value
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			env[*e.Name] = secrets[*e.ValueFrom.SecretKeyRef.Name]
		}
	}
	cfg, err := contract.ParseRuntime(c.Args[1:], func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatalf("the runtime refuses the rendered arguments %q: %v", c.Args, err)
	}
	es, err := newEmbedders(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(maps.Keys(es)); !slices.Equal(got, []string{"", "small"}) {
		t.Fatalf("embedders of providers %q, want the default and small", got)
	}
	for _, tc := range []struct {
		provider, model, auth string
		fake                  *fakeembed.Provider
		dims                  int
	}{
		{"", "text-embedding-3-small", "", house, 256},
		{"small", "bge-m3", "Bearer sk-small-platform", small, 0},
	} {
		if _, err := es[tc.provider].EmbedWithKey(t.Context(), []string{"opening hours"}, ""); err != nil {
			t.Fatalf("provider %q: %v", tc.provider, err)
		}
		rs := tc.fake.Requests()
		if len(rs) != 1 || rs[0].Model != tc.model || rs[0].Auth != tc.auth || rs[0].Dimensions != tc.dims {
			t.Errorf("provider %q's server saw %d requests (want one of %s, %d dimensions, its own key)", tc.provider, len(rs), tc.model, tc.dims)
		}
	}
	if len(chatOnly.Requests()) != 0 {
		t.Error("the provider without an embedding model was sent texts")
	}
}
