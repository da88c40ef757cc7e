//go:build integration

// Package keyowner tries, as a tenant would, to take over another merchant's widget with a copy of the publishable
// key that merchant created in its dashboard, on a real API server (envtest), the operator and a `parley runtime`
// process watching it, on SQLite and on PostgreSQL. Run with `make test`.
package keyowner

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/controllers"
	"github.com/parley-dev/parley/internal/contract"
	"github.com/parley-dev/parley/internal/testutil/apiclient"
	"github.com/parley-dev/parley/internal/testutil/operatortest"
	"github.com/parley-dev/parley/internal/testutil/pgtest"
	"github.com/parley-dev/parley/internal/testutil/runtimeproc"
	"github.com/parley-dev/parley/runtime/assistant"
	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/postgres"
	"github.com/parley-dev/parley/runtime/store/sqlite"
	"github.com/parley-dev/parley/runtime/tenant"
)

const (
	operatorNS    = "parley-system"
	victimOrigin  = "https://victim.example"
	grantLabel    = "keyowner.parley.dev/tenant"
	intruderTitle = "Intruder's assistant"
)

// TestCopiedDashboardKeyStaysWithItsMerchant: the victim creates a publishable key in its dashboard and embeds it.
// The intruder copies it from the victim's page into a Secret of its own namespace and declares it as a
// bring-your-own APIKey of its own Merchant, with the victim's origin allowed. The key keeps answering for the
// victim, the conversations it starts are the victim's, the intruder's APIKey is Ready=False with reason
// KeyInUse and a message naming no other tenant, and the victim's revoke refuses the key for everyone.
func TestCopiedDashboardKeyStaysWithItsMerchant(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run `make test`, or KUBEBUILDER_ASSETS=$(hack/setup-envtest.sh) go test ./test/keyowner/")
	}
	logf.SetLogger(logr.Discard()) // the test reads objects and answers, not the operator's logs
	bin := runtimeproc.Build(t)
	for _, storage := range []chatv1alpha1.StorageType{chatv1alpha1.StorageSQLite, chatv1alpha1.StoragePostgres} {
		t.Run(string(storage), func(t *testing.T) { intrude(t, bin, storage) })
	}
}

