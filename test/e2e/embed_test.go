//go:build integration

package e2e

import (
	"fmt"
	"maps"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/internal/testutil/fakeembed"
	"github.com/parley-dev/parley/internal/testutil/helpsite"
)

// The runtime started with the operator's arguments embeds each merchant's knowledge with the embedding model of
// its plan's provider (spec.assistant.providers[].embeddings), on that provider's server, with the platform's key
// or the merchant's own where its plan allows one; the knowledge of a merchant whose provider has no embedding
// model goes to no server and is answered from by its words. The knowledge comes from KnowledgeSources, as a
// merchant keeping its sources in Git writes it: the REST API's knowledge endpoints take dashboard ID tokens only.
func TestEachPlansMerchantsAreEmbeddedByItsProvider(t *testing.T) {
	const ownKey = "sk-merchant-embed-own-0123456789"
	for name, provider := range map[string]string{"e2e-embed-small": "small", "e2e-embed-large": "large", "e2e-embed-plain": "plain"} {
		if err := cluster.client.Create(t.Context(), &chatv1alpha1.Plan{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: chatv1alpha1.PlanSpec{RequestsPerSecond: 50, Burst: ptr.To[int32](50),
				Assistant: chatv1alpha1.PlanAssistantSpec{Provider: provider, AllowOwnKey: provider == "large"}}}); err != nil {
			t.Fatal(err)
		}
	}
	// Each merchant's site names the merchant's namespace in every page, so that each text sent to a server
	// tells whose it is.
	merchants := []struct {
		ns, plan string
		ownKey   bool
		// provider is the provider whose server the merchant's knowledge must go to, with model and auth; ""
		// for none.
		provider, model, auth string
	}{
		{ns: "e2e-embed-small", plan: "e2e-embed-small", provider: "small", model: "small-embed"},
		{ns: "e2e-embed-large", plan: "e2e-embed-large", provider: "large", model: "large-embed",
			auth: "Bearer " + largePlatformKey},
		{ns: "e2e-embed-own", plan: "e2e-embed-large", ownKey: true, provider: "large", model: "large-embed",
			auth: "Bearer " + ownKey},
		{ns: "e2e-embed-plain", plan: "e2e-embed-plain"},
	}
	for _, m := range merchants {
		merchant := &chatv1alpha1.Merchant{ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: m.ns},
			Spec: chatv1alpha1.MerchantSpec{DisplayName: m.ns, PlanRef: chatv1alpha1.LocalObjectReference{Name: m.plan}}}
		objects := []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: m.ns}}}
		if m.ownKey {
			objects = append(objects, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "my-llm-key", Namespace: m.ns,
				Labels: map[string]string{chatv1alpha1.SecretLabel: chatv1alpha1.SecretLabelProviderKey}},
				Data: map[string][]byte{chatv1alpha1.DefaultAPIKeySecretKey: []byte(ownKey)}})
			merchant.Spec.Assistant.APIKeySecretRef = &chatv1alpha1.SecretKeySelector{Name: "my-llm-key"}
		}
		objects = append(objects, merchant, &chatv1alpha1.KnowledgeSource{ObjectMeta: metav1.ObjectMeta{Name: "help", Namespace: m.ns},
			Spec: chatv1alpha1.KnowledgeSourceSpec{MerchantRef: chatv1alpha1.LocalObjectReference{Name: "shop"},
				URL: merchantSite(t, m.ns) + "/"}})
		for _, o := range objects {
			if err := cluster.client.Create(t.Context(), o); err != nil {
				t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
			}
		}
	}

	servers := map[string]*fakeembed.Provider{"small": cluster.smallEmbed, "large": cluster.largeEmbed, "plain": cluster.plainEmbed}
	// sentTo returns the requests of each server that carry texts of the merchant of namespace ns.
	sentTo := func(ns string) map[string][]fakeembed.Recorded {
		out := map[string][]fakeembed.Recorded{}
		for name, s := range servers {
			for _, r := range s.Requests() {
				if slices.ContainsFunc(r.Input, func(text string) bool { return strings.Contains(text, ns) }) {
					out[name] = append(out[name], r)
				}
			}
		}
		return out
	}
	var names []string
	for _, m := range merchants {
		names = append(names, m.ns)
	}
	for _, m := range merchants {
		if m.provider == "" {
			continue
		}
		merchantID := m.ns + "-shop" // derived from namespace and name
		eventually(t, 60*time.Second, func() error {
			if n := countRows(t, `SELECT COUNT(*) FROM knowledge_vectors WHERE merchant_id = ?`, merchantID); n == 0 {
				return fmt.Errorf("no vectors of %s stored; its texts went to %v", m.ns, slices.Sorted(maps.Keys(sentTo(m.ns))))
			}
			return nil
		})
		sent := sentTo(m.ns)
		if len(sent[m.provider]) == 0 {
			t.Errorf("%s's vectors are stored, but its plan's provider was sent none of its texts, %v were", m.ns, slices.Sorted(maps.Keys(sent)))
		}
		for name, requests := range sent {
			for _, r := range requests {
				if name != m.provider || r.Model != m.model || r.Auth != m.auth {
					t.Errorf("%s's texts went to %s for model %q with %q; want model %q with %q on its plan's provider",
						m.ns, name, r.Model, r.Auth, m.model, m.auth)
				}
				if others := named(r.Input, names, m.ns); len(others) > 0 {
					t.Errorf("a request of %s's texts carried %s's too", m.ns, others)
				}
			}
		}
	}

	// The plain merchant's items are stored, and its turn of the embedder has passed: the embedder gives merchants
	// turns in the order their knowledge changed, and a change of another merchant's made after has been embedded.
	const plain = "e2e-embed-plain-shop"
	eventually(t, 60*time.Second, func() error {
		if n := countRows(t, `SELECT COUNT(*) FROM knowledge WHERE merchant_id = ?`, plain); n == 0 {
			return fmt.Errorf("no knowledge of %s stored yet", plain)
		}
		return nil
	})
	const later = "e2e-embed-small-later"
	if err := cluster.client.Create(t.Context(), &chatv1alpha1.KnowledgeSource{ObjectMeta: metav1.ObjectMeta{Name: "later", Namespace: "e2e-embed-small"},
		Spec: chatv1alpha1.KnowledgeSourceSpec{MerchantRef: chatv1alpha1.LocalObjectReference{Name: "shop"},
			URL: merchantSite(t, later) + "/"}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, func() error {
		if len(sentTo(later)["small"]) == 0 {
			return fmt.Errorf("the small merchant's later source is not embedded yet")
		}
		return nil
	})
	if sent := sentTo("e2e-embed-plain"); len(sent) > 0 {
		t.Errorf("the knowledge of a merchant whose provider has no embedding model was sent to %v", slices.Sorted(maps.Keys(sent)))
	}
	if n := countRows(t, `SELECT COUNT(*) FROM knowledge_vectors WHERE merchant_id = ?`, plain); n != 0 {
		t.Errorf("%d vectors stored for a merchant whose provider has no embedding model", n)
	}
}

// merchantSite serves a merchant's help centre, a start page and a page linked from it, each naming the merchant's
// namespace ns; closed when the test ends.
func merchantSite(t *testing.T, ns string) string {
	t.Helper()
	pages := map[string]string{
		"/":         `<h1>Help for ` + ns + `</h1><p>Answers about shipping at ` + ns + `.</p><a href="/shipping">Shipping</a>`,
		"/shipping": `<h1>Shipping at ` + ns + `</h1><p>Orders from ` + ns + ` arrive in two to three working days.</p>`,
	}
	srv := httptest.NewServer(helpsite.Pages(ns, pages))
	t.Cleanup(srv.Close)
	return srv.URL
}

// named returns those of names but ns that one of texts holds.
func named(texts, names []string, ns string) []string {
	var out []string
	for _, other := range names {
		if other != ns && slices.ContainsFunc(texts, func(text string) bool { return strings.Contains(text, other) }) {
			out = append(out, other)
		}
	}
	return out
}
