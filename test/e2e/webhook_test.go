//go:build integration

package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/parley-dev/parley/internal/testutil/apiclient"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
)

// events is a webhook receiver's record of the verified events it got.
type events struct {
	mu     sync.Mutex
	secret string
	got    []string // "type conversation_id"
	bad    []error
}

func (e *events) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	e.mu.Lock()
	defer e.mu.Unlock()
	wh, err := standardwebhooks.NewWebhook(e.secret)
	if err == nil {
		err = wh.Verify(body, r.Header)
	}
	var ev struct {
		Type string         `json:"type"`
		Data map[string]any `json:"data"`
	}
	if err == nil {
		err = json.Unmarshal(body, &ev)
	}
	if err != nil {
		e.bad = append(e.bad, err)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	e.got = append(e.got, fmt.Sprintf("%s %v", ev.Type, ev.Data["conversation_id"]))
	w.WriteHeader(http.StatusNoContent)
}

func (e *events) has(want string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, g := range e.got {
		if g == want {
			return true
		}
	}
	return false
}

// chatIn sends a message in a conversation and returns the status.
func chatIn(t *testing.T, key, conversationID, message string) int {
	t.Helper()
	return apiclient.Chat(t, cluster.runtimeURL, key,
		fmt.Sprintf(`{"message": %q, "conversation_id": %q}`, message, conversationID)).Status
}

// A Webhook of an enterprise merchant receives its events, signed with the secret from the Webhook's Secret;
// moving the merchant to a plan without webhooks stops them.
func TestWebhookFollowsThePlan(t *testing.T) {
	ctx, c := t.Context(), cluster.client
	for name, hooks := range map[string]bool{"e2e-enterprise": true, "e2e-starter": false} {
		plan := &chatv1alpha1.Plan{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: chatv1alpha1.PlanSpec{RequestsPerSecond: 100,
			Features: chatv1alpha1.PlanFeatures{APIAccess: ptr.To(true), Webhooks: hooks}}}
		if err := c.Create(ctx, plan); err != nil {
			t.Fatal(err)
		}
	}
	rcv := &events{}
	srv := httptest.NewServer(rcv)
	t.Cleanup(srv.Close)
	key := tenant(t, "hooks", "e2e-enterprise")
	hook := &chatv1alpha1.Webhook{ObjectMeta: metav1.ObjectMeta{Name: "crm", Namespace: "hooks"},
		Spec: chatv1alpha1.WebhookSpec{MerchantRef: chatv1alpha1.LocalObjectReference{Name: "shop"}, URL: srv.URL + "/events",
			Events: []chatv1alpha1.WebhookEvent{chatv1alpha1.EventConversationCreated, chatv1alpha1.EventLeadCreated}}}
	if err := c.Create(ctx, hook); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() error {
		var s corev1.Secret
		if err := c.Get(ctx, client.ObjectKey{Namespace: "hooks", Name: "crm-signing-secret"}, &s); err != nil {
			return err
		}
		rcv.mu.Lock()
		rcv.secret = string(s.Data[chatv1alpha1.DefaultSigningSecretKey])
		rcv.mu.Unlock()
		return nil
	})

	// Once the bundle carries the webhook, a new conversation and a lead arrive.
	n := 0
	eventually(t, 30*time.Second, func() error {
		n++
		id := fmt.Sprintf("ent-%d", n)
		// The key reaches the runtime with the merchant's bundle, shortly after its Secret.
		if status := chatIn(t, key, id, "I am ana@example.com, do you ship to Oslo?"); status != http.StatusOK {
			return fmt.Errorf("chat in %s: %d", id, status)
		}
		deadline := time.Now().Add(2 * time.Second)
		for time.Now().Before(deadline) {
			if rcv.has("conversation.created "+id) && rcv.has("lead.created "+id) {
				return nil
			}
			time.Sleep(20 * time.Millisecond)
		}
		return fmt.Errorf("no events for %s; received %v, refused %v", id, rcv.got, rcv.bad)
	})

	var m chatv1alpha1.Merchant
	if err := c.Get(ctx, client.ObjectKey{Namespace: "hooks", Name: "shop"}, &m); err != nil {
		t.Fatal(err)
	}
	// A merge patch of the spec alone: the operator patches the Merchant's status meanwhile, and an update of
	// the object as read would fail on its resourceVersion.
	before := m.DeepCopy()
	m.Spec.PlanRef.Name = "e2e-starter"
	if err := c.Patch(ctx, &m, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() error {
		var w chatv1alpha1.Webhook
		if err := c.Get(ctx, client.ObjectKey{Namespace: "hooks", Name: "crm"}, &w); err != nil {
			return err
		}
		if cond := apimeta.FindStatusCondition(w.Status.Conditions, "Ready"); cond == nil || cond.Reason != chatv1alpha1.ReasonPlanDoesNotIncludeWebhooks {
			return fmt.Errorf("webhook condition %+v", cond)
		}
		return nil
	})
	time.Sleep(liveWithin) // the runtime has the new bundle
	if status := chatIn(t, key, "starter-1", "I am bo@example.com"); status != http.StatusOK {
		t.Fatalf("chat on the starter plan: %d", status)
	}
	time.Sleep(2 * time.Second)
	if rcv.has("conversation.created starter-1") || rcv.has("lead.created starter-1") {
		t.Errorf("events delivered after the move to a plan without webhooks: %v", rcv.got)
	}
	if len(rcv.bad) > 0 {
		t.Errorf("deliveries that did not verify: %v", rcv.bad)
	}
}
