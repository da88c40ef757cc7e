// Package dashboard is the merchants' web dashboard, served by the runtime under /dashboard/: sign-in with the
// runtime's OpenID Connect issuer (authorization code flow with PKCE, the runtime as a public client), a signed
// session cookie, CSRF protection on every change, and server-rendered pages in English and German under a strict
// Content-Security-Policy. It reads through the chat service's store and changes data only through its use cases.
package dashboard

import (
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/input"
	"github.com/parley-dev/parley/runtime/issuer"
	"github.com/parley-dev/parley/runtime/ratelimit"
	"github.com/parley-dev/parley/runtime/store"
	"github.com/parley-dev/parley/runtime/tenant"
	"github.com/parley-dev/parley/runtime/transcript"
)

// prefix is where the dashboard is mounted.
const prefix = "/dashboard/"

// badAddress is the answer to an address that breaks the rules of runtime/input.
const badAddress = "This address holds something that cannot be read: a malformed escape, or characters that are not text. " +
	"Correct it and try again."

// MinKeySize is the shortest session key accepted, in bytes.
const MinKeySize = 32

// csp allows the dashboard's own script and style sheet and nothing else: no inline code, no frames of it.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

//go:embed templates static
var files embed.FS

// Config wires a Dashboard.
type Config struct {
	Tenants *tenant.Registry
	Chat    *chat.Service
	// Issuer is the client of the OpenID Connect issuer owners sign in with, the runtime's client ID there the
	// audience of the ID tokens; the API's bearer tokens share it.
	Issuer *issuer.Client
	// PublicURL is the runtime's address as browsers reach it; the redirect URL is PublicURL/dashboard/callback,
	// and cookies are Secure when it is https.
	PublicURL string
	// SessionKey signs the session cookies, at least MinKeySize bytes; runtimes sharing sessions share it.
	SessionKey []byte
	// Limiter applies the owners' request rate (ratelimit.Owner), shared with the API's owner calls; an
	// in-process one when nil.
	Limiter ratelimit.Limiter
	// SignIns counts sign-ins per client address (ratelimit.RedisKeyed shares them across replicas, with the
	// API's abuse limits: the keys do not meet); in this process, bounded in memory, when nil.
	SignIns ratelimit.KeyedLimiter
	// TrustedProxies are the networks of the proxies in front of the runtime whose X-Forwarded-For names the
	// client address the sign-in limit counts, as for the API's abuse limits.
	TrustedProxies []netip.Prefix
	Logger         *slog.Logger
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Dashboard serves the dashboard's pages.
type Dashboard struct {
	tenants   *tenant.Registry
	chat      *chat.Service
	store     store.Reader
	issuer    *issuer.Client
	limiter   ratelimit.Limiter
	signIns   ratelimit.KeyedLimiter
	clients   ratelimit.Clients
	cookies   cookies
	publicURL string
	log       *slog.Logger
	now       func() time.Time
	pages     map[string]*template.Template
	mux       *http.ServeMux
}

// New builds a Dashboard.
func New(cfg Config) (*Dashboard, error) {
	if cfg.Tenants == nil || cfg.Chat == nil {
		return nil, errors.New("dashboard: tenants and chat are required")
	}
	if cfg.Issuer == nil {
		return nil, errors.New("dashboard: an OIDC issuer is required")
	}
	if len(cfg.SessionKey) < MinKeySize {
		return nil, fmt.Errorf("dashboard: the session key must be at least %d bytes", MinKeySize)
	}
	u, err := url.Parse(cfg.PublicURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("dashboard: the public URL must be an absolute http or https URL")
	}
	d := &Dashboard{tenants: cfg.Tenants, chat: cfg.Chat, store: cfg.Chat.Store(), publicURL: strings.TrimRight(cfg.PublicURL, "/"),
		log: cfg.Logger, now: cfg.Now, limiter: cfg.Limiter, issuer: cfg.Issuer, signIns: cfg.SignIns,
		clients: ratelimit.NewClients(cfg.TrustedProxies)}
	if d.log == nil {
		d.log = slog.Default()
	}
	if d.now == nil {
		d.now = time.Now
	}
	if d.limiter == nil {
		d.limiter = ratelimit.NewLocal()
	}
	if d.signIns == nil {
		d.signIns = ratelimit.NewKeyed(ratelimit.DefaultMaxKeys)
	}
	d.cookies = cookies{key: cfg.SessionKey, secure: u.Scheme == "https", now: d.now}
	if d.pages, err = parsePages(); err != nil {
		return nil, err
	}
	d.mux = d.routes()
	return d, nil
}

// ServeHTTP serves one request under /dashboard/.
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	// The API's rules for a request's address (runtime/input), for every page at once: a path (its {id}s) or a
	// query that is not storable text, or a malformed escape, is the caller's mistake, never a store's error nor
	// a filter silently dropped.
	if _, err := input.Query(r.URL.RawQuery); err != nil || !input.Storable(r.URL.Path) {
		if isPreview(r) {
			previewError(w, http.StatusBadRequest, "invalid_request", "the address holds a malformed escape or characters that are not text")
			return
		}
		d.renderError(w, r, http.StatusBadRequest, badAddress)
		return
	}
	if l := r.URL.Query().Get("lang"); slices.Contains(languages, l) {
		//nolint:gosec // Secure follows the public URL's scheme: plain http in development only
		http.SetCookie(w, &http.Cookie{Name: langCookie, Value: l, Path: prefix, MaxAge: 365 * 24 * 3600, HttpOnly: true,
			Secure: d.cookies.secure, SameSite: http.SameSiteLaxMode})
	}
	d.mux.ServeHTTP(w, r)
}

