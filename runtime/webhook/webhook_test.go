package webhook

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/parley-dev/parley/internal/testutil/bundletest"
	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/event"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/sqlite"
	"github.com/parley-dev/parley/runtime/tenant"
)

func newSecret(t *testing.T) string {
	t.Helper()
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return "whsec_" + base64.StdEncoding.EncodeToString(b)
}

// receiver is a real HTTP endpoint that verifies every request's signature with the Standard Webhooks library
// and answers with the codes it is given, in turn (the last one from then on).
type receiver struct {
	t       *testing.T
	srv     *httptest.Server
	secrets []string
	mu      sync.Mutex
	codes   []int
	got     []received
	// hang makes the receiver answer only once the client has given up, however late that is.
	hang bool
}

type received struct {
	id      string
	header  http.Header
	payload map[string]any
}

func newReceiver(t *testing.T, secrets []string, codes ...int) *receiver {
	r := &receiver{t: t, secrets: secrets, codes: codes}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		r.t.Errorf("reading body: %v", err)
	}
	// Each secret alone must verify: a receiver may hold either during a rotation.
	for i, s := range r.secrets {
		wh, err := standardwebhooks.NewWebhook(s)
		if err != nil {
			r.t.Fatal(err)
		}
		if err := wh.Verify(body, req.Header); err != nil {
			r.t.Errorf("signature with secret %d does not verify: %v", i+1, err)
		}
	}
	var payload map[string]any
	if err := json.Unmarshal(body, &payload); err != nil {
		r.t.Errorf("payload is not JSON: %v", err)
	}
	if ct := req.Header.Get("Content-Type"); ct != "application/json" {
		r.t.Errorf("Content-Type %q", ct)
	}
	r.mu.Lock()
	r.got = append(r.got, received{id: req.Header.Get("webhook-id"), header: req.Header.Clone(), payload: payload})
	code := r.codes[min(len(r.got), len(r.codes))-1]
	hang := r.hang
	r.mu.Unlock()
	if hang {
		<-req.Context().Done()
	}
	w.WriteHeader(code)
}

func (r *receiver) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

// fixture is a store, a registry with one merchant whose webhook points at a receiver, and a dispatcher.
type fixture struct {
	t     *testing.T
	store *sqlite.Store
	reg   *tenant.Registry
	b     *tenant.Bundle
	d     *Dispatcher
	prom  *prometheus.Registry
}

func newFixture(t *testing.T, hookURL string, secrets []string, cfg Config) *fixture {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "parley.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	reg, err := tenant.NewRegistry(slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, store: st, reg: reg, b: &tenant.Bundle{
		APIVersion: tenant.APIVersion, MerchantID: "acme", DisplayName: "Acme",
		Plan: tenant.Plan{Name: "enterprise", RequestsPerSecond: 10, Burst: 10, Webhooks: true},
		Webhooks: []tenant.Webhook{{ID: "crm", URL: hookURL, SigningSecrets: secrets,
			Events: []tenant.Event{tenant.EventConversationCreated, tenant.EventLeadCreated}}},
	}}
	f.publish()
	f.prom = prometheus.NewRegistry()
	cfg.Outbox, cfg.Tenants, cfg.Registry = chat.Outbox{Store: st}, reg, f.prom
	cfg.Logger = slog.New(slog.DiscardHandler)
	if cfg.Schedule == nil {
		cfg.Schedule = []time.Duration{10 * time.Millisecond, 10 * time.Millisecond, 10 * time.Millisecond, 10 * time.Millisecond}
	}
	if cfg.Poll == 0 {
		cfg.Poll = 5 * time.Millisecond
	}
	if f.d, err = New(cfg); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) publish() {
	f.t.Helper()
	bundletest.Publish(f.t, f.reg, "test/acme", f.b)
	f.reg.MarkSynced()
}

func (f *fixture) run() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := f.d.Run(ctx); err != nil {
			f.t.Errorf("Run: %v", err)
		}
	}()
	f.t.Cleanup(func() { cancel(); <-done })
}

