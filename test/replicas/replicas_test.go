//go:build integration

// Package replicas runs two `parley runtime` processes as replicas on one PostgreSQL and one Redis, each
// started by the test, and checks what they must share: the merchant's rate, conversations, the monthly ceiling,
// the abuse limits and webhook delivery, including when the replica holding deliveries is killed. Run with `make test`.
package replicas

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parley-dev/parley/internal/testutil/apiclient"

	"github.com/parley-dev/parley/internal/credentials"
	"github.com/parley-dev/parley/internal/dev/devidp"
	"github.com/parley-dev/parley/internal/testutil/bundletest"
	"github.com/parley-dev/parley/internal/testutil/hookreceiver"
	"github.com/parley-dev/parley/internal/testutil/pgtest"
	"github.com/parley-dev/parley/internal/testutil/redistest"
	"github.com/parley-dev/parley/internal/testutil/runtimeproc"
	"github.com/parley-dev/parley/runtime/store/postgres"
	"github.com/parley-dev/parley/runtime/tenant"
	"github.com/parley-dev/parley/runtime/webhook"
)

// pair is two replicas and what they share.
type pair struct {
	t        *testing.T
	bin      string
	env      []string
	args     []string
	a, b     *runtimeproc.Process
	store    *postgres.Store
	keys     map[string]string // merchant -> secret key
	pks      map[string]string // merchant -> publishable key, from https://<merchant>.example
	receiver *hookreceiver.Receiver
	// owner is a dashboard ID token of the merchants' owner, from the test's OIDC issuer.
	owner string
}

// audience is the client ID the replicas accept dashboard ID tokens for.
const audience = "parley-replicas"

func newPair(t *testing.T) *pair {
	pg, err := pgtest.Start(t.Context())
	if err != nil {
		t.Fatalf("starting PostgreSQL: %v", err)
	}
	t.Cleanup(func() { _ = pg.Stop() })
	url := pg.Database(t)
	redis := redistest.Start(t)
	p := &pair{t: t, bin: runtimeproc.Build(t), keys: map[string]string{}, pks: map[string]string{}, receiver: hookreceiver.Start(t)}
	idpMux := http.NewServeMux()
	idpServer := httptest.NewServer(idpMux)
	t.Cleanup(idpServer.Close)
	idp, err := devidp.New(idpServer.URL)
	if err != nil {
		t.Fatal(err)
	}
	idpMux.Handle("/", idp.Handler())
	if p.owner, err = idp.Token(audience, "owner", "owner@example.com", time.Hour); err != nil {
		t.Fatal(err)
	}

	tenants := filepath.Join(t.TempDir(), "tenants")
	if err := os.MkdirAll(tenants, 0o700); err != nil {
		t.Fatal(err)
	}
	p.addMerchant(tenants, "rate", tenant.Plan{RequestsPerSecond: 10, Burst: 10}, nil)
	p.addMerchant(tenants, "quota", tenant.Plan{RequestsPerSecond: 10000, Burst: 10000, MonthlyConversations: 20}, nil)
	p.addMerchant(tenants, "hooks", tenant.Plan{RequestsPerSecond: 10000, Burst: 10000, Webhooks: true},
		[]tenant.Webhook{{ID: "crm", URL: p.receiver.URL, SigningSecrets: []string{p.receiver.Secret},
			Events: []tenant.Event{tenant.EventConversationCreated, tenant.EventLeadCreated}}})
	p.addMerchant(tenants, "abuse", tenant.Plan{RequestsPerSecond: 10000, Burst: 10000, MonthlyConversations: 1000,
		ConversationsPerAddressPerHour: 8, ConversationsPerVisitorPerHour: 4}, nil)

	p.env = []string{"PARLEY_DATABASE_URL=" + url}
	p.args = []string{"--storage=postgres", "--tenants-dir=" + tenants, "--redis-address=" + redis.Addr,
		"--webhook-allow-private", "--oidc-issuer=" + idp.URL(), "--oidc-audience=" + audience,
		"--log-format=json", "--log-level=warn"}
	p.a = p.start()
	p.b = p.start()
	if p.store, err = postgres.Open(t.Context(), url); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.store.Close() })
	return p
}

func (p *pair) start() *runtimeproc.Process {
	return runtimeproc.Start(p.t, p.bin, p.env, p.args...)
}

func (p *pair) addMerchant(dir, id string, plan tenant.Plan, hooks []tenant.Webhook) {
	p.t.Helper()
	var keys []tenant.APIKey
	for _, k := range []struct {
		prefix string
		typ    tenant.KeyType
		into   map[string]string
	}{{credentials.SecretPrefix, tenant.KeySecret, p.keys}, {credentials.PublishablePrefix, tenant.KeyPublishable, p.pks}} {
		key, err := credentials.NewAPIKey(k.prefix)
		if err != nil {
			p.t.Fatal(err)
		}
		d, err := credentials.Describe(key)
		if err != nil {
			p.t.Fatal(err)
		}
		keys = append(keys, tenant.APIKey{ID: d.ID, Type: k.typ, SHA256: d.SHA256})
		k.into[id] = key
	}
	plan.Name, plan.APIAccess = id, true
	bundletest.WriteFile(p.t, filepath.Join(dir, id+".json"), &tenant.Bundle{APIVersion: tenant.APIVersion, MerchantID: id,
		DisplayName: id, Plan: plan, APIKeys: keys, Webhooks: hooks, AllowedOrigins: []string{"https://" + id + ".example"},
		Owners: []tenant.Owner{{Email: "owner@example.com"}}})
}

