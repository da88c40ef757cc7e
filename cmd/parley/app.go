package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/parley-dev/parley/internal/contract"
	"github.com/parley-dev/parley/runtime/assistant"
	"github.com/parley-dev/parley/runtime/assistant/embeddings"
	"github.com/parley-dev/parley/runtime/assistant/llm"
	"github.com/parley-dev/parley/runtime/backup"
	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/crawl"
	"github.com/parley-dev/parley/runtime/dashboard"
	"github.com/parley-dev/parley/runtime/gitsource"
	"github.com/parley-dev/parley/runtime/ids"
	"github.com/parley-dev/parley/runtime/issuer"
	"github.com/parley-dev/parley/runtime/live"
	"github.com/parley-dev/parley/runtime/ratelimit"
	"github.com/parley-dev/parley/runtime/server"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/store/postgres"
	"github.com/parley-dev/parley/runtime/store/sqlite"
	"github.com/parley-dev/parley/runtime/tenant"
	"github.com/parley-dev/parley/runtime/webhook"
)

// app is the chat runtime assembled from its configuration. `parley runtime` and `parley dev` both build it
// with assemble, so that they differ only in their configuration (and in what dev serves beside it).
type app struct {
	cfg     contract.Runtime
	log     *slog.Logger
	tenants *tenant.Registry
	store   store.Store
	// metrics is the registry all parts report to, served apart from the handler (serveMetrics).
	metrics *prometheus.Registry
	// chat answers the usage the metrics listener serves the operator.
	chat *chat.Service
	// backups takes the SQLite store's scheduled backups and reports them on the metrics listener; nil when off.
	backups *backup.Scheduler
	// handler is the runtime's HTTP interface.
	handler http.Handler
	// cancel stops the tenant source, the webhook dispatcher and the eraser; closers then release the rest, last
	// first.
	cancel  context.CancelFunc
	closers []func()
}

