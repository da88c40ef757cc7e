// Package server is the chat runtime's HTTP interface: /api/v1 as the OpenAPI document in runtime/api describes
// it, plus health endpoints; and, for a private listener, the metrics (MetricsHandler).
package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parley-dev/parley/runtime/api"
	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/live"
	"github.com/parley-dev/parley/runtime/ratelimit"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
)

// Config wires a Server.
type Config struct {
	Tenants *tenant.Registry
	// Chat runs the use cases the endpoints expose.
	Chat *chat.Service
	// Verifier checks dashboard ID tokens (an issuer.Client); without one the dashboard endpoints answer 401.
	Verifier TokenVerifier
	// Limiter applies the plans' request rates; an in-process token bucket per merchant when nil.
	Limiter RateLimiter
	Logger  *slog.Logger
	// Registry receives the runtime's metrics, served by MetricsHandler on a listener of its own.
	Registry *prometheus.Registry
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// PublicURL is the address visitors' browsers reach the API at, written into widget.js; empty lets the
	// script use the address it was loaded from.
	PublicURL string
	// TrustedProxies are the networks of the proxies in front of the runtime whose X-Forwarded-For names the
	// client address the abuse limits count; from anyone else X-Forwarded-For is ignored.
	TrustedProxies []netip.Prefix
	// Conversations counts new conversations per client address and visitor for the plans' abuse limits
	// (ratelimit.RedisKeyed shares them across replicas); in this process, bounded in memory, when nil.
	Conversations ratelimit.KeyedLimiter
	// Dashboard, when set, serves the merchants' dashboard under /dashboard/ (runtime/dashboard).
	Dashboard http.Handler
	// Live bounds and wakes the live streams; the chat service's Published should be its Publish. When nil,
	// streams are bounded by the defaults and find new events only by polling.
	Live *live.Hub
	// StreamPoll is how often a live stream reads the store for events written on other replicas; 2 seconds when 0.
	StreamPoll time.Duration
}

// Server serves the runtime's HTTP interface.
type Server struct {
	tenants  *tenant.Registry
	chat     *chat.Service
	store    store.Reader
	verifier TokenVerifier
	limiter  RateLimiter
	log      *slog.Logger
	registry *prometheus.Registry
	metrics  *httpMetrics
	// replies counts the replies and their model tokens by merchant.
	replies   *replyCounters
	now       func() time.Time
	openAPI   []byte
	publicURL string
	// publicOrigin is the scheme and host of publicURL, lower case; empty without a public URL.
	publicOrigin string
	clients      ratelimit.Clients
	forwarding   *forwardingNotice
	// conversations counts new conversations per client address and visitor for the abuse limits.
	conversations ratelimit.KeyedLimiter
	dashboard     http.Handler
	handler       http.Handler
	// replyBuffers are buffers for encoding chat replies (*[]byte), reused as encoding/json reuses its own.
	replyBuffers sync.Pool
	live         *live.Hub
	streamPoll   time.Duration
}

// New builds a Server.
func New(cfg Config) (*Server, error) {
	if cfg.Tenants == nil || cfg.Chat == nil || cfg.Registry == nil {
		return nil, errors.New("server: tenants, chat and registry are required")
	}
	doc, err := api.OpenAPIJSON()
	if err != nil {
		return nil, err
	}
	s := &Server{
		tenants: cfg.Tenants, chat: cfg.Chat, store: cfg.Chat.Store(), verifier: cfg.Verifier,
		limiter: cfg.Limiter, log: cfg.Logger, registry: cfg.Registry, now: cfg.Now, openAPI: doc, publicURL: strings.TrimRight(cfg.PublicURL, "/"),
		dashboard: cfg.Dashboard,
		clients:   ratelimit.NewClients(cfg.TrustedProxies), conversations: cfg.Conversations,
		live: cfg.Live, streamPoll: cfg.StreamPoll,
	}
	if s.live == nil {
		s.live = live.NewHub(DefaultMaxStreams, DefaultMaxStreamsPerMerchant)
	}
	if s.streamPoll <= 0 {
		s.streamPoll = defaultStreamPoll
	}
	if s.publicURL != "" {
		u, err := url.Parse(s.publicURL)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return nil, fmt.Errorf("server: the public URL %q is not an absolute URL", cfg.PublicURL)
		}
		s.publicOrigin = strings.ToLower(u.Scheme + "://" + u.Host)
	}
	if s.limiter == nil {
		s.limiter = ratelimit.NewLocal()
	}
	if s.conversations == nil {
		s.conversations = ratelimit.NewKeyed(ratelimit.DefaultMaxKeys)
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.metrics, err = newHTTPMetrics(cfg.Registry); err != nil {
		return nil, err
	}
	if s.forwarding, err = newForwardingNotice(cfg.Registry); err != nil {
		return nil, err
	}
	s.replies = newReplyCounters()
	if err := cfg.Registry.Register(s.replies); err != nil {
		return nil, fmt.Errorf("registering chat metrics: %w", err)
	}
	s.handler = s.instrument(s.routes())
	return s, nil
}

// ServeHTTP serves one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// ready answers 200 once the tenants are loaded and the store answers.
func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	if !s.tenants.Synced() {
		fail(w, r, newError(http.StatusServiceUnavailable, codeUnavailable, "tenant bundles are still loading"))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.chat.Ping(ctx); err != nil {
		logger(r).Error("store ping failed", "error", err)
		fail(w, r, newError(http.StatusServiceUnavailable, codeUnavailable, "the store does not answer"))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "tenants": s.tenants.Len()})
}

// maxHeaderBytes bounds a request's headers. The standard library's default, 1 MiB, lets anyone make the runtime
// hold a megabyte per connection before it knows who is asking (250 slow connections: a quarter of a GiB); the
// runtime's callers send a key or a token and, for the dashboard, its cookies: a few kilobytes.
const maxHeaderBytes = 64 << 10

// Serve serves handler on ln until ctx ends, then stops accepting and lets requests in flight finish (up to 25
// seconds). With certFile and keyFile it serves HTTPS, TLS 1.3 only.
func Serve(ctx context.Context, ln net.Listener, handler http.Handler, certFile, keyFile string, log *slog.Logger) error {
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes:    maxHeaderBytes,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	if certFile != "" {
		srv.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS13}
	}
	errc := make(chan error, 1)
	go func() {
		if certFile != "" {
			errc <- srv.ServeTLS(ln, certFile, keyFile)
		} else {
			errc <- srv.Serve(ln)
		}
	}()
	select {
	case err := <-errc:
		return fmt.Errorf("serving on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutting down: %w", err)
	}
	return nil
}
