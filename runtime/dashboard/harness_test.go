package dashboard_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parley-dev/parley/internal/credentials"
	"github.com/parley-dev/parley/internal/dev/devidp"
	"github.com/parley-dev/parley/internal/testutil/bundletest"
	"github.com/parley-dev/parley/internal/testutil/hookreceiver"
	"github.com/parley-dev/parley/runtime/assistant"
	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/dashboard"
	"github.com/parley-dev/parley/runtime/issuer"
	"github.com/parley-dev/parley/runtime/ratelimit"
	"github.com/parley-dev/parley/runtime/server"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/sqlite"
	"github.com/parley-dev/parley/runtime/store/storetest"
	"github.com/parley-dev/parley/runtime/tenant"
	"github.com/parley-dev/parley/runtime/webhook"
)

const audience = "parley-dashboard-test"

// env is a real runtime (SQLite file, retrieval assistant, webhook dispatcher) with the dashboard, a real OIDC
// issuer (the dev issuer, on its own origin), a webhook receiver, and two merchants: "alpha", owned by
// alpha@owners.example, and "beta", owned by beta@owners.example; both@owners.example owns both.
type env struct {
	url     string
	idp     string
	store   store.Store
	svc     *chat.Service
	tenants *tenant.Registry
	secret  map[string]string // merchant → secret API key
	// shop is alpha's web page, on its own origin, with the widget embedded with alpha's publishable key.
	shop string
	// hooks is both merchants' webhook endpoint "crm", verifying every delivery's signature.
	hooks *hookreceiver.Receiver
}

// received is how many deliveries the endpoint took, replays included.
func (e *env) received() int {
	n := 0
	for _, c := range e.hooks.Received() {
		n += c
	}
	return n
}

func newEnv(t *testing.T) *env {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "parley.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return newEnvOn(t, st)
}

// newEnvOn is newEnv with the runtime's data in st.
func newEnvOn(t *testing.T, st store.Store) *env {
	t.Helper()
	return newEnvAnswering(t, st, assistant.Retrieval{})
}

// newEnvAnswering is newEnvOn with the runtime's answers given by responder.
func newEnvAnswering(t *testing.T, st store.Store, responder assistant.Responder) *env {
	t.Helper()
	e := &env{secret: map[string]string{}, store: st}
	log := slog.New(slog.DiscardHandler)
	reg := prometheus.NewRegistry()
	var err error
	if e.tenants, err = tenant.NewRegistry(log, reg); err != nil {
		t.Fatal(err)
	}
	e.tenants.MarkSynced()

	idpServer := httptest.NewUnstartedServer(nil)
	idp, err := devidp.New("http://" + idpServer.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	idpServer.Config.Handler = idp.Handler()
	idpServer.Start()
	t.Cleanup(idpServer.Close)
	e.idp = idp.URL()

	e.hooks = hookreceiver.Start(t)
	hooks, err := webhook.New(webhook.Config{Outbox: chat.Outbox{Store: e.store}, Tenants: e.tenants, Logger: log, Registry: reg,
		AllowPrivate: true, Poll: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = hooks.Run(t.Context()) }()
	t.Cleanup(func() { <-done })

	svc, err := chat.New(chat.Config{Store: e.store, Responder: responder, Notify: hooks.Notify})
	if err != nil {
		t.Fatal(err)
	}
	e.svc = svc
	ts := httptest.NewUnstartedServer(nil)
	e.url = "http://" + ts.Listener.Addr().String()
	ts.Config.Handler = e.runtime(t, svc, reg, []byte("the first runtime's session key, 32 bytes or more"))
	ts.Start()
	t.Cleanup(ts.Close)

	var embed string
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Alpha</title></head><body><h1>Alpha</h1>%s</body></html>", embed)
	}))
	t.Cleanup(shop.Close)
	e.shop = shop.URL
	for _, id := range []string{"alpha", "beta"} {
		pk := e.merchant(t, id, shop.URL)
		if id == "alpha" {
			embed = fmt.Sprintf(`<script src="%s/widget.js" data-api-key="%s" data-merchant-id="alpha" async></script>`, e.url, pk)
		}
	}
	return e
}

