package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/pprof"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/parley-dev/parley/internal/contract"
	"github.com/parley-dev/parley/internal/credentials"
	"github.com/parley-dev/parley/internal/dev/demo"
	"github.com/parley-dev/parley/internal/dev/devidp"
	"github.com/parley-dev/parley/internal/logging"
	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/server"
	"github.com/parley-dev/parley/runtime/tenant"
)

const (
	devMerchantID = "demo"
	devAudience   = "parley-dev"
	devOwner      = "dev@parley.local"
)

// devCredentials are the demo merchant's keys, kept in the dev directory so that they survive restarts. They are
// plaintext on purpose: this is a laptop demo, like a merchant's own Secret.
type devCredentials struct {
	PublishableKey string `json:"publishableKey"`
	SecretKey      string `json:"secretKey"`
	// WebhookSecret signs the deliveries to --webhook-url.
	WebhookSecret string `json:"webhookSigningSecret,omitempty"`
	// SessionKey signs the dashboard's session cookies, so that signing in survives a restart.
	SessionKey string `json:"dashboardSessionKey,omitempty"`
}

func runDev(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("parley dev", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listenAddr := fs.String("listen", "localhost:8080", "address to serve on")
	dir := fs.String("dir", ".parley", "directory for the database, the demo tenant and its keys")
	rate := fs.Int("rate", 20, "the demo plan's requests per second (raise it for load tests)")
	hookURL := fs.String("webhook-url", "", "deliver the demo merchant's events ("+strings.Join(contract.Events(), ", ")+") here")
	pprofAddr := fs.String("pprof-listen", "", "serve Go's profiles (net/http/pprof) on this address, e.g. localhost:6060; off when empty")
	var level slog.Level
	fs.TextVar(&level, "log-level", slog.LevelWarn, "log level: debug, info, warn or error")
	var assistantName string
	var openAI contract.OpenAI
	contract.BindAssistantFlags(fs, &assistantName, &openAI)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	openAI.APIKey = os.Getenv(contract.EnvOpenAIAPIKey)
	if *rate < 1 || *rate > math.MaxInt32/2 {
		return errors.New("--rate must be between 1 and 1073741823")
	}
	log := logging.New(stderr, level, "text")

	ln, err := listen(*listenAddr)
	if err != nil {
		return err
	}
	defer func() { _ = ln.Close() }() // when serving never starts; a second close is harmless
	base := "http://" + ln.Addr().String()
	if host, port, _ := net.SplitHostPort(*listenAddr); host == "localhost" {
		base = "http://localhost:" + port
	}

	if u, err := url.Parse(*hookURL); *hookURL != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
		return errors.New("--webhook-url must be an absolute http or https URL")
	}
	creds, err := devKeys(filepath.Join(*dir, "demo-credentials.json"))
	if err != nil {
		return err
	}
	tenantsDir := filepath.Join(*dir, "tenants")
	if err := writeDemoBundle(tenantsDir, creds, base, int32(*rate), *hookURL); err != nil {
		return err
	}
	// The issuer keeps its key, so that printed tokens and dashboard sessions outlive a restart.
	idp, err := devidp.Open(base+"/oidc", filepath.Join(*dir, "oidc-key.pem"))
	if err != nil {
		return fmt.Errorf("the dev OIDC issuer: %w", err)
	}
	idp.SuggestedEmail = devOwner
	cfg := contract.Runtime{
		TenantsDir: tenantsDir, Listen: ln.Addr().String(), PublicURL: base,
		Storage: contract.StorageSQLite, SQLitePath: filepath.Join(*dir, "parley.db"), Assistant: assistantName,
		OpenAI: openAI, OIDCIssuer: idp.URL(), OIDCAudience: devAudience, SessionKey: creds.SessionKey,
		WebhookAllowPrivate: true, // a laptop's webhook receiver is on localhost
		LogLevel:            level, LogFormat: "text", RedisKeyPrefix: contract.DefaultRedisKeyPrefix,
		IndexCacheBytes:          contract.DefaultIndexCacheBytes,
		DeletedMerchantRetention: contract.DefaultDeletedMerchantRetention,
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	a, err := assemble(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer a.close()
	if err := seedDemoKnowledge(ctx, a); err != nil {
		return err
	}
	token, err := idp.Token(devAudience, "dev-user", devOwner, 24*time.Hour)
	if err != nil {
		return fmt.Errorf("a dashboard token: %w", err)
	}

	mux := http.NewServeMux()
	mux.Handle("/oidc/", http.StripPrefix("/oidc", idp.Handler()))
	mux.Handle("GET /{$}", demoPage(base, creds.PublishableKey))
	mux.Handle("/", a.handler)
	if *pprofAddr != "" {
		pln, err := listen(*pprofAddr)
		if err != nil {
			return err
		}
		go func() { _ = server.Serve(ctx, pln, pprofHandler(), "", "", log) }()
	}
	printDevBanner(stdout, base, creds, token)
	if *hookURL != "" {
		fmt.Fprintf(stdout, "\nWebhooks go to %s, signed with the secret in %s.\n", *hookURL,
			filepath.Join(*dir, "demo-credentials.json"))
	}
	return a.serve(ctx, ln, mux)
}

// pprofHandler serves Go's CPU, heap, allocation and other profiles under /debug/pprof/, for a listener of its
// own: profiles are for finding where the time goes under load (see docs/benchmarks.md), never for visitors.
func pprofHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// devKeys loads the demo keys, generating them on the first start.
func devKeys(path string) (devCredentials, error) {
	var c devCredentials
	data, err := os.ReadFile(path)
	if err == nil {
		if err := json.Unmarshal(data, &c); err != nil {
			return c, fmt.Errorf("reading %s (delete it to start afresh): %w", path, err)
		}
		if c.WebhookSecret != "" && c.SessionKey != "" {
			return c, nil
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return c, err
	}
	// What is missing is generated once and kept.
	for _, gen := range []struct {
		dst *string
		new func() (string, error)
	}{
		{&c.PublishableKey, func() (string, error) { return credentials.NewAPIKey(credentials.PublishablePrefix) }},
		{&c.SecretKey, func() (string, error) { return credentials.NewAPIKey(credentials.SecretPrefix) }},
		{&c.WebhookSecret, credentials.NewSigningSecret},
		{&c.SessionKey, func() (string, error) { return rand.Text() + rand.Text(), nil }},
	} {
		if *gen.dst == "" {
			if *gen.dst, err = gen.new(); err != nil {
				return c, err
			}
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return c, err
	}
	data, _ = json.MarshalIndent(c, "", "  ") //nolint:gosec // the dev keys are kept in plaintext on purpose, see devCredentials
	return c, os.WriteFile(path, data, 0o600)
}

// writeDemoBundle writes the demo merchant's tenant bundle, as the operator would write its Secret.
func writeDemoBundle(dir string, c devCredentials, base string, rate int32, hookURL string) error {
	var keys []tenant.APIKey
	for _, k := range []struct {
		key string
		typ tenant.KeyType
	}{{c.PublishableKey, tenant.KeyPublishable}, {c.SecretKey, tenant.KeySecret}} {
		d, err := credentials.Describe(k.key)
		if err != nil {
			return fmt.Errorf("demo key: %w", err)
		}
		keys = append(keys, tenant.APIKey{ID: d.ID, Type: k.typ, SHA256: d.SHA256})
	}
	b := &tenant.Bundle{
		APIVersion: tenant.APIVersion, MerchantID: devMerchantID, DisplayName: "Acme Outdoor (demo)", Source: "parley dev",
		Plan:           tenant.Plan{Name: "dev", RequestsPerSecond: rate, Burst: 2 * rate, APIAccess: true},
		AllowedOrigins: []string{base, strings.Replace(base, "localhost", "127.0.0.1", 1), "http://localhost:3000"},
		Owners:         []tenant.Owner{{Email: devOwner}},
		Widget:         tenant.Widget{Title: "Acme helper", Greeting: "Hi! Ask me anything about our gear.", Color: "#0f766e", Position: "bottom-right", Locale: "en"},
		APIKeys:        keys,
	}
	if hookURL != "" {
		b.Plan.Webhooks = true
		b.Webhooks = []tenant.Webhook{{ID: "dev", URL: hookURL, SigningSecrets: []string{c.WebhookSecret},
			Events: []tenant.Event{tenant.EventConversationCreated, tenant.EventLeadCreated, tenant.EventLeadUpdated,
				tenant.EventConversationHandoffRequested, tenant.EventConversationAgentMessage, tenant.EventConversationClosed, tenant.EventFeedbackCreated}}}
	}
	doc, err := tenant.Marshal(b)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, devMerchantID+".json"), doc, 0o600)
}

// seedDemoKnowledge fills an empty demo knowledge base with the demo shop's items, validated by chat as an import
// is, within the demo merchant's plan. The items keep the fixture's IDs ("kn_" and the fixture's) and order, the
// same on every fresh start.
func seedDemoKnowledge(ctx context.Context, a *app) error {
	existing, err := a.store.AllKnowledge(ctx, devMerchantID)
	if err != nil || len(existing) > 0 {
		return err
	}
	m, ok := a.tenants.Merchant(devMerchantID)
	if !ok {
		return fmt.Errorf("seeding demo knowledge: no merchant %s", devMerchantID)
	}
	var seeds []chat.Seed
	for _, item := range demo.Knowledge() {
		seeds = append(seeds, chat.Seed{Key: item.ID, Input: chat.KnowledgeInput{Title: item.Title, Content: item.Content, URL: item.URL, Tags: item.Tags}})
	}
	if _, err := a.chat.SeedKnowledge(ctx, m, seeds); err != nil {
		return fmt.Errorf("seeding demo knowledge: %w", err)
	}
	return nil
}

func printDevBanner(w io.Writer, base string, c devCredentials, token string) {
	fmt.Fprintf(w, `Parley dev is running at %[1]s with the demo merchant %[2]q.

  Publishable key (web pages):  %[3]s
  Secret key (servers):         %[4]s
  Dashboard ID token (24 h, owner %[5]s):
    %[6]s

Open %[1]s/ in a browser: the demo shop's page with the chat widget.
Open %[1]s/dashboard/ for the merchant dashboard: sign in as %[5]s at the dev issuer's page.

Or try the API in another terminal:

  export PARLEY_URL=%[1]s PARLEY_KEY=%[4]s
  export PARLEY_TOKEN=%[6]s

  curl -s "$PARLEY_URL/api/v1/chat" -H 'Content-Type: application/json' -H "X-API-Key: $PARLEY_KEY" \
    -d '{"message": "How long does shipping take?"}'
  curl -s "$PARLEY_URL/api/v1/conversations" -H "Authorization: Bearer $PARLEY_TOKEN"
  curl -s "$PARLEY_URL/api/v1/knowledge" -H "Authorization: Bearer $PARLEY_TOKEN"
  curl -s "$PARLEY_URL/api/v1/analytics/overview" -H "Authorization: Bearer $PARLEY_TOKEN"

The API is described at %[1]s/api/v1/openapi.json. Press Ctrl-C to stop.
`, base, devMerchantID, c.PublishableKey, c.SecretKey, devOwner, token)
}

// demoPageTemplate is the demo shop's page: the exact embed merchants paste, under a strict Content-Security-Policy
// the widget must work with.
var demoPageTemplate = template.Must(template.New("demo").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Acme Outdoor (Parley demo)</title>
</head>
<body>
<h1>Acme Outdoor</h1>
<p>This is the demo merchant's shop page. The chat button in the corner is Parley's widget, embedded with:</p>
<pre>{{.Snippet}}</pre>
<p>Ask it about shipping, returns, sizes, rentals or the loyalty programme.</p>
{{.Tag}}
</body>
</html>
`))

// demoPage serves the demo shop's page with the widget embedded for the demo merchant.
func demoPage(base, publishableKey string) http.Handler {
	snippet := fmt.Sprintf(`<script src="%s/widget.js" data-api-key="%s" data-merchant-id="%s" async></script>`, base, publishableKey, devMerchantID)
	var page bytes.Buffer
	// The tag is built from values parley dev generated itself, so it is safe to emit as HTML.
	if err := demoPageTemplate.Execute(&page, map[string]any{"Snippet": snippet, "Tag": template.HTML(snippet)}); err != nil { //nolint:gosec // see above
		panic(err) // the template is fixed and its data strings: caught by the tests
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; img-src 'self'")
		_, _ = w.Write(page.Bytes())
	})
}
