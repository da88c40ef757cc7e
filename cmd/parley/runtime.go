package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/parley-dev/parley/internal/contract"
	"github.com/parley-dev/parley/runtime/assistant"
	"github.com/parley-dev/parley/runtime/server"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/postgres"
	"github.com/parley-dev/parley/runtime/store/sqlite"
	"github.com/parley-dev/parley/runtime/tenant"
	"github.com/parley-dev/parley/runtime/webhook"
)

func runRuntime(ctx context.Context, args []string, stderr io.Writer) error {
	f, err := contract.ParseRuntime(args, os.Getenv, stderr)
	if err != nil {
		return err
	}
	log := newLogger(stderr, f.LogLevel, f.LogFormat)

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	tenants, err := tenant.NewRegistry(log, reg)
	if err != nil {
		return err
	}
	if f.TenantsDir != "" {
		err = tenant.WatchDir(ctx, f.TenantsDir, tenants)
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
		AllowPrivate: f.WebhookAllowPrivate})
	if err != nil {
		return err
	}
	defer stopHooks()

	cfg := server.Config{Tenants: tenants, Store: st, Responder: assistant.Retrieval{}, Logger: log, Registry: reg,
		PublicURL: f.PublicURL, Notify: hooks.Notify}
	limiter, closeLimiter, err := redisLimiter(f, log, reg)
	if err != nil {
		return err
	}
	defer closeLimiter()
	cfg.Limiter = limiter
	if f.OIDCIssuer != "" {
		cfg.Verifier = server.NewOIDCVerifier(f.OIDCIssuer, f.OIDCAudience, nil)
	}
	srv, err := server.New(cfg)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", f.Listen)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", f.Listen, err)
	}
	log.Info("serving the chat runtime", "version", version, "listen", ln.Addr().String(), "tenants", tenants.Len(), "storage", f.Storage, "tls", f.TLSCertFile != "")
	return server.Serve(ctx, ln, srv, f.TLSCertFile, f.TLSKeyFile, log)
}

// openStore opens the store --storage names and brings its schema up to date. Errors never contain the database
// URL's password.
func openStore(ctx context.Context, f contract.Runtime) (store.Store, error) {
	if f.Storage == contract.StoragePostgres {
		return postgres.Open(ctx, f.DatabaseURL)
	}
	return sqlite.Open(ctx, f.SQLitePath)
}

func watchSecrets(ctx context.Context, f contract.Runtime, tenants *tenant.Registry) error {
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("finding the cluster: %w", err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating a Kubernetes client: %w", err)
	}
	return tenant.WatchSecrets(ctx, client, f.Namespace, f.RuntimeName, tenants)
}