// loopback is the trusted proxy of the tests: a client's X-Forwarded-For names the address it stands for.
var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

// runtime builds the runtime's handler with a dashboard signing its sessions with key.
func (e *env) runtime(t *testing.T, svc *chat.Service, reg *prometheus.Registry, key []byte) http.Handler {
	t.Helper()
	return e.runtimeOf(t, svc, reg, key, e.url, e.idp)
}

// runtimeOf builds the handler of a runtime at publicURL, whose owners sign in at the issuer idpURL.
func (e *env) runtimeOf(t *testing.T, svc *chat.Service, reg *prometheus.Registry, key []byte, publicURL, idpURL string) http.Handler {
	t.Helper()
	limiter := ratelimit.NewLocal()          // shared, as cmd/parley shares it
	idp := issuer.New(idpURL, audience, nil) // one client of the issuer, as cmd/parley shares it
	d, err := dashboard.New(dashboard.Config{Tenants: e.tenants, Chat: svc, Issuer: idp, PublicURL: publicURL,
		SessionKey: key, Limiter: limiter, Logger: slog.New(slog.DiscardHandler), TrustedProxies: loopback})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{Tenants: e.tenants, Chat: svc, Registry: reg, Dashboard: d, Limiter: limiter,
		Verifier: idp, Logger: slog.New(slog.DiscardHandler), TrustedProxies: loopback})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// merchant publishes a merchant with a secret key, a publishable key allowed from origin, a webhook to e.hooks
// and two knowledge items, and returns the publishable key.
func (e *env) merchant(t *testing.T, id, origin string) string {
	t.Helper()
	key, err := credentials.NewAPIKey(credentials.SecretPrefix)
	if err != nil {
		t.Fatal(err)
	}
	e.secret[id] = key
	d, _ := credentials.Describe(key)
	pk, err := credentials.NewAPIKey(credentials.PublishablePrefix)
	if err != nil {
		t.Fatal(err)
	}
	pd, _ := credentials.Describe(pk)
	b := &tenant.Bundle{
		APIVersion: tenant.APIVersion, MerchantID: id, DisplayName: "Shop " + id,
		Plan:           tenant.Plan{Name: "test", RequestsPerSecond: 100, Burst: 100, MonthlyConversations: 50, KnowledgeItems: 5, APIAccess: true, Webhooks: true},
		Owners:         []tenant.Owner{{Email: id + "@owners.example"}, {Email: "both@owners.example"}},
		Widget:         tenant.Widget{Title: "Ask " + id, Greeting: "Welcome to " + id + "!", Color: "#0f766e"},
		APIKeys:        []tenant.APIKey{{ID: d.ID, Type: tenant.KeySecret, SHA256: d.SHA256}, {ID: pd.ID, Type: tenant.KeyPublishable, SHA256: pd.SHA256}},
		AllowedOrigins: []string{origin},
		Webhooks: []tenant.Webhook{{ID: "crm", URL: e.hooks.URL, Events: []tenant.Event{tenant.EventConversationCreated},
			SigningSecrets: []string{e.hooks.Secret}}},
	}
	bundletest.Publish(t, e.tenants, "test/"+id, b)
	now := time.Now().UTC()
	for i, k := range [][2]string{
		{"Shipping " + id, "Orders from " + id + " ship within 2 business days. Delivery to Canada takes 5 to 8 business days."},
		{"Returns " + id, "You can return unworn items to " + id + " within 60 days for a full refund."},
	} {
		err := storetest.WriteKnowledge(t.Context(), e.store, store.Knowledge{ID: fmt.Sprintf("kn_%s_%d", id, i), MerchantID: id,
			Title: k[0], Content: k[1], CreatedAt: now.Add(time.Duration(i) * time.Millisecond), UpdatedAt: now})
		if err != nil {
			t.Fatal(err)
		}
	}
	return pk
}

// chat sends a message to the merchant through the API with its secret key and returns the reply's text and
// conversation ID.
func (e *env) chat(t *testing.T, merchant, message string) (string, string) {
	t.Helper()
	status, answer, conv := e.chatWith(t, e.secret[merchant], message)
	if status != http.StatusOK {
		t.Fatalf("chat: %d", status)
	}
	return answer, conv
}

