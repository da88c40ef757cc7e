package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/parley-dev/parley/runtime/assistant"
	"github.com/parley-dev/parley/runtime/server"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/postgres"
	"github.com/parley-dev/parley/runtime/store/sqlite"
	"github.com/parley-dev/parley/runtime/tenant"
	"github.com/parley-dev/parley/runtime/webhook"
)

// runtimeFlags are `parley runtime`'s settings; the operator renders them from a ChatRuntime.
type runtimeFlags struct {
	namespace, runtimeName, tenantsDir string
	listen, publicURL, widgetURL       string
	storage, sqlitePath, assistant     string
	openAIBaseURL, openAIModel         string
	oidcIssuer, oidcAudience           string
	tlsCert, tlsKey                    string
	webhookAllowPrivate                bool
	logLevel                           slog.Level
	logFormat                          string
	// databaseURL is PostgreSQL's connection URL, from $PARLEY_DATABASE_URL only: a flag would show its
	// password in the process list.
	databaseURL string
}

func runRuntime(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("parley runtime", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f runtimeFlags
	fs.StringVar(&f.namespace, "namespace", os.Getenv("POD_NAMESPACE"), "namespace of the tenant bundle Secrets (default: the pod's namespace)")
	fs.StringVar(&f.runtimeName, "runtime-name", "default", "the ChatRuntime whose tenant bundles to serve")
	fs.StringVar(&f.tenantsDir, "tenants-dir", "", "read tenant bundles from this directory instead of Kubernetes Secrets")
	fs.StringVar(&f.listen, "listen", ":8080", "address to serve on")
	fs.StringVar(&f.publicURL, "public-url", "", "the address visitors reach the API at (written into widget.js)")
	fs.StringVar(&f.widgetURL, "widget-url", "", "the address widget.js is served from (default: --public-url)")
	fs.StringVar(&f.storage, "storage", "sqlite", "store: sqlite (a file, one replica) or postgres (shared by replicas; "+
		"the connection URL is read from $"+databaseURLEnv+")")
	fs.StringVar(&f.sqlitePath, "sqlite-path", "parley.db", "SQLite database file")
	fs.StringVar(&f.assistant, "assistant", "retrieval", "answer provider: retrieval")
	fs.StringVar(&f.openAIBaseURL, "openai-base-url", "", "OpenAI-compatible API address (assistant openai)")
	fs.StringVar(&f.openAIModel, "openai-model", "", "model name (assistant openai)")
	fs.StringVar(&f.oidcIssuer, "oidc-issuer", "", "OIDC issuer of dashboard ID tokens; without it the dashboard endpoints answer 401")
	fs.StringVar(&f.oidcAudience, "oidc-audience", "", "the client ID dashboard ID tokens must be issued for")
	fs.StringVar(&f.tlsCert, "tls-cert-file", "", "serve HTTPS (TLS 1.3) with this certificate")
	fs.StringVar(&f.tlsKey, "tls-key-file", "", "the certificate's private key")
	fs.BoolVar(&f.webhookAllowPrivate, "webhook-allow-private", false, "let webhooks reach loopback, private and link-local addresses (refused by default)")
	fs.TextVar(&f.logLevel, "log-level", slog.LevelInfo, "log level: debug, info, warn or error")
	fs.StringVar(&f.logFormat, "log-format", "json", "log format: json or text")
	var redis redisFlags
	redis.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	f.databaseURL = os.Getenv(databaseURLEnv)
	if err := f.validate(); err != nil {
		return err
	}
	if err := redis.validate(); err != nil {
		return err
	}
	log := newLogger(stderr, f.logLevel, f.logFormat)

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	tenants, err := tenant.NewRegistry(log, reg)
	if err != nil {
		return err
	}
	if f.tenantsDir != "" {
		err = tenant.WatchDir(ctx, f.tenantsDir, tenants)
	} else {
		err = watchSecrets(ctx, f, tenants)
	}
	if err != nil {
		return err
	}
	st, err := openStore(ctx, f)
	if err != nil {
		return err
	}
	defer func() { _ = st.Close() }()

	hooks, stopHooks, err := startWebhooks(ctx, webhook.Config{Store: st, Tenants: tenants, Logger: log, Registry: reg,
		AllowPrivate: f.webhookAllowPrivate})
	if err != nil {
		return err
	}
	defer stopHooks()

	cfg := server.Config{Tenants: tenants, Store: st, Responder: assistant.Retrieval{}, Logger: log, Registry: reg,
		PublicURL: f.publicURL, Notify: hooks.Notify}
	limiter, closeLimiter, err := redis.limiter(log, reg)
	if err != nil {
		return err
	}
	defer closeLimiter()
	cfg.Limiter = limiter
	if f.oidcIssuer != "" {
		cfg.Verifier = server.NewOIDCVerifier(f.oidcIssuer, f.oidcAudience, nil)
	}
	srv, err := server.New(cfg)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", f.listen, err)
	}
	log.Info("serving the chat runtime", "version", version, "listen", ln.Addr().String(), "tenants", tenants.Len(), "storage", f.storage, "tls", f.tlsCert != "")
	return server.Serve(ctx, ln, srv, f.tlsCert, f.tlsKey, log)
}

func (f runtimeFlags) validate() error {
	switch {
	case f.storage != "sqlite" && f.storage != "postgres":
		return fmt.Errorf("--storage=%s is not available in this version; use sqlite or postgres", f.storage)
	case f.storage == "postgres" && f.databaseURL == "":
		return fmt.Errorf("--storage=postgres needs the database's connection URL in $%s", databaseURLEnv)
	case f.assistant != "retrieval":
		return fmt.Errorf("--assistant=%s is not available in this version; use retrieval", f.assistant)
	case (f.tlsCert == "") != (f.tlsKey == ""):
		return errors.New("--tls-cert-file and --tls-key-file go together")
	case (f.oidcIssuer == "") != (f.oidcAudience == ""):
		return errors.New("--oidc-issuer and --oidc-audience go together")
	case f.tenantsDir == "" && f.namespace == "":
		return errors.New("--namespace is required to read tenant bundles from Kubernetes (or give --tenants-dir)")
	}
	return nil
}

// databaseURLEnv holds PostgreSQL's connection URL; the operator sets it from the ChatRuntime's
// spec.storage.postgres Secret.
const databaseURLEnv = "PARLEY_DATABASE_URL"

// openStore opens the store --storage names and brings its schema up to date. Errors never contain the database
// URL's password.
func openStore(ctx context.Context, f runtimeFlags) (store.Store, error) {
	if f.storage == "postgres" {
		return postgres.Open(ctx, f.databaseURL)
	}
	return sqlite.Open(ctx, f.sqlitePath)
}

func watchSecrets(ctx context.Context, f runtimeFlags, tenants *tenant.Registry) error {
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("finding the cluster: %w", err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating a Kubernetes client: %w", err)
	}
	return tenant.WatchSecrets(ctx, client, f.namespace, f.runtimeName, tenants)
}