// chat sends a message to a replica and returns the status.
func (p *pair) chat(rt *runtimeproc.Process, merchant, body string) int {
	status, _ := p.post(rt, "/api/v1/chat", map[string]string{"X-API-Key": p.keys[merchant]}, body)
	return status
}

// post sends a JSON body to a replica and returns the status and the answer.
func (p *pair) post(rt *runtimeproc.Process, path string, headers map[string]string, body string) (int, string) {
	resp, err := apiclient.Post(context.Background(), rt.URL+path, headers, body)
	if err != nil {
		p.t.Error(err)
		return 0, ""
	}
	return resp.Status, resp.Body
}

func TestReplicas(t *testing.T) {
	p := newPair(t)
	t.Run("RateHoldsAcrossThePair", p.rateAcrossThePair)
	t.Run("ConversationMovesBetweenReplicas", p.conversationMoves)
	t.Run("KnowledgeReachesTheOtherReplica", p.knowledgeReachesOther)
	t.Run("MonthlyCeilingIsExact", p.monthlyCeiling)
	t.Run("AbuseLimitsHoldAcrossThePair", p.abuseLimits)
	t.Run("WebhooksDeliveredOnce", p.webhooksOnce)
	t.Run("WebhooksSurviveTheHolderDying", p.webhooksSurviveKill)
}