// chatWith sends a message with key through the API and returns the status, the reply's text and the
// conversation ID.
func (e *env) chatWith(t *testing.T, key, message string) (int, string, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"message": message})
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, e.url+"/api/v1/chat", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	var out struct {
		ConversationID string `json:"conversation_id"`
		Answer         string `json:"answer"`
	}
	if res.StatusCode == http.StatusOK {
		if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
			t.Fatalf("chat: %v", err)
		}
	}
	return res.StatusCode, out.Answer, out.ConversationID
}

// knowledgeCount is how many items the merchant has.
func (e *env) knowledgeCount(t *testing.T, merchant string) int {
	t.Helper()
	all, err := e.store.AllKnowledge(t.Context(), merchant)
	if err != nil {
		t.Fatal(err)
	}
	return len(all)
}

// delivery waits for the merchant's first webhook delivery to finish and returns it.
func (e *env) delivery(t *testing.T, merchant string) store.Delivery {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		list, _, err := e.store.ListDeliveries(t.Context(), merchant, store.DeliveryFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list) > 0 && list[0].Status == store.DeliverySucceeded {
			return list[0]
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s's delivery did not succeed", merchant)
	return store.Delivery{}
}

// client is a browser-like HTTP client with its own cookies, which does not follow redirects.
type client struct {
	t    *testing.T
	http *http.Client
	base string
}

func newClient(t *testing.T, base string) *client {
	jar, _ := cookiejar.New(nil)
	return &client{t: t, base: base, http: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// signIn goes through the code flow at the dev issuer as email.
func (c *client) signIn(email string) {
	c.t.Helper()
	res := c.get("/dashboard/")
	for range 3 { // the dashboard, its login, the issuer's page
		if res.StatusCode != http.StatusSeeOther {
			break
		}
		res = c.getURL(c.resolve(res))
	}
	if res.StatusCode != http.StatusOK || !strings.Contains(res.URL.Path, "/authorize") {
		c.t.Fatalf("expected the issuer's sign-in page, got %d at %s", res.StatusCode, res.URL)
	}
	form := res.URL.Query()
	form.Set("email", email)
	res = c.do(http.MethodPost, res.URL.Scheme+"://"+res.URL.Host+res.URL.Path, form, nil)
	for res.StatusCode == http.StatusSeeOther && !strings.HasSuffix(c.resolve(res), "/dashboard/") {
		res = c.getURL(c.resolve(res))
	}
	if res.StatusCode != http.StatusSeeOther {
		c.t.Fatalf("signing in ended with %d at %s", res.StatusCode, res.URL)
	}
}

func (c *client) resolve(res reply) string {
	u, err := res.URL.Parse(res.Header.Get("Location"))
	if err != nil {
		c.t.Fatal(err)
	}
	return u.String()
}

func (c *client) get(path string) reply { return c.getURL(c.base + path) }

func (c *client) getURL(u string) reply { return c.do(http.MethodGet, u, nil, nil) }

// post sends a form to the dashboard as the dashboard's own page would: same origin.
func (c *client) post(path string, form url.Values) reply {
	return c.do(http.MethodPost, c.base+path, form, http.Header{"Origin": {c.base}, "Sec-Fetch-Site": {"same-origin"}})
}

// reply is a response, read.
type reply struct {
	StatusCode int
	Header     http.Header
	// URL is the request's.
	URL  *url.URL
	Body string
}

func (c *client) do(method, u string, form url.Values, h http.Header) reply {
	c.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(c.t.Context(), method, u, body)
	if err != nil {
		c.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range h {
		req.Header[k] = v
	}
	res, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return reply{StatusCode: res.StatusCode, Header: res.Header, URL: res.Request.URL, Body: string(data)}
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf reads the CSRF token from a dashboard page.
func (c *client) csrf() string {
	c.t.Helper()
	m := csrfField.FindStringSubmatch(c.get("/dashboard/knowledge").Body)
	if m == nil {
		c.t.Fatal("no CSRF token on the knowledge page")
	}
	return m[1]
}