func (d *Dashboard) routes() *http.ServeMux {
	mux := http.NewServeMux()
	static, _ := fs.Sub(files, "static") // the directory is embedded
	mux.Handle("GET /dashboard/static/", http.StripPrefix(prefix+"static/", staticFiles(static)))
	mux.Handle("GET /dashboard/login", d.limitSignIns(d.login))
	mux.Handle("GET /dashboard/callback", d.limitSignIns(d.callback))
	mux.Handle("POST /dashboard/logout", d.change(d.logout))
	mux.Handle("GET /dashboard/merchants", d.signedIn(d.merchants))
	mux.Handle("POST /dashboard/merchants", d.change(d.chooseMerchant))

	mux.Handle("GET /dashboard/{$}", d.page(d.overview))
	mux.Handle("GET /dashboard/conversations", d.page(d.conversations))
	mux.Handle("GET /dashboard/conversations.jsonl", d.page(d.exportConversations(transcript.JSONL)))
	mux.Handle("GET /dashboard/conversations.csv", d.page(d.exportConversations(transcript.CSV)))
	mux.Handle("GET /dashboard/conversations/{id}", d.page(d.conversation))
	mux.Handle("POST /dashboard/conversations/{id}/delete", d.change(d.merchantChange(d.deleteConversation)))
	mux.Handle("GET /dashboard/inbox", d.page(d.inbox))
	mux.Handle("POST /dashboard/conversations/{id}/messages", d.change(d.merchantChange(d.teamMessage)))
	mux.Handle("POST /dashboard/conversations/{id}/handoff", d.change(d.merchantChange(d.takeOver)))
	mux.Handle("POST /dashboard/conversations/{id}/release", d.change(d.merchantChange(d.release)))
	mux.Handle("POST /dashboard/conversations/{id}/close", d.change(d.merchantChange(d.closeConversation)))
	mux.Handle("GET /dashboard/knowledge", d.page(d.knowledge))
	mux.Handle("POST /dashboard/knowledge", d.change(d.merchantChange(d.createKnowledge)))
	mux.Handle("GET /dashboard/knowledge/export/{format}", d.page(d.exportKnowledge))
	mux.Handle("POST /dashboard/knowledge/import", d.change(d.merchantChange(d.importKnowledge)))
	mux.Handle("POST /dashboard/knowledge/files", d.change(d.merchantChange(d.uploadFiles)))
	mux.Handle("GET /dashboard/knowledge/{id}", d.page(d.editKnowledge))
	mux.Handle("POST /dashboard/knowledge/{id}", d.change(d.merchantChange(d.updateKnowledge)))
	mux.Handle("POST /dashboard/knowledge/{id}/delete", d.change(d.merchantChange(d.deleteKnowledge)))
	mux.Handle("GET /dashboard/sources", d.page(d.sources))
	mux.Handle("POST /dashboard/sources", d.change(d.merchantChange(d.createSource)))
	mux.Handle("POST /dashboard/sources/{id}/sync", d.change(d.merchantChange(d.syncSource)))
	mux.Handle("POST /dashboard/sources/{id}/delete", d.change(d.merchantChange(d.deleteSource)))
	mux.Handle("GET /dashboard/review", d.page(d.review))
	mux.Handle("GET /dashboard/review.csv", d.page(d.exportReview))
	mux.Handle("POST /dashboard/review/fix", d.change(d.merchantChange(d.fixReview)))
	mux.Handle("POST /dashboard/review/draft", d.change(d.merchantChange(d.draftReview)))
	mux.Handle("GET /dashboard/leads", d.page(d.leads))
	mux.Handle("GET /dashboard/leads.csv", d.page(d.exportLeads))
	mux.Handle("POST /dashboard/leads/{id}/delete", d.change(d.merchantChange(d.deleteLead)))
	mux.Handle("GET /dashboard/webhooks", d.page(d.webhooks))
	mux.Handle("POST /dashboard/webhooks/{id}/replay", d.change(d.merchantChange(d.replay)))
	mux.Handle("POST /dashboard/webhooks/endpoints/{id}/test", d.change(d.merchantChange(d.sendTestEvent)))
	mux.Handle("GET /dashboard/settings", d.page(d.settings))
	mux.Handle("GET /dashboard/preview/widget", d.preview(d.previewWidget))
	mux.Handle("POST /dashboard/preview/chat", d.preview(d.previewChat))
	mux.Handle("POST /dashboard/keys", d.change(d.merchantChange(d.createKey)))
	mux.Handle("POST /dashboard/keys/{id}/revoke", d.change(d.merchantChange(d.revokeKey)))
	mux.HandleFunc("/dashboard/", func(w http.ResponseWriter, r *http.Request) {
		allow := allowedMethods(mux, r)
		if len(allow) > 0 {
			w.Header().Set("Allow", strings.Join(allow, ", "))
		}
		switch {
		case isPreview(r) && len(allow) > 0:
			previewError(w, http.StatusMethodNotAllowed, "method_not_allowed", "this endpoint does not take this method")
		case isPreview(r):
			previewError(w, http.StatusNotFound, "not_found", "no such preview endpoint")
		case len(allow) > 0:
			d.renderError(w, r, http.StatusMethodNotAllowed, "This page does not take this kind of request.")
		default:
			d.renderError(w, r, http.StatusNotFound, "This page does not exist.")
		}
	})
	return mux
}

// allowedMethods returns the methods mux serves r's path with, other than through its catch-all "/dashboard/":
// those a request the catch-all took could have used instead (405 and Allow, as HTTP asks). The runtime sends
// the dashboard GET and POST only, and answers other methods itself.
func allowedMethods(mux *http.ServeMux, r *http.Request) []string {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost} {
		probe := &http.Request{Method: m, URL: r.URL, Host: r.Host}
		if _, pattern := mux.Handler(probe); pattern != "" && pattern != "/dashboard/" {
			allow = append(allow, m)
		}
	}
	return allow
}

// staticFiles serves the embedded script and style sheet, cacheable for a day, and no listing of them.
func staticFiles(fsys fs.FS) http.Handler {
	files := http.FileServerFS(fsys)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if st, err := fs.Stat(fsys, strings.TrimPrefix(r.URL.Path, "/")); err != nil || st.IsDir() {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=86400")
		files.ServeHTTP(w, r)
	})
}