var convSeq int

// chat records a new conversation whose question carries an email address, with the events going to the
// merchant's webhook.
func (f *fixture) chat() store.ExchangeResult {
	f.t.Helper()
	convSeq++
	now := time.Now().UTC()
	ep := []store.Endpoint{{WebhookID: "crm", URL: f.b.Webhooks[0].URL}}
	res, err := chat.RecordExchange(f.t.Context(), f.store, store.Exchange{
		MerchantID: "acme", ConversationID: "conv-" + string(rune('a'+convSeq)), VisitorID: "v1",
		Question: store.Message{ID: "q" + string(rune('a'+convSeq)), Role: store.RoleVisitor, Text: "write to ana@example.com", CreatedAt: now},
		Answer:   store.Message{ID: "a" + string(rune('a'+convSeq)), Role: store.RoleAssistant, Text: "ok", CreatedAt: now, Answered: true},
		Contact:  &store.Contact{Email: "ana@example.com"}, LeadID: "lead-" + string(rune('a'+convSeq)),
		Outbox: store.Outbox{EventIDs: []string{"evt_c" + string(rune('a'+convSeq)), "evt_l" + string(rune('a'+convSeq))},
			Subscribers: map[string][]store.Endpoint{event.ConversationCreated: ep, event.LeadCreated: ep}},
	})
	if err != nil {
		f.t.Fatal(err)
	}
	f.d.Notify()
	return res
}