// assemble builds the runtime cfg describes: the tenant source (a directory or the Kubernetes Secrets), the
// store, the webhook dispatcher, the eraser of deleted merchants' data, the rate limiter and the HTTP server, all reporting to one metrics registry. It
// returns once the tenants are loaded and the store is migrated. The caller must close the app.
func assemble(ctx context.Context, cfg contract.Runtime, log *slog.Logger) (_ *app, err error) {
	ctx, cancel := context.WithCancel(ctx)
	a := &app{cfg: cfg, log: log, cancel: cancel}
	defer func() {
		if err != nil {
			a.close()
		}
	}()

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	a.metrics = reg
	if a.tenants, err = tenant.NewRegistry(log, reg); err != nil {
		return nil, fmt.Errorf("the tenant registry: %w", err)
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	a.store = st
	a.closers = append(a.closers, func() { _ = a.store.Close() })
	for _, c := range st.Collectors() {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("registering the store's metrics: %w", err)
		}
	}

	// The store is open before the first bundle arrives: a merchant is served only once the store knows it as its
	// Merchant's (a Merchant created again under a deleted one's name finds the predecessor's data erased).
	identities, err := chat.NewIdentities(ctx, chat.IdentitiesConfig{Store: a.store, Logger: log, Registry: reg})
	if err != nil {
		return nil, fmt.Errorf("the merchants' identities: %w", err)
	}
	a.tenants.SetAdmission(func(b *tenant.Bundle) error { return identities.Admit(ctx, b.MerchantID, b.UID) })
	go a.tenants.RetryHeld(ctx, 10*time.Second)
	if cfg.TenantsDir != "" {
		err = tenant.WatchDir(ctx, cfg.TenantsDir, a.tenants)
	} else {
		err = watchSecrets(ctx, cfg, a.tenants)
	}
	if err != nil {
		return nil, err
	}

	hooks, err := webhook.New(webhook.Config{Outbox: chat.Outbox{Store: a.store}, Tenants: a.tenants, Logger: log, Registry: reg,
		AllowPrivate: cfg.WebhookAllowPrivate})
	if err != nil {
		return nil, fmt.Errorf("starting webhook deliveries: %w", err)
	}
	hooksDone := make(chan struct{})
	go func() {
		defer close(hooksDone)
		_ = hooks.Run(ctx) // returns when ctx ends
	}()
	// Waits until the attempts in flight are recorded, before the store closes.
	a.closers = append(a.closers, func() { <-hooksDone })

	eraser, err := chat.NewEraser(chat.EraserConfig{Store: a.store, Tenants: a.tenants, Retention: cfg.DeletedMerchantRetention,
		Logger: log, Registry: reg})
	if err != nil {
		return nil, fmt.Errorf("the eraser of deleted merchants' data: %w", err)
	}
	eraserDone := make(chan struct{})
	go func() {
		defer close(eraserDone)
		eraser.Run(ctx) // returns when ctx ends
	}()
	// Waits until an erasure in flight is written, before the store closes.
	a.closers = append(a.closers, func() { <-eraserDone })

	if cfg.Backup.Dir != "" {
		if err := a.startBackups(ctx, reg); err != nil {
			return nil, err
		}
	}
	host, _ := os.Hostname() // the pod's name, in the lease for whoever reads the table; the ID makes it unique
	sweeper, err := chat.NewSweeper(chat.SweeperConfig{Store: a.store, Merchants: a.tenants.All, Holder: host + "/" + ids.New("sweeper_"),
		Logger: log, Registry: reg})
	if err != nil {
		return nil, fmt.Errorf("the retention sweeper: %w", err)
	}
	sweeperDone := make(chan struct{})
	go func() {
		defer close(sweeperDone)
		sweeper.Run(ctx) // returns when ctx ends
	}()
	// Waits until a batch in flight is written, before the store closes.
	a.closers = append(a.closers, func() { <-sweeperDone })

	shared, closeLimiter, err := redisLimiter(cfg, log, reg)
	if err != nil {
		return nil, err
	}
	a.closers = append(a.closers, closeLimiter)
	// One request limiter, so that the API and the dashboard share the owners' budget. Without Redis the server
	// counts new conversations in this process.
	var limiter ratelimit.Limiter = ratelimit.NewLocal()
	var conversations ratelimit.KeyedLimiter
	if shared != nil {
		limiter, conversations = shared, shared.Keyed()
	}

	responder, err := newResponder(cfg, log, reg)
	if err != nil {
		return nil, err
	}
	embedders, err := newEmbedders(cfg, log)
	if err != nil {
		return nil, err
	}
	hub := live.NewHub(server.DefaultMaxStreams, server.DefaultMaxStreamsPerMerchant)
	ccfg := chat.Config{Store: a.store, Responder: responder, Notify: hooks.Notify, Logger: log,
		IndexCacheBytes: cfg.IndexCacheBytes, Registry: reg, Published: hub.Publish, Embedders: embedders}
	svc, err := chat.New(ccfg)
	if err != nil {
		return nil, fmt.Errorf("the chat service: %w", err)
	}
	a.chat = svc
	if len(embedders) > 0 {
		ke, err := chat.NewKnowledgeEmbedder(chat.KnowledgeEmbedderConfig{Service: svc, Embedders: embedders, Tenants: a.tenants,
			Holder:    host + "/" + ids.New("embedder_"),
			Merchants: a.tenants.All, Logger: log, Registry: reg})
		if err != nil {
			return nil, fmt.Errorf("the knowledge embedder: %w", err)
		}
		embedsDone := make(chan struct{})
		go func() {
			defer close(embedsDone)
			ke.Run(ctx) // returns when ctx ends
		}()
		// Waits until the batches in flight are written, before the store closes.
		a.closers = append(a.closers, func() { <-embedsDone })
	}
	// The crawler and the Git reader reach the addresses webhooks may: private ones only where the runtime allows
	// them.
	syncer, err := chat.NewSyncer(chat.SyncerConfig{Service: svc, Tenants: a.tenants, Logger: log,
		Crawler: crawl.New(crawl.Config{AllowPrivate: cfg.WebhookAllowPrivate}),
		Git:     gitsource.New(gitsource.Config{AllowPrivate: cfg.WebhookAllowPrivate})})
	if err != nil {
		return nil, fmt.Errorf("the knowledge source syncer: %w", err)
	}
	syncsDone := make(chan struct{})
	go func() {
		defer close(syncsDone)
		syncer.Run(ctx) // returns when ctx ends
	}()
	// Waits until the syncs in flight have recorded their outcome, before the store closes.
	a.closers = append(a.closers, func() { <-syncsDone })
	scfg := server.Config{Tenants: a.tenants, Chat: svc, Limiter: limiter, Conversations: conversations, Logger: log, Registry: reg,
		PublicURL: cfg.PublicURL, TrustedProxies: cfg.TrustedProxies, Live: hub}
	if cfg.OIDCIssuer != "" {
		// One client of the issuer for the API's bearer tokens and the dashboard's sign-in, so that both keep to
		// its bounds and share its fetches.
		idp := issuer.New(cfg.OIDCIssuer, cfg.OIDCAudience, nil)
		scfg.Verifier = idp
		if scfg.Dashboard, err = newDashboard(cfg, idp, a.tenants, svc, limiter, conversations, log); err != nil {
			return nil, err
		}
	}
	if a.handler, err = server.New(scfg); err != nil {
		return nil, fmt.Errorf("the chat server: %w", err)
	}
	return a, nil
}

