package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/parley-dev/parley/internal/credentials"
	"github.com/parley-dev/parley/internal/dev/devidp"
	"github.com/parley-dev/parley/internal/testutil/bundletest"
	"github.com/parley-dev/parley/runtime/api"
	"github.com/parley-dev/parley/runtime/assistant"
	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/issuer"
	"github.com/parley-dev/parley/runtime/store/sqlite"
	"github.com/parley-dev/parley/runtime/tenant"
)

const audience = "parley-test"

// env is a runtime on a real SQLite file, with a real OIDC issuer, and two merchants, "alpha" and "beta".
type env struct {
	t        testing.TB
	url      string
	tenants  *tenant.Registry
	idp      *devidp.Issuer
	router   routers.Router
	logs     *syncBuffer
	bundles  map[string]*tenant.Bundle
	keys     map[string]string // name -> plaintext key
	clock    *clock
	srv      *Server
	store    *sqlite.Store
	metrics  *prometheus.Registry
	svc      *chat.Service
	validate bool
}

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

type envOption func(*envConfig)

// envConfig is what an envOption may change before the server is built.
type envConfig struct {
	server Config
	chat   chat.Config
}

func newEnv(t testing.TB, opts ...envOption) *env {
	t.Helper()
	e := &env{t: t, logs: &syncBuffer{}, keys: map[string]string{}, bundles: map[string]*tenant.Bundle{},
		clock: &clock{now: time.Date(2026, 11, 10, 12, 0, 0, 0, time.UTC)}, validate: true}
	log := slog.New(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e.metrics = prometheus.NewRegistry()
	var err error
	if e.tenants, err = tenant.NewRegistry(log, e.metrics); err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(t.Context(), t.TempDir()+"/parley.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	e.store = st

	idpMux := http.NewServeMux()
	idpServer := httptest.NewServer(idpMux)
	t.Cleanup(idpServer.Close)
	if e.idp, err = devidp.New(idpServer.URL); err != nil {
		t.Fatal(err)
	}
	idpMux.Handle("/", e.idp.Handler())

	cfg := envConfig{
		server: Config{Tenants: e.tenants, Logger: log, Registry: e.metrics,
			Verifier: issuer.New(e.idp.URL(), audience, idpServer.Client()), Now: e.clock.Now},
		chat: chat.Config{Store: st, Responder: assistant.Retrieval{}, Now: e.clock.Now},
	}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.server.Chat, err = chat.New(cfg.chat); err != nil {
		t.Fatal(err)
	}
	e.svc = cfg.server.Chat
	if e.srv, err = New(cfg.server); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(e.srv)
	t.Cleanup(ts.Close)
	e.url = ts.URL

	doc, err := openapi3.NewLoader().LoadFromData(mustJSON(t))
	if err != nil {
		t.Fatal(err)
	}
	doc.Servers = openapi3.Servers{{URL: ts.URL + "/api/v1"}}
	if e.router, err = legacy.NewRouter(doc); err != nil {
		t.Fatal(err)
	}

	e.addMerchant("alpha", func(b *tenant.Bundle) {})
	e.addMerchant("beta", func(b *tenant.Bundle) {})
	e.tenants.MarkSynced()
	return e
}

// scrape reads the runtime's metrics as Prometheus does, from MetricsHandler.
func (e *env) scrape() string {
	e.t.Helper()
	rec := httptest.NewRecorder()
	MetricsHandler(e.metrics, e.tenants, e.svc).ServeHTTP(rec, httptest.NewRequestWithContext(e.t.Context(), http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		e.t.Fatalf("scraping the metrics: %d", rec.Code)
	}
	return rec.Body.String()
}

func mustJSON(t testing.TB) []byte {
	data, err := api.OpenAPIJSON()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// addMerchant publishes a merchant with a publishable and a secret key (named "<id>-pk" and "<id>-sk") and
// owner "<id>@owners.example".
func (e *env) addMerchant(id string, edit func(*tenant.Bundle)) *tenant.Bundle {
	e.t.Helper()
	b := &tenant.Bundle{
		APIVersion: tenant.APIVersion, MerchantID: id, DisplayName: "Shop " + id,
		Plan:           tenant.Plan{Name: "test", RequestsPerSecond: 1000, Burst: 1000, APIAccess: true},
		AllowedOrigins: []string{"https://" + id + ".example"},
		Owners:         []tenant.Owner{{Email: id + "@owners.example"}},
		Assistant:      tenant.Assistant{FallbackMessage: "Sorry, " + id + " does not know. Leave your email."},
	}
	for _, k := range []struct {
		name, prefix string
		typ          tenant.KeyType
	}{{id + "-pk", credentials.PublishablePrefix, tenant.KeyPublishable}, {id + "-sk", credentials.SecretPrefix, tenant.KeySecret}} {
		key, err := credentials.NewAPIKey(k.prefix)
		if err != nil {
			e.t.Fatal(err)
		}
		d, _ := credentials.Describe(key)
		e.keys[k.name] = key
		b.APIKeys = append(b.APIKeys, tenant.APIKey{ID: d.ID, Type: k.typ, SHA256: d.SHA256})
	}
	edit(b)
	e.publish(b)
	return b
}

func (e *env) publish(b *tenant.Bundle) {
	e.t.Helper()
	bundletest.Publish(e.t, e.tenants, "secret/"+b.MerchantID, b)
	e.bundles[b.MerchantID] = b
}

func (e *env) token(subject, email string) string {
	e.t.Helper()
	tok, err := e.idp.Token(audience, subject, email, time.Hour)
	if err != nil {
		e.t.Fatal(err)
	}
	return tok
}

// ownerOf returns a bearer header value for the owner of a merchant.
func (e *env) ownerOf(id string) string { return "Bearer " + e.token("user-"+id, id+"@owners.example") }

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("answer is not a JSON object: %v: %s", err, r.body)
	}
	return m
}

func (r response) errorCode(t testing.TB) string {
	t.Helper()
	m := r.json(t)
	e, ok := m["error"].(map[string]any)
	if !ok {
		t.Fatalf("answer is not an error envelope: %s", r.body)
	}
	if e["request_id"] == "" || e["request_id"] != r.header.Get("X-Request-ID") {
		t.Errorf("error request_id %v does not match X-Request-ID %q", e["request_id"], r.header.Get("X-Request-ID"))
	}
	return e["code"].(string)
}

// do sends a request and validates the answer against the OpenAPI document: status, headers and body.
func (e *env) do(method, path string, headers map[string]string, body string) response {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(e.t.Context(), method, e.url+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	if e.validate && strings.HasPrefix(path, "/api/v1/") {
		e.validateResponse(req, res, data)
	}
	return response{status: res.StatusCode, header: res.Header, body: data}
}

func (e *env) validateResponse(req *http.Request, res *http.Response, body []byte) {
	e.t.Helper()
	route, params, err := e.router.FindRoute(req)
	if err != nil {
		if res.StatusCode == http.StatusNotFound || res.StatusCode == http.StatusMethodNotAllowed {
			return // an undocumented path or method; its error envelope is checked by the test itself
		}
		e.t.Fatalf("%s %s is not in the OpenAPI document: %v", req.Method, req.URL.Path, err)
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, IncludeResponseStatus: true},
		},
		Status: res.StatusCode, Header: res.Header, Body: io.NopCloser(bytes.NewReader(body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		e.t.Errorf("%s %s answered %d, which the OpenAPI document does not allow: %v\n%s", req.Method, req.URL.Path, res.StatusCode, err, body)
	}
}

func (e *env) chat(key string, body string, extra ...string) response {
	e.t.Helper()
	h := map[string]string{"X-API-Key": key}
	for i := 0; i+1 < len(extra); i += 2 {
		h[extra[i]] = extra[i+1]
	}
	return e.do(http.MethodPost, "/api/v1/chat", h, body)
}