func intrude(t *testing.T, bin string, storage chatv1alpha1.StorageType) {
	ctx := t.Context()
	w := startWorld(t, bin, storage)
	c := w.client

	plan := &chatv1alpha1.Plan{ObjectMeta: metav1.ObjectMeta{Name: "keyowner-" + string(storage)},
		Spec: chatv1alpha1.PlanSpec{RequestsPerSecond: 100, Burst: ptr.To[int32](100),
			AllowedNamespaces: &metav1.LabelSelector{MatchLabels: map[string]string{grantLabel: "true"}}}}
	create(t, c, plan)
	for _, ns := range []string{"victim", "intruder"} {
		create(t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{grantLabel: "true"}}})
	}
	create(t, c, &chatv1alpha1.Merchant{ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: "victim"},
		Spec: chatv1alpha1.MerchantSpec{DisplayName: "Victim", PlanRef: chatv1alpha1.LocalObjectReference{Name: plan.Name},
			AllowedOrigins: []string{victimOrigin}, Widget: chatv1alpha1.WidgetSpec{Title: "Victim's assistant"}}})
	create(t, c, &chatv1alpha1.Merchant{ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: "intruder"},
		Spec: chatv1alpha1.MerchantSpec{DisplayName: "Intruder", PlanRef: chatv1alpha1.LocalObjectReference{Name: plan.Name},
			AllowedOrigins: []string{victimOrigin, "https://intruder.example"}, Widget: chatv1alpha1.WidgetSpec{Title: intruderTitle}}})
	victimID, victim := w.served(t, "victim")
	intruderID, _ := w.served(t, "intruder")

	// The victim's owner creates a publishable key in the dashboard, through the dashboard's use case, and embeds it.
	raw, created, err := w.chat.CreateAPIKey(ctx, w.bundles(t), victim, tenant.KeyPublishable)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the victim's new key answers for the victim", func() error { return w.answersFor(t, raw, victimID) })

	// The intruder copies it from the victim's page and declares it as its own.
	create(t, c, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "copied", Namespace: "intruder",
		Labels: map[string]string{chatv1alpha1.SecretLabel: chatv1alpha1.SecretLabelAPIKey}},
		StringData: map[string]string{chatv1alpha1.DefaultAPIKeySecretKey: raw}})
	create(t, c, &chatv1alpha1.APIKey{ObjectMeta: metav1.ObjectMeta{Name: "widget", Namespace: "intruder"},
		Spec: chatv1alpha1.APIKeySpec{MerchantRef: chatv1alpha1.LocalObjectReference{Name: "shop"}, Type: chatv1alpha1.APIKeyPublishable,
			ExistingSecretRef: &chatv1alpha1.SecretKeySelector{Name: "copied"}}})

	// The runtime has served the intruder's bundle with the copied key once the intruder's APIKey says so; until
	// then, and after, the victim's page keeps its own widget.
	eventually(t, "the intruder's APIKey is Ready=False, KeyInUse", func() error {
		if err := w.answersFor(t, raw, victimID); err != nil {
			t.Fatalf("the copied key was taken over: %v", err)
		}
		var k chatv1alpha1.APIKey
		if err := c.Get(ctx, client.ObjectKey{Namespace: "intruder", Name: "widget"}, &k); err != nil {
			return err
		}
		cond := meta.FindStatusCondition(k.Status.Conditions, chatv1alpha1.ConditionReady)
		if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != chatv1alpha1.ReasonKeyInUse {
			return fmt.Errorf("Ready condition %+v", cond)
		}
		if strings.Contains(cond.Message, victimID) || strings.Contains(strings.ToLower(cond.Message), "victim") {
			t.Errorf("the condition names the other tenant: %s", cond.Message)
		}
		return nil
	})
	if err := w.answersFor(t, raw, victimID); err != nil {
		t.Fatalf("with the copied key declared by the intruder: %v", err)
	}
	conv := w.chatFromVictimsPage(t, raw)
	if _, _, err := w.store.GetConversation(ctx, victimID, conv); err != nil {
		t.Errorf("the conversation %s started with the key is not the victim's: %v", conv, err)
	}
	if list, _, err := w.store.ListConversations(ctx, intruderID, store.ConversationFilter{}); err != nil || len(list) != 0 {
		t.Errorf("the intruder has conversations %+v (%v), want none", list, err)
	}

	// The victim revokes the key: it answers for no one, and its hash stays the victim's.
	if err := w.chat.RevokeAPIKey(ctx, victim, created.ID); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the revoked key is refused", func() error {
		for _, origin := range []string{victimOrigin, "https://intruder.example"} {
			if r := w.widget(t, raw, origin); r.Status != http.StatusUnauthorized {
				return fmt.Errorf("from %s the revoked key answers %d: %s", origin, r.Status, r.Body)
			}
		}
		return nil
	})
	var k chatv1alpha1.APIKey
	if err := c.Get(ctx, client.ObjectKey{Namespace: "intruder", Name: "widget"}, &k); err != nil {
		t.Fatal(err)
	}
	if cond := meta.FindStatusCondition(k.Status.Conditions, chatv1alpha1.ConditionReady); cond == nil || cond.Reason != chatv1alpha1.ReasonKeyInUse {
		t.Errorf("after the victim's revoke the intruder's APIKey is %+v, want KeyInUse still", cond)
	}
}

// world is an API server with the operator, a runtime process watching it, and the runtime's store, opened by the
// test as a second replica of the dashboard would.
type world struct {
	client  client.Client
	chat    *chat.Service
	store   store.Store
	runtime string // the runtime's base URL
}

func startWorld(t *testing.T, bin string, storage chatv1alpha1.StorageType) *world {
	ctx := t.Context()
	cluster := operatortest.Start(t)
	w := &world{client: cluster.Client}
	create(t, w.client, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNS}})
	rt := &chatv1alpha1.ChatRuntime{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: operatorNS},
		Spec: chatv1alpha1.ChatRuntimeSpec{PublicURL: "https://chat.example.com", Storage: chatv1alpha1.StorageSpec{Type: storage},
			AllowedNamespaces: &metav1.LabelSelector{MatchLabels: map[string]string{grantLabel: "true"}}}}
	local := map[string]string{}
	var err error
	switch storage {
	case chatv1alpha1.StoragePostgres:
		pg, err := pgtest.Start(ctx)
		if err != nil {
			t.Fatalf("starting PostgreSQL: %v", err)
		}
		t.Cleanup(func() { _ = pg.Stop() })
		url := pg.Database(t)
		create(t, w.client, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "database", Namespace: operatorNS},
			StringData: map[string]string{"url": url}})
		rt.Spec.Storage.Postgres = &chatv1alpha1.PostgresStorage{URLSecretRef: chatv1alpha1.SecretKeySelector{Name: "database"}}
		if w.store, err = postgres.Open(ctx, url); err != nil {
			t.Fatal(err)
		}
	default:
		path := filepath.Join(t.TempDir(), "parley.db")
		local[contract.FlagSQLitePath] = path
		if w.store, err = sqlite.Open(ctx, path); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = w.store.Close() })
	if w.chat, err = chat.New(chat.Config{Store: w.store, Responder: assistant.Retrieval{}}); err != nil {
		t.Fatal(err)
	}
	create(t, w.client, rt)

	// The operator reads the runtime's usage and keys in use from the runtime's metrics listener, here on a free
	// loopback port rather than the Service a pod has, and often, so that the test sees them soon.
	metrics := runtimeproc.FreeAddress(t)
	cluster.RunOperator(t, controllers.Options{Namespace: operatorNS, RuntimeImage: "ghcr.io/parley-dev/parley:test", MetricsAddr: "0", ProbeAddr: "0",
		UsageInterval: 200 * time.Millisecond, UsageAddress: metrics, Registry: prometheus.NewRegistry(), Rebuildable: true})

	// The runtime runs with the arguments and environment the operator rendered, but for its addresses and files.
	local[contract.FlagListen], local[contract.FlagMetricsListen] = runtimeproc.FreeAddress(t), metrics
	w.runtime = cluster.RunRuntime(t, bin, rt, local).URL
	return w
}