// deliveries waits until every delivery of the merchant has left pending, and returns them.
func (f *fixture) settled(want int) []store.Delivery {
	f.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		list, _, err := f.store.ListDeliveries(f.t.Context(), "acme", store.DeliveryFilter{Limit: 100})
		if err != nil {
			f.t.Fatal(err)
		}
		pending := 0
		for _, d := range list {
			if d.Status == store.DeliveryPending {
				pending++
			}
		}
		if len(list) == want && pending == 0 {
			return list
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("deliveries did not settle: %+v", list)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestDeliversSignedEvents(t *testing.T) {
	secrets := []string{newSecret(t), newSecret(t)} // a rotation in progress: both sign
	r := newReceiver(t, secrets, http.StatusNoContent)
	f := newFixture(t, r.srv.URL, secrets, Config{AllowPrivate: true})
	f.run()
	f.chat()
	for _, d := range f.settled(2) {
		if d.Status != store.DeliverySucceeded || d.Attempts != 1 || d.LastStatusCode != http.StatusNoContent {
			t.Errorf("delivery %+v", d)
		}
	}
	got := r.requests()
	if len(got) != 2 {
		t.Fatalf("%d requests, want 2", len(got))
	}
	types := map[string]bool{}
	for _, g := range got {
		types[g.payload["type"].(string)] = true
		if g.payload["merchant_id"] != "acme" || g.payload["id"] != g.id {
			t.Errorf("payload %v with webhook-id %s", g.payload, g.id)
		}
		if sigs := g.header.Get("webhook-signature"); len(sigs) < 2*len("v1,")+2*44 {
			t.Errorf("webhook-signature %q does not carry two signatures", sigs)
		}
	}
	if !types["conversation.created"] || !types["lead.created"] {
		t.Errorf("event types %v", types)
	}
	if n := testutil.ToFloat64(f.d.metrics.attempts.WithLabelValues("acme", store.DeliverySucceeded)); n != 2 {
		t.Errorf("succeeded attempts metric = %v, want 2", n)
	}
	if n, err := testutil.GatherAndCount(f.prom, "parley_runtime_webhook_delivery_lag_seconds"); err != nil || n != 1 {
		t.Errorf("lag histogram: %d series, %v", n, err)
	}
}

func TestRetriesWithTheSameID(t *testing.T) {
	secrets := []string{newSecret(t)}
	r := newReceiver(t, secrets, 503, 500, 429, 200)
	f := newFixture(t, r.srv.URL, secrets, Config{AllowPrivate: true})
	f.b.Webhooks[0].Events = []tenant.Event{tenant.EventConversationCreated}
	f.publish()
	f.run()
	f.chat()
	// lead.created is no longer subscribed: cancelled without an attempt.
	var conv store.Delivery
	for _, d := range f.settled(2) {
		switch d.EventType {
		case event.ConversationCreated:
			conv = d
		case event.LeadCreated:
			if d.Status != store.DeliveryCancelled || d.Attempts != 0 {
				t.Errorf("unsubscribed delivery %+v", d)
			}
		}
	}
	if conv.Status != store.DeliverySucceeded || conv.Attempts != 4 {
		t.Fatalf("delivery %+v, want succeeded on the fourth attempt", conv)
	}
	got := r.requests()
	if len(got) != 4 {
		t.Fatalf("%d requests, want 4", len(got))
	}
	for _, g := range got {
		if g.id != conv.EventID {
			t.Errorf("webhook-id %q, want %q on every attempt", g.id, conv.EventID)
		}
	}
	_, attempts, err := f.store.GetDelivery(t.Context(), "acme", conv.ID)
	if err != nil || len(attempts) != 4 || attempts[0].StatusCode != http.StatusServiceUnavailable || attempts[3].StatusCode != http.StatusOK {
		t.Errorf("attempts %+v, %v", attempts, err)
	}
}

func TestGiveUpAfterTheSchedule(t *testing.T) {
	secrets := []string{newSecret(t)}
	r := newReceiver(t, secrets, 500)
	f := newFixture(t, r.srv.URL, secrets, Config{AllowPrivate: true, Schedule: []time.Duration{time.Millisecond}})
	f.run()
	f.chat()
	for _, d := range f.settled(2) {
		if d.Status != store.DeliveryFailed || d.Attempts != 2 {
			t.Errorf("delivery %+v, want failed after 2 attempts", d)
		}
	}
}

func TestGoneDisablesTheEndpoint(t *testing.T) {
	secrets := []string{newSecret(t)}
	r := newReceiver(t, secrets, http.StatusGone)
	f := newFixture(t, r.srv.URL, secrets, Config{AllowPrivate: true, Workers: 1})
	f.run()
	f.chat()
	statuses := map[string]int{}
	for _, d := range f.settled(2) {
		statuses[d.Status]++
	}
	if statuses[store.DeliveryFailed] != 1 || statuses[store.DeliveryCancelled] != 1 {
		t.Errorf("statuses %v: want the first failed and the other cancelled", statuses)
	}
	f.chat()
	f.settled(4)
	if n := len(r.requests()); n != 1 {
		t.Errorf("the disabled endpoint got %d requests, want 1", n)
	}
}

func TestPrivateTargetsRefusedByDefault(t *testing.T) {
	secrets := []string{newSecret(t)}
	r := newReceiver(t, secrets, 200)
	f := newFixture(t, r.srv.URL, secrets, Config{})
	f.run()
	f.chat()
	for _, d := range f.settled(2) {
		if d.Status != store.DeliveryFailed || d.LastError != ErrForbiddenTarget.Error() {
			t.Errorf("delivery to a loopback target %+v", d)
		}
	}
	if n := len(r.requests()); n != 0 {
		t.Errorf("the loopback receiver got %d requests", n)
	}
}

func TestRedirectsAreNotFollowed(t *testing.T) {
	secrets := []string{newSecret(t)}
	target := newReceiver(t, secrets, 200)
	redirect := httptest.NewServer(http.RedirectHandler(target.srv.URL, http.StatusTemporaryRedirect))
	t.Cleanup(redirect.Close)
	f := newFixture(t, redirect.URL, secrets, Config{AllowPrivate: true})
	f.run()
	f.chat()
	for _, d := range f.settled(2) {
		if d.Status != store.DeliveryFailed || d.LastStatusCode != http.StatusTemporaryRedirect {
			t.Errorf("delivery %+v", d)
		}
	}
	if n := len(target.requests()); n != 0 {
		t.Errorf("the redirect was followed %d times", n)
	}
}

func TestTimeoutIsRetried(t *testing.T) {
	secrets := []string{newSecret(t)}
	r := newReceiver(t, secrets, 200)
	r.hang = true // an endpoint that never answers in time, however slow the machine
	f := newFixture(t, r.srv.URL, secrets, Config{AllowPrivate: true, Timeout: 100 * time.Millisecond,
		Schedule: []time.Duration{time.Hour}})
	f.b.Webhooks[0].Events = []tenant.Event{tenant.EventConversationCreated}
	f.publish()
	f.run()
	f.chat()
	d := f.firstAttempt()
	if d.Status != store.DeliveryPending || d.LastError != "timed out waiting for the endpoint" ||
		d.NextAttemptAt.Before(time.Now().Add(45*time.Minute)) {
		t.Errorf("after a timeout: %+v", d)
	}
}

// firstAttempt waits until the one conversation.created delivery has had its first attempt, and returns it. The
// wait bounds a broken dispatcher's test, not the dispatcher: it is long, so that a loaded machine passes.
func (f *fixture) firstAttempt() store.Delivery {
	f.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		list, _, _ := f.store.ListDeliveries(f.t.Context(), "acme", store.DeliveryFilter{EventType: event.ConversationCreated})
		if len(list) == 1 && list[0].Attempts == 1 {
			return list[0]
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("no attempt recorded: %+v", list)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestPlanWithoutWebhooksCancels(t *testing.T) {
	secrets := []string{newSecret(t)}
	r := newReceiver(t, secrets, 200)
	f := newFixture(t, r.srv.URL, secrets, Config{AllowPrivate: true})
	f.chat() // written while the plan had webhooks
	f.b.Plan.Webhooks, f.b.Webhooks = false, nil
	f.publish()
	f.run()
	for _, d := range f.settled(2) {
		if d.Status != store.DeliveryCancelled {
			t.Errorf("delivery %+v", d)
		}
	}
	if n := len(r.requests()); n != 0 {
		t.Errorf("%d requests after the plan lost webhooks", n)
	}
}

// TestWaitsForTenants: before the tenants are loaded, nothing is claimed (and so nothing cancelled as unknown).
func TestWaitsForTenants(t *testing.T) {
	secrets := []string{newSecret(t)}
	r := newReceiver(t, secrets, 200)
	f := newFixture(t, r.srv.URL, secrets, Config{AllowPrivate: true})
	f.chat()
	unsynced, err := tenant.NewRegistry(slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	f.d.tenants = unsynced
	f.run()
	time.Sleep(100 * time.Millisecond)
	list, _, err := f.store.ListDeliveries(t.Context(), "acme", store.DeliveryFilter{Status: store.DeliveryPending})
	if err != nil || len(list) != 2 {
		t.Errorf("pending deliveries before the tenants are loaded: %d, %v; want 2", len(list), err)
	}
}

func TestDecide(t *testing.T) {
	schedule := []time.Duration{time.Second, time.Minute}
	timeout := errors.New("timed out")
	for _, tc := range []struct {
		name     string
		code     int
		err      error
		attempts int
		status   string
		retryIn  time.Duration
		disable  bool
	}{
		{"2xx", 204, nil, 1, store.DeliverySucceeded, 0, false},
		{"5xx first", 503, nil, 1, store.DeliveryPending, time.Second, false},
		{"429 second", 429, nil, 2, store.DeliveryPending, time.Minute, false},
		{"408", 408, nil, 1, store.DeliveryPending, time.Second, false},
		{"timeout", 0, timeout, 2, store.DeliveryPending, time.Minute, false},
		{"schedule exhausted", 500, nil, 3, store.DeliveryFailed, 0, false},
		{"410 disables", 410, nil, 1, store.DeliveryFailed, 0, true},
		{"404 is final", 404, nil, 1, store.DeliveryFailed, 0, false},
		{"redirect is final", 302, nil, 1, store.DeliveryFailed, 0, false},
		{"forbidden target", 0, ErrForbiddenTarget, 1, store.DeliveryFailed, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, retryIn, disable := Decide(tc.code, tc.err, tc.attempts, schedule)
			if status != tc.status || retryIn != tc.retryIn || disable != tc.disable {
				t.Errorf("Decide = %s, %v, %v; want %s, %v, %v", status, retryIn, disable, tc.status, tc.retryIn, tc.disable)
			}
		})
	}
}

func TestJitterStaysNear(t *testing.T) {
	for range 1000 {
		if j := jitter(time.Minute); j < 48*time.Second || j > 72*time.Second {
			t.Fatalf("jitter(1m) = %v", j)
		}
	}
}

// One merchant's slow endpoint with a backlog does not hold every worker: another merchant's event is delivered
// within a second.
func TestSlowMerchantDoesNotDelayAnother(t *testing.T) {
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-time.After(3 * time.Second):
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(slow.Close)
	t.Cleanup(func() { close(release) })
	arrived := make(chan time.Time, 10)
	fast := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- time.Now()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(fast.Close)
	secret := newSecret(t)
	f := newFixture(t, slow.URL, []string{secret}, Config{AllowPrivate: true, Workers: 4, Timeout: 5 * time.Second})
	beta := &tenant.Bundle{APIVersion: tenant.APIVersion, MerchantID: "beta", DisplayName: "Beta",
		Plan:     tenant.Plan{Name: "enterprise", RequestsPerSecond: 10, Burst: 10, Webhooks: true},
		Webhooks: []tenant.Webhook{{ID: "crm", URL: fast.URL, SigningSecrets: []string{secret}, Events: []tenant.Event{tenant.EventConversationCreated}}}}
	bundletest.Publish(t, f.reg, "test/beta", beta)
	for range 8 { // 16 slow deliveries: four times the workers
		f.chat()
	}
	f.run()
	time.Sleep(200 * time.Millisecond) // the slow merchant's deliveries are in flight
	now := time.Now().UTC()
	ep := []store.Endpoint{{WebhookID: "crm", URL: fast.URL}}
	if _, err := chat.RecordExchange(t.Context(), f.store, store.Exchange{
		MerchantID: "beta", ConversationID: "beta-1", VisitorID: "v1",
		Question: store.Message{ID: "bq", Role: store.RoleVisitor, Text: "hi", CreatedAt: now},
		Answer:   store.Message{ID: "ba", Role: store.RoleAssistant, Text: "hello", CreatedAt: now, Answered: true},
		Outbox:   store.Outbox{EventIDs: []string{"evt_beta"}, Subscribers: map[string][]store.Endpoint{event.ConversationCreated: ep}},
	}); err != nil {
		t.Fatal(err)
	}
	f.d.Notify()
	select {
	case at := <-arrived:
		if d := at.Sub(now); d > time.Second {
			t.Errorf("the other merchant's event arrived after %v", d)
		}
	case <-time.After(time.Second):
		t.Fatal("the other merchant's event did not arrive within a second")
	}
}

// A receiver that answers with a malformed header megabytes long cannot fill the delivery log, which every
// merchant's deliveries share: what is kept of the failure is a short description.
func TestAHugeMalformedAnswerIsDescribedShortly(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer func() { _ = c.Close() }()
				_, _ = c.Read(make([]byte, 64<<10))
				_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nX-Bad: \x00"+strings.Repeat("A", 4<<20)+"\r\n\r\n")
			}()
		}
	}()
	f := newFixture(t, "http://"+ln.Addr().String()+"/hooks", []string{newSecret(t)}, Config{AllowPrivate: true,
		Schedule: []time.Duration{time.Hour}})
	f.b.Webhooks[0].Events = []tenant.Event{tenant.EventConversationCreated}
	f.publish()
	f.run()
	f.chat()
	if n := len(f.firstAttempt().LastError); n == 0 || n > maxErrorBytes {
		t.Errorf("the delivery keeps %d bytes of error, want 1 to %d", n, maxErrorBytes)
	}
}