// newResponder builds the answer provider cfg names: the offline retrieval assistant, or a model that falls back
// to it; with --providers, the models that merchants' plans name, beside the default.
func newResponder(cfg contract.Runtime, log *slog.Logger, reg prometheus.Registerer) (assistant.Responder, error) {
	if cfg.Assistant != contract.AssistantOpenAI && len(cfg.Providers) == 0 {
		return assistant.Retrieval{}, nil
	}
	lc := llm.Config{ContextItems: contract.DefaultOpenAIContextItems, HistoryTokens: contract.DefaultOpenAIHistoryTokens,
		Providers: providers(cfg.Providers), Offline: assistant.Retrieval{}, Logger: log, Registry: reg}
	o := cfg.OpenAI
	if o.ContextItems > 0 { // the prompt's bounds are the openai flags', whichever provider answers
		lc.ContextItems, lc.HistoryTokens = o.ContextItems, o.HistoryTokens
	}
	if cfg.Assistant == contract.AssistantOpenAI {
		lc.BaseURL, lc.Model, lc.APIKey, lc.AzureAPIVersion = o.BaseURL, o.Model, o.APIKey, o.AzureAPIVersion
		lc.Timeout, lc.FirstTokenTimeout, lc.IdleTimeout = o.Timeout, o.FirstTokenTimeout, o.IdleTimeout
		lc.Temperature, lc.OmitTemperature, lc.MaxTokens = o.Temperature, o.OmitTemperature, o.MaxTokens
		lc.MaxCompletionTokens, lc.ContextWindow = o.MaxCompletionTokens, o.ContextWindow
	}
	r, err := llm.New(lc)
	if err != nil {
		return nil, fmt.Errorf("the openai assistant: %w", err)
	}
	if cfg.Assistant == contract.AssistantOpenAI {
		log.Info("answering with a model", "base_url", o.BaseURL, "model", o.Model, "api_key_set", o.APIKey != "")
	}
	for _, p := range cfg.Providers {
		log.Info("answering the plans that name it with a provider's models", "provider", p.Name, "base_url", p.BaseURL,
			"models", len(p.Models), "api_key_set", p.APIKey != "")
	}
	return r, nil
}