// served waits until the Merchant "shop" of ns is published and returns its merchant ID and bundle.
func (w *world) served(t *testing.T, ns string) (string, *tenant.Bundle) {
	t.Helper()
	var m chatv1alpha1.Merchant
	eventually(t, "Merchant "+ns+"/shop is Ready", func() error {
		if err := w.client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "shop"}, &m); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(m.Status.Conditions, chatv1alpha1.ConditionReady) || m.Status.MerchantID == "" {
			return fmt.Errorf("status %+v", m.Status)
		}
		return nil
	})
	b, ok := w.bundles(t).Merchant(m.Status.MerchantID)
	if !ok {
		t.Fatalf("no tenant bundle of merchant %s", m.Status.MerchantID)
	}
	return m.Status.MerchantID, b
}

// bundles reads the tenant bundles the operator published into a registry, as the runtime holds them.
func (w *world) bundles(t *testing.T) *tenant.Registry {
	t.Helper()
	reg, err := tenant.NewRegistry(slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	var list corev1.SecretList
	if err := w.client.List(t.Context(), &list, client.InNamespace(operatorNS),
		client.MatchingLabels{chatv1alpha1.SecretLabel: chatv1alpha1.SecretLabelTenant}); err != nil {
		t.Fatal(err)
	}
	for _, s := range list.Items {
		if err := reg.Set(s.Name, s.Data[tenant.DataKey]); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

// widget asks for the widget's settings with a publishable key from a page of origin, as widget.js does.
func (w *world) widget(t *testing.T, key, origin string) apiclient.Response {
	t.Helper()
	r, err := apiclient.Get(t.Context(), w.runtime+"/api/v1/widget", map[string]string{"X-API-Key": key, "Origin": origin})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// answersFor checks that the widget on the victim's page, with key, shows merchant's settings.
func (w *world) answersFor(t *testing.T, key, merchant string) error {
	r := w.widget(t, key, victimOrigin)
	var settings struct {
		MerchantID string `json:"merchant_id"`
		Title      string `json:"title"`
	}
	if r.Status != http.StatusOK || json.Unmarshal([]byte(r.Body), &settings) != nil {
		return fmt.Errorf("the widget's settings answered %d: %s", r.Status, r.Body)
	}
	if settings.MerchantID != merchant || settings.Title == intruderTitle {
		return fmt.Errorf("the widget on the victim's page shows %s's settings (%q), want %s's", settings.MerchantID, settings.Title, merchant)
	}
	return nil
}

// chatFromVictimsPage sends a visitor's message from the victim's page and returns the conversation's ID.
func (w *world) chatFromVictimsPage(t *testing.T, key string) string {
	t.Helper()
	r, err := apiclient.Post(t.Context(), w.runtime+"/api/v1/chat",
		map[string]string{"X-API-Key": key, "Origin": victimOrigin, "X-Visitor-ID": "visitor-1"}, `{"message": "Do you ship to Norway?"}`)
	if err != nil {
		t.Fatal(err)
	}
	var answer struct {
		ConversationID string `json:"conversation_id"`
	}
	if r.Status != http.StatusOK || json.Unmarshal([]byte(r.Body), &answer) != nil || answer.ConversationID == "" {
		t.Fatalf("chat from the victim's page answered %d: %s", r.Status, r.Body)
	}
	return answer.ConversationID
}

func create(t *testing.T, c client.Client, o client.Object) { t.Helper(); operatortest.Create(t, c, o) }

// eventually retries check until it passes or 60 seconds have gone.
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	operatortest.Eventually(t, what, 60*time.Second, check)
}