// rateAcrossThePair loads both replicas for a few seconds: together they let through the plan's 10 requests a
// second (after the burst of 10), within 10%.
func (p *pair) rateAcrossThePair(t *testing.T) {
	const perReplica = 4
	window := 4 * time.Second
	var ok, limited atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for _, rt := range []*runtimeproc.Process{p.a, p.b} {
		for range perReplica {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for time.Since(start) < window {
					switch p.chat(rt, "rate", `{"message": "hello"}`) {
					case http.StatusOK:
						ok.Add(1)
					case http.StatusTooManyRequests:
						limited.Add(1)
					default:
						t.Error("unexpected status")
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	elapsed := time.Since(start)
	want := 10 + 10*elapsed.Seconds()
	t.Logf("%d requests let through and %d refused in %s by the pair; the plan allows %.0f", ok.Load(), limited.Load(), elapsed, want)
	if got := float64(ok.Load()); got < 0.9*want || got > 1.1*want {
		t.Errorf("the pair let %v requests through; want %.0f within 10%%", got, want)
	}
	if limited.Load() == 0 {
		t.Error("nothing was refused: the load did not reach the limit")
	}
}

// conversationMoves starts a conversation on one replica and continues it on the other.
func (p *pair) conversationMoves(t *testing.T) {
	if s := p.chat(p.a, "quota", `{"message": "hello", "conversation_id": "moving"}`); s != http.StatusOK {
		t.Fatalf("on A: %d", s)
	}
	if s := p.chat(p.b, "quota", `{"message": "and the shipping?", "conversation_id": "moving"}`); s != http.StatusOK {
		t.Fatalf("on B: %d", s)
	}
	c, msgs, err := p.store.GetConversation(t.Context(), "quota", "moving")
	if err != nil || c.MessageCount != 4 || len(msgs) != 4 {
		t.Fatalf("conversation %+v with %d messages, %v; want one conversation of 4 messages", c, len(msgs), err)
	}
}

// knowledgeReachesOther writes a knowledge item through one replica's API and asks the other: it answers from
// the item within a second.
func (p *pair) knowledgeReachesOther(t *testing.T) {
	owner := map[string]string{"Authorization": "Bearer " + p.owner, "X-Merchant-ID": "quota"}
	ask := func() string {
		status, answer := p.post(p.b, "/api/v1/chat", map[string]string{"X-API-Key": p.keys["quota"]},
			`{"message": "How much does the Zorblax tent weigh?", "conversation_id": "zorblax"}`)
		if status != http.StatusOK {
			t.Fatalf("asking B: %d %s", status, answer)
		}
		return answer
	}
	if answer := ask(); strings.Contains(answer, "1.9 kilos") {
		t.Fatalf("B answered before the knowledge existed: %s", answer)
	}
	status, body := p.post(p.a, "/api/v1/knowledge", owner,
		`{"title": "Zorblax tent", "content": "The Zorblax tent weighs 1.9 kilos and sleeps two."}`)
	if status != http.StatusCreated {
		t.Fatalf("creating knowledge on A: %d %s", status, body)
	}
	written := time.Now()
	for !strings.Contains(ask(), "1.9 kilos") {
		if time.Since(written) > time.Second {
			t.Fatal("B did not answer from the knowledge written through A within a second")
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("B answered from A's new knowledge after %s", time.Since(written))
}

// monthlyCeiling races new conversations on both replicas: exactly the ceiling's worth is started.
func (p *pair) monthlyCeiling(t *testing.T) {
	before, err := p.store.ConversationsThisMonth(t.Context(), "quota", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	const attempts = 60
	var ok, refused atomic.Int64
	var wg sync.WaitGroup
	for i := range attempts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rt := []*runtimeproc.Process{p.a, p.b}[i%2]
			switch s := p.chat(rt, "quota", fmt.Sprintf(`{"message": "hi", "conversation_id": "race-%d"}`, i)); s {
			case http.StatusOK:
				ok.Add(1)
			case http.StatusTooManyRequests:
				refused.Add(1)
			default:
				t.Errorf("status %d", s)
			}
		}()
	}
	wg.Wait()
	n, err := p.store.ConversationsThisMonth(t.Context(), "quota", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if n != 20 || int(ok.Load()) != 20-before {
		t.Errorf("%d conversations this month (%d started now, %d refused); want exactly the ceiling of 20", n, ok.Load(), refused.Load())
	}
}

// abuseLimits starts new conversations with the publishable key from one address (the test's), alternating
// between the replicas: the pair allows the plan's 4 per visitor and 8 per address in all, not per replica.
func (p *pair) abuseLimits(t *testing.T) {
	count := func(visitor func(i int) string, attempts int) (ok int) {
		for i := range attempts {
			rt := []*runtimeproc.Process{p.a, p.b}[i%2]
			status, answer := p.post(rt, "/api/v1/chat", map[string]string{"X-API-Key": p.pks["abuse"],
				"Origin": "https://abuse.example", "X-Visitor-ID": visitor(i)}, `{"message": "hello"}`)
			switch {
			case status == http.StatusOK:
				ok++
			case status != http.StatusTooManyRequests || !strings.Contains(answer, "conversation_rate_limited"):
				t.Fatalf("new conversation %d: %d %s", i, status, answer)
			}
		}
		return ok
	}
	if got := count(func(int) string { return "one-visitor" }, 12); got != 4 {
		t.Errorf("one visitor started %d conversations through the pair; the plan allows 4 an hour in all", got)
	}
	// The visitor's 4 came from this address too: 4 more from it, whoever the visitor.
	if got := count(func(i int) string { return fmt.Sprint("visitor-", i) }, 12); got != 4 {
		t.Errorf("the address started %d more conversations through the pair; the plan allows 8 an hour in all", got)
	}
}

// webhooksOnce: events written through both replicas are each delivered exactly once in normal operation.
func (p *pair) webhooksOnce(t *testing.T) {
	const chats = 30
	before := len(p.receiver.Received())
	for i := range chats {
		rt := []*runtimeproc.Process{p.a, p.b}[i%2]
		if s := p.chat(rt, "hooks", fmt.Sprintf(`{"message": "I am v%d@example.com"}`, i)); s != http.StatusOK {
			t.Fatalf("chat %d: %d", i, s)
		}
	}
	p.receiver.WaitFor(t, before+2*chats, 30*time.Second)
	time.Sleep(2 * time.Second) // a second delivery would arrive by now
	for id, n := range p.receiver.Received() {
		if n != 1 {
			t.Errorf("event %s delivered %d times", id, n)
		}
	}
	if n := p.receiver.Bad(); n > 0 {
		t.Errorf("%d deliveries did not verify", n)
	}
}

// webhooksSurviveKill: replica A holds deliveries in flight when it is killed; B delivers them once A's leases
// run out.
func (p *pair) webhooksSurviveKill(t *testing.T) {
	p.receiver.Hold(true)
	p.b.Kill() // A alone claims the new deliveries
	// Two events each, as many as one merchant may have in flight at once, so that all are.
	const chats = webhook.DefaultWorkers / webhook.MerchantShare / 2
	before := len(p.receiver.Received())
	for i := range chats {
		if s := p.chat(p.a, "hooks", fmt.Sprintf(`{"message": "I am k%d@example.com"}`, i)); s != http.StatusOK {
			t.Fatalf("chat %d: %d", i, s)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for p.receiver.Held() < 2*chats && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := p.receiver.Held(); n < 2*chats {
		t.Fatalf("%d of %d attempts in flight on A", n, 2*chats)
	}
	p.a.Kill()
	p.receiver.Hold(false)
	p.b = p.start()
	// A's leases end twice the 10-second attempt timeout after they were taken; then B delivers everything.
	got := p.receiver.WaitFor(t, before+2*chats, 60*time.Second)
	if len(got) != before+2*chats {
		t.Errorf("%d events, want %d", len(got), before+2*chats)
	}
}