// newEmbedders builds a client for each provider's embedding model, the openai assistant's named "" and each of
// --providers by its name; a merchant whose provider has none is searched by words alone.
func newEmbedders(cfg contract.Runtime, log *slog.Logger) (chat.Embedders, error) {
	out := chat.Embedders{}
	add := func(provider, baseURL, apiKey, azureAPIVersion string, e contract.Embeddings) error {
		c, err := embeddings.New(embeddings.Config{BaseURL: baseURL, Model: e.Model, APIKey: apiKey,
			AzureAPIVersion: azureAPIVersion, Dimensions: e.Dimensions, BatchSize: e.BatchSize})
		if err != nil {
			return fmt.Errorf("the embeddings client of provider %q: %w", provider, err)
		}
		log.Info("searching the knowledge by meaning too", "provider", provider, "model", c.Model())
		out[provider] = c
		return nil
	}
	if o := cfg.OpenAI; cfg.Assistant == contract.AssistantOpenAI && o.Embeddings.Model != "" {
		if err := add("", o.BaseURL, o.APIKey, o.AzureAPIVersion, o.Embeddings); err != nil {
			return nil, err
		}
	}
	for _, p := range cfg.Providers {
		if p.Embeddings != nil {
			if err := add(p.Name, p.BaseURL, p.APIKey, p.AzureAPIVersion, *p.Embeddings); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// providers are the runtime's --providers as the model client takes them, the defaults filled in.
func providers(ps contract.Providers) []llm.Provider {
	out := make([]llm.Provider, 0, len(ps))
	for _, p := range ps {
		lp := llm.Provider{Name: p.Name, BaseURL: p.BaseURL, APIKey: p.APIKey, AzureAPIVersion: p.AzureAPIVersion}
		for _, m := range p.Models {
			t := m.Timeouts()
			lp.Models = append(lp.Models, llm.Model{Name: m.Name, Temperature: m.TemperatureOrDefault(), OmitTemperature: m.OmitTemperature,
				MaxTokens: m.MaxTokensOrDefault(), MaxCompletionTokens: m.MaxCompletionTokens, ContextWindow: m.ContextWindow,
				Timeouts: llm.Timeouts{FirstToken: t.FirstToken, Idle: t.Idle, Overall: t.Overall}})
		}
		out = append(out, lp)
	}
	return out
}

// newDashboard builds the merchants' dashboard, or returns nil when there is no public URL to send the identity
// provider's redirects to. Its sign-ins are counted per client address by keyed, as the API's abuse limits are.
func newDashboard(cfg contract.Runtime, idp *issuer.Client, tenants *tenant.Registry, svc *chat.Service, limiter ratelimit.Limiter,
	keyed ratelimit.KeyedLimiter, log *slog.Logger) (http.Handler, error) {
	if cfg.PublicURL == "" {
		log.Info("the dashboard is off: it needs --" + contract.FlagPublicURL + " for its sign-in redirect")
		return nil, nil
	}
	key := []byte(cfg.SessionKey)
	if len(key) == 0 {
		log.Warn("$" + contract.EnvSessionKey + " is not set: dashboard sessions end when this process stops and are not shared by replicas")
		key = make([]byte, dashboard.MinKeySize)
		_, _ = rand.Read(key) // never fails
	}
	d, err := dashboard.New(dashboard.Config{Tenants: tenants, Chat: svc, Issuer: idp,
		PublicURL: cfg.PublicURL, SessionKey: key, Limiter: limiter, SignIns: keyed, TrustedProxies: cfg.TrustedProxies, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("the dashboard: %w", err)
	}
	return d, nil
}

// startBackups takes the SQLite store's backups on the configured schedule until ctx ends.
func (a *app) startBackups(ctx context.Context, reg prometheus.Registerer) error {
	b := a.cfg.Backup
	schedule, err := contract.ParseSchedule(b.Schedule)
	if err != nil {
		return err
	}
	src := a.cfg.SQLitePath
	s, err := backup.New(backup.Config{Dir: b.Dir, Schedule: schedule, Keep: b.Keep, MaxAge: b.MaxAge, Logger: a.log, Registry: reg,
		Backup: func(ctx context.Context, dst string) (int64, error) {
			info, err := sqlite.Backup(ctx, src, dst)
			return info.Size, err
		}})
	if err != nil {
		return err
	}
	a.backups = s
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Run(ctx) // returns when ctx ends
	}()
	// Waits until a backup in flight is interrupted and its temporary file removed, before the store closes.
	a.closers = append(a.closers, func() { <-done })
	a.log.Info("backing up the store", "dir", b.Dir, "schedule", b.Schedule, "keep", b.Keep, "max_age", b.MaxAge.String())
	return nil
}

// serve serves h (the app's handler, or one that wraps it) on ln, with TLS when the configuration names a
// certificate, until ctx ends; then it shuts down gracefully.
func (a *app) serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	a.log.Info("serving the chat runtime", "version", version, "listen", ln.Addr().String(), "tenants", a.tenants.Len(),
		"storage", a.cfg.Storage, "tls", a.cfg.TLSCertFile != "")
	return server.Serve(ctx, ln, h, a.cfg.TLSCertFile, a.cfg.TLSKeyFile, a.log)
}

// serveMetrics serves the Prometheus metrics, the usage report and, with backups on, their report on ln, a
// listener apart from the public one, until ctx ends.
func (a *app) serveMetrics(ctx context.Context, ln net.Listener) error {
	a.log.Info("serving metrics", "metrics_listen", ln.Addr().String())
	h := server.MetricsHandler(a.metrics, a.tenants, a.chat)
	if a.backups != nil {
		mux := http.NewServeMux()
		mux.Handle("/", h)
		mux.Handle("GET "+contract.BackupPath, a.backups.Handler())
		h = mux
	}
	return server.Serve(ctx, ln, h, "", "", a.log)
}

// close stops the background work and releases the store and the rate limiter.
func (a *app) close() {
	a.cancel()
	for _, c := range slices.Backward(a.closers) {
		c()
	}
}

// listen opens the TCP listener of addr.
func listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", addr, err)
	}
	return ln, nil
}

// measuredStore is a store with metrics of its own, as both stores have.
type measuredStore interface {
	store.Store
	Collectors() []prometheus.Collector
}

// openStore opens the store cfg names and brings its schema up to date. Errors never contain the database URL's
// password.
func openStore(ctx context.Context, cfg contract.Runtime) (measuredStore, error) {
	if cfg.Storage == contract.StoragePostgres {
		return postgres.Open(ctx, cfg.DatabaseURL)
	}
	return sqlite.Open(ctx, cfg.SQLitePath)
}

// watchSecrets loads the tenant bundle Secrets of the configured runtime from the cluster and keeps them current.
func watchSecrets(ctx context.Context, cfg contract.Runtime, tenants *tenant.Registry) error {
	// $KUBECONFIG or ~/.kube/config when there is one, else the pod's service account.
	kcfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(clientcmd.NewDefaultClientConfigLoadingRules(),
		&clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return fmt.Errorf("finding the cluster: %w", err)
	}
	return tenant.WatchSecrets(ctx, kcfg, cfg.Namespace, cfg.RuntimeName, tenants)
}
