package server

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/tenant"
	"github.com/parley-dev/parley/runtime/webhook"
)

// hookReceiver is a merchant's endpoint: it verifies each delivery with the Standard Webhooks library and keeps
// what it got.
type hookReceiver struct {
	t      *testing.T
	secret string
	url    string
	mu     sync.Mutex
	got    []map[string]any
	ids    []string
}

func newHookReceiver(t *testing.T) *hookReceiver {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	r := &hookReceiver{t: t, secret: "whsec_" + base64.StdEncoding.EncodeToString(key)}
	wh, err := standardwebhooks.NewWebhook(r.secret)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		if err := wh.Verify(body, req.Header); err != nil {
			t.Errorf("delivery does not verify: %v", err)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var event map[string]any
		if err := json.Unmarshal(body, &event); err != nil {
			t.Errorf("payload: %v", err)
		}
		r.mu.Lock()
		r.got = append(r.got, event)
		r.ids = append(r.ids, req.Header.Get("webhook-id"))
		r.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL + "/hooks"
	return r
}

// wait returns the first n events received, failing after a few seconds.
func (r *hookReceiver) wait(n int) ([]map[string]any, []string) {
	r.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		r.mu.Lock()
		got, ids := append([]map[string]any(nil), r.got...), append([]string(nil), r.ids...)
		r.mu.Unlock()
		if len(got) >= n {
			return got, ids
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("%d events received, want %d", len(got), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// webhookEnv is an env whose merchant alpha is on a plan with webhooks, subscribed with one endpoint, and whose
// runtime runs a dispatcher when run is true.
func webhookEnv(t *testing.T, run bool) (*env, *hookReceiver) {
	var d *webhook.Dispatcher
	e := newEnv(t, func(c *envConfig) { c.chat.Notify = func() { d.Notify() } })
	rcv := newHookReceiver(t)
	e.addMerchant("alpha", func(b *tenant.Bundle) {
		b.Plan.Webhooks = true
		b.Webhooks = []tenant.Webhook{{ID: "crm", URL: rcv.url, SigningSecrets: []string{rcv.secret},
			Events: []tenant.Event{tenant.EventConversationCreated, tenant.EventLeadCreated, tenant.EventLeadUpdated}}}
	})
	var err error
	d, err = webhook.New(webhook.Config{Outbox: chat.Outbox{Store: e.store}, Tenants: e.tenants, Registry: prometheus.NewRegistry(),
		Logger: slog.New(slog.DiscardHandler), AllowPrivate: true, Poll: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if run {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); _ = d.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
	}
	return e, rcv
}

func TestWebhooksDeliverChatEvents(t *testing.T) {
	e, rcv := webhookEnv(t, true)
	res := e.chatFrom("alpha", "v1", `{"message": "Please email me: ana@example.com"}`)
	if res.status != http.StatusOK {
		t.Fatalf("chat: %d %s", res.status, res.body)
	}
	conversationID := res.json(t)["conversation_id"]
	got, ids := rcv.wait(2)
	types := map[string]map[string]any{}
	for i, ev := range got {
		types[ev["type"].(string)] = ev
		if ev["id"] != ids[i] || ev["merchant_id"] != "alpha" {
			t.Errorf("event %v delivered with webhook-id %s", ev, ids[i])
		}
	}
	conv, lead := types["conversation.created"], types["lead.created"]
	if conv == nil || lead == nil {
		t.Fatalf("events %v", got)
	}
	if d := conv["data"].(map[string]any); d["conversation_id"] != conversationID || d["visitor_id"] != "v1" {
		t.Errorf("conversation.created data %v", d)
	}
	if d := lead["data"].(map[string]any); d["email"] != "ana@example.com" || d["conversation_id"] != conversationID {
		t.Errorf("lead.created data %v", d)
	}

	// The contact form completes the lead: lead.updated.
	form := e.leadForm("alpha", "v1", `{"name": "Ana", "consent": true, "email": "ana@example.com", "conversation_id": "`+conversationID.(string)+`"}`)
	if form.status != http.StatusOK {
		t.Fatalf("form: %d %s", form.status, form.body)
	}
	got, _ = rcv.wait(3)
	if ev := got[2]; ev["type"] != "lead.updated" || ev["data"].(map[string]any)["name"] != "Ana" {
		t.Errorf("third event %v", ev)
	}

	owner := map[string]string{"Authorization": e.ownerOf("alpha")}
	var list map[string]any
	deadline := time.Now().Add(5 * time.Second)
	for {
		list = e.do(http.MethodGet, "/api/v1/webhooks/deliveries?status=succeeded", owner, "").json(t)
		if len(list["data"].([]any)) == 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	data := list["data"].([]any)
	if len(data) != 3 {
		t.Fatalf("succeeded deliveries %v", list)
	}
	first := data[0].(map[string]any)
	if first["attempts"] != 1.0 || first["last_status_code"] != 200.0 || first["webhook_id"] != "crm" {
		t.Errorf("delivery %v", first)
	}
	id := first["id"].(string)
	detail := e.do(http.MethodGet, "/api/v1/webhooks/deliveries/"+id, owner, "").json(t)
	if log := detail["attempt_log"].([]any); len(log) != 1 || detail["payload"].(map[string]any)["id"] != first["event_id"] {
		t.Errorf("delivery detail %v", detail)
	}

	// A replay sends the same event again, with the same webhook-id.
	replay := e.do(http.MethodPost, "/api/v1/webhooks/deliveries/"+id+"/replay", owner, "")
	if replay.status != http.StatusAccepted || replay.json(t)["status"] != "pending" {
		t.Fatalf("replay: %d %s", replay.status, replay.body)
	}
	_, ids = rcv.wait(4)
	if ids[3] != first["event_id"] {
		t.Errorf("replayed webhook-id %s, want %s", ids[3], first["event_id"])
	}

	// Beta can neither see nor replay alpha's deliveries.
	beta := map[string]string{"Authorization": e.ownerOf("beta")}
	if res := e.do(http.MethodGet, "/api/v1/webhooks/deliveries", beta, ""); len(res.json(t)["data"].([]any)) != 0 {
		t.Errorf("beta lists alpha's deliveries: %s", res.body)
	}
	if res := e.do(http.MethodGet, "/api/v1/webhooks/deliveries/"+id, beta, ""); res.status != http.StatusNotFound {
		t.Errorf("beta gets alpha's delivery: %d", res.status)
	}
}

func TestReplayErrors(t *testing.T) {
	e, _ := webhookEnv(t, false) // no dispatcher: deliveries stay pending
	e.chatFrom("alpha", "v1", `{"message": "hello"}`)
	owner := map[string]string{"Authorization": e.ownerOf("alpha")}
	list := e.do(http.MethodGet, "/api/v1/webhooks/deliveries", owner, "").json(t)["data"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["status"] != "pending" || list[0].(map[string]any)["next_attempt_at"] == nil {
		t.Fatalf("deliveries %v", list)
	}
	id := list[0].(map[string]any)["id"].(string)
	if res := e.do(http.MethodPost, "/api/v1/webhooks/deliveries/"+id+"/replay", owner, ""); res.status != http.StatusConflict ||
		res.errorCode(t) != codeDeliveryPending {
		t.Errorf("replaying a pending delivery: %d %s", res.status, res.body)
	}
	for _, bad := range []string{"evt_nope-crm", "nope"} {
		if res := e.do(http.MethodPost, "/api/v1/webhooks/deliveries/"+bad+"/replay", owner, ""); res.status != http.StatusNotFound {
			t.Errorf("replaying %s: %d %s", bad, res.status, res.body)
		}
	}
	for _, q := range []string{"?status=lost", "?event_type=order.created", "?cursor=bogus", "?limit=101"} {
		if res := e.do(http.MethodGet, "/api/v1/webhooks/deliveries"+q, owner, ""); res.status != http.StatusBadRequest {
			t.Errorf("%s: %d %s", q, res.status, res.body)
		}
	}
	if res := e.do(http.MethodGet, "/api/v1/webhooks/deliveries", nil, ""); res.status != http.StatusUnauthorized {
		t.Errorf("without a token: %d", res.status)
	}
}

// TestNoWebhooksWithoutThePlan: a merchant whose plan lacks webhooks emits nothing, even with endpoints listed.
func TestNoWebhooksWithoutThePlan(t *testing.T) {
	e, _ := webhookEnv(t, true)
	b := e.bundles["alpha"]
	b.Plan.Webhooks = false
	e.publish(b)
	e.chatFrom("alpha", "v1", `{"message": "mail me at ana@example.com"}`)
	owner := map[string]string{"Authorization": e.ownerOf("alpha")}
	if list := e.do(http.MethodGet, "/api/v1/webhooks/deliveries", owner, "").json(t)["data"].([]any); len(list) != 0 {
		t.Errorf("deliveries on a plan without webhooks: %v", list)
	}
	if res := e.do(http.MethodPost, "/api/v1/webhooks/deliveries/evt_x-crm/replay", owner, ""); res.status != http.StatusForbidden ||
		res.errorCode(t) != codeWebhooksNotInPlan {
		t.Errorf("replay without the plan: %d %s", res.status, res.body)
	}
}

// TestSendTestEvent: an owner sends a signed webhook.test event to one endpoint, whatever it subscribes to; it
// is logged with its attempts and replayable, and no other merchant can send one to it.
func TestSendTestEvent(t *testing.T) {
	e, rcv := webhookEnv(t, true)
	b := e.bundles["alpha"]
	b.Webhooks[0].Events = []tenant.Event{tenant.EventLeadCreated} // not subscribed to anything a test sends
	e.publish(b)
	owner := map[string]string{"Authorization": e.ownerOf("alpha")}

	res := e.do(http.MethodPost, "/api/v1/webhooks/endpoints/crm/test", owner, "")
	if res.status != http.StatusAccepted || res.json(t)["event_type"] != "webhook.test" || res.json(t)["webhook_id"] != "crm" {
		t.Fatalf("test event: %d %s", res.status, res.body)
	}
	id, eventID := res.json(t)["id"].(string), res.json(t)["event_id"].(string)
	got, ids := rcv.wait(1)
	if got[0]["type"] != "webhook.test" || ids[0] != eventID || got[0]["merchant_id"] != "alpha" ||
		got[0]["data"].(map[string]any)["webhook_id"] != "crm" {
		t.Errorf("received %v with webhook-id %s", got[0], ids[0])
	}
	var detail map[string]any
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if detail = e.do(http.MethodGet, "/api/v1/webhooks/deliveries/"+id, owner, "").json(t); detail["status"] == "succeeded" {
			break
		}
	}
	if detail["status"] != "succeeded" || len(detail["attempt_log"].([]any)) != 1 {
		t.Errorf("the test delivery: %v", detail)
	}
	if list := e.do(http.MethodGet, "/api/v1/webhooks/deliveries?event_type=webhook.test", owner, "").json(t)["data"].([]any); len(list) != 1 {
		t.Errorf("deliveries of webhook.test: %v", list)
	}
	if r := e.do(http.MethodPost, "/api/v1/webhooks/deliveries/"+id+"/replay", owner, ""); r.status != http.StatusAccepted {
		t.Fatalf("replaying the test: %d %s", r.status, r.body)
	}
	if _, ids = rcv.wait(2); ids[1] != eventID {
		t.Errorf("the replayed test's webhook-id %s, want %s", ids[1], eventID)
	}

	bb := e.bundles["beta"]
	bb.Plan.Webhooks = true
	e.publish(bb)
	beta := map[string]string{"Authorization": e.ownerOf("beta")}
	for _, tc := range []struct {
		name   string
		caller map[string]string
		path   string
		status int
		code   string
	}{
		{"another merchant's webhook", beta, "/api/v1/webhooks/endpoints/crm/test", http.StatusNotFound, codeNotFound},
		{"no such webhook", owner, "/api/v1/webhooks/endpoints/nope/test", http.StatusNotFound, codeNotFound},
		{"no token", nil, "/api/v1/webhooks/endpoints/crm/test", http.StatusUnauthorized, codeUnauthorized},
	} {
		if r := e.do(http.MethodPost, tc.path, tc.caller, ""); r.status != tc.status || r.errorCode(t) != tc.code {
			t.Errorf("%s: %d %s", tc.name, r.status, r.body)
		}
	}
	if _, ids = rcv.wait(2); len(ids) != 2 {
		t.Errorf("%d deliveries received, want 2", len(ids))
	}

	b.Plan.Webhooks = false
	e.publish(b)
	if r := e.do(http.MethodPost, "/api/v1/webhooks/endpoints/crm/test", owner, ""); r.status != http.StatusForbidden || r.errorCode(t) != codeWebhooksNotInPlan {
		t.Errorf("without the plan: %d %s", r.status, r.body)
	}
}
