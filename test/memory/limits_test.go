//go:build integration

// Package memory checks that a merchant at its plan's knowledge limits cannot push a real `parley runtime`
// process past the memory the operator requests for it by default.
package memory

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strconv"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/parley-dev/parley/internal/testutil/apiclient"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/internal/contract"
	"github.com/parley-dev/parley/internal/credentials"
	"github.com/parley-dev/parley/internal/render"
	"github.com/parley-dev/parley/internal/testutil/bundletest"
	"github.com/parley-dev/parley/internal/testutil/runtimeproc"
	"github.com/parley-dev/parley/internal/testutil/synthkb"
	"github.com/parley-dev/parley/runtime/assistant"
	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/sqlite"
	"github.com/parley-dev/parley/runtime/tenant"
)

// The pro plan of the chart and the samples: 1,000 items, and the default knowledgeCharacters.
const (
	planItems      = 1000
	planCharacters = 2_000_000
)

// TestMerchantAtItsLimitsStaysWithinTheMemoryRequest fills one merchant's knowledge base to its plan's limits,
// runs `parley runtime` as the operator renders it for a ChatRuntime with the default resources, chats, changes
// the knowledge so that the old and the new index live side by side while the new one is built, chats again,
// and checks the process's peak resident memory against the default memory request.
func TestMerchantAtItsLimitsStaysWithinTheMemoryRequest(t *testing.T) {
	rt := &chatv1alpha1.ChatRuntime{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "parley-system"}}
	d := render.RuntimeDeployment(rt, "parley:test")
	request := (*d.Spec.Template.Spec.Containers[0].Resources.Requests)[corev1.ResourceMemory]
	if request.IsZero() {
		t.Fatal("the operator renders no default memory request for the runtime")
	}

	dir := t.TempDir()
	dbPath := filepath.Join(dir, "parley.db")
	key := writeBundle(t, filepath.Join(dir, "tenants"))
	ids := fillKnowledge(t, dbPath)

	bin := runtimeproc.Build(t)
	p := runtimeproc.Start(t, bin, nil, "--tenants-dir="+filepath.Join(dir, "tenants"), "--sqlite-path="+dbPath,
		"--log-level=warn", contract.Arg(contract.FlagIndexCacheBytes, strconv.FormatInt(render.IndexCacheBytes(rt), 10)))
	g := synthkb.New(99)
	for range 20 {
		ask(t, p.URL, key, g.Question())
	}
	first := p.PeakRSS(t)

	// A knowledge write through another process (a second replica, as far as this one knows): the runtime
	// notices the new revision and builds the new index while the old one answers.
	st, err := sqlite.Open(t.Context(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	old, err := st.GetKnowledge(t.Context(), "big", ids[0])
	if err != nil {
		t.Fatal(err)
	}
	old.Content = "Zyzzogeton. " + old.Content[12:] // as many characters as before
	svc, m := knowledgeService(t, st)
	if _, err := svc.UpdateKnowledge(t.Context(), m, old, old); err != nil {
		t.Fatal(err)
	}
	_ = st.Close()
	deadline := time.Now().Add(time.Minute)
	for !cites(ask(t, p.URL, key, "Tell me about zyzzogeton"), ids[0]) {
		if time.Now().After(deadline) {
			t.Fatal("the runtime never answered from the changed knowledge")
		}
		time.Sleep(100 * time.Millisecond)
	}
	for range 20 {
		ask(t, p.URL, key, g.Question())
	}

	peak := p.PeakRSS(t)
	t.Logf("peak RSS %.1f MiB (%.1f MiB before the rebuild) with %d items of %d characters in all; memory request %s, index cache %d MiB",
		float64(peak)/(1<<20), float64(first)/(1<<20), planItems, planCharacters, request.String(), render.IndexCacheBytes(rt)>>20)
	if peak > request.Value() {
		t.Errorf("peak RSS %.1f MiB is past the default memory request %s", float64(peak)/(1<<20), request.String())
	}
}

// writeBundle writes the bundle of merchant "big" on the pro plan and returns its secret key.
func writeBundle(t *testing.T, dir string) string {
	t.Helper()
	key, err := credentials.NewAPIKey(credentials.SecretPrefix)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := credentials.Describe(key)
	if err != nil {
		t.Fatal(err)
	}
	bundletest.WriteFile(t, filepath.Join(dir, "big.json"), &tenant.Bundle{APIVersion: tenant.APIVersion, MerchantID: "big",
		DisplayName: "Big", Plan: proPlan(), APIKeys: []tenant.APIKey{{ID: desc.ID, Type: tenant.KeySecret, SHA256: desc.SHA256}}})
	return key
}

// proPlan is merchant "big"'s plan: the pro plan's knowledge limits.
func proPlan() tenant.Plan {
	return tenant.Plan{Name: "pro", RequestsPerSecond: 1000, Burst: 1000, APIAccess: true,
		KnowledgeItems: planItems, KnowledgeCharacters: planCharacters}
}

// knowledgeService is a chat service over st, as a replica of the runtime would write "big"'s knowledge, and the
// merchant on its plan.
func knowledgeService(t *testing.T, st store.Store) (*chat.Service, *tenant.Bundle) {
	t.Helper()
	svc, err := chat.New(chat.Config{Store: st, Responder: assistant.Retrieval{}})
	if err != nil {
		t.Fatal(err)
	}
	return svc, &tenant.Bundle{MerchantID: "big", Plan: proPlan()}
}

// fillKnowledge writes planItems items holding planCharacters characters in all, within the plan's limits as
// the runtime checks them, and returns their IDs.
func fillKnowledge(t *testing.T, path string) []string {
	t.Helper()
	st, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	svc, m := knowledgeService(t, st)
	g := synthkb.New(7)
	ids := make([]string, planItems)
	total := 0
	for i := range planItems {
		it := g.Item(planCharacters / planItems)
		// Each item holds exactly its share of the characters, title included.
		it.Content = it.Content[:planCharacters/planItems-utf8.RuneCountInString(it.Title)]
		k, err := svc.CreateKnowledge(t.Context(), m, store.Knowledge{Title: it.Title, Content: it.Content, Tags: it.Tags})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = k.ID
		total += utf8.RuneCountInString(it.Title) + utf8.RuneCountInString(it.Content)
	}
	if total != planCharacters {
		t.Fatalf("the knowledge holds %d characters, want the plan's %d", total, planCharacters)
	}
	return ids
}

// answer is what the test reads of POST /api/v1/chat's answer.
type answer struct {
	Sources []struct {
		KnowledgeID string `json:"knowledge_id"`
	} `json:"sources"`
}

// ask asks the merchant a question with its secret key.
func ask(t *testing.T, base, key, question string) answer {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"message": question})
	resp := apiclient.Chat(t, base, key, string(body))
	var a answer
	if err := json.Unmarshal([]byte(resp.Body), &a); err != nil || resp.Status != http.StatusOK {
		t.Fatalf("chat: %d, %v", resp.Status, err)
	}
	return a
}

// cites reports whether the answer cites the item id.
func cites(a answer, id string) bool {
	for _, s := range a.Sources {
		if s.KnowledgeID == id {
			return true
		}
	}
	return false
}
