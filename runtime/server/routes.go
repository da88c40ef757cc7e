package server

import (
	"net/http"
	"path"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/parley-dev/parley/internal/contract"
	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/tenant"
	"github.com/parley-dev/parley/runtime/widget"
)

// routes is the runtime's HTTP interface.
func (s *Server) routes() http.Handler { return s.router().mux() }

// router holds the routes: one line per method and path, under a name that labels the route's metrics and logs.
// A literal path beside an {id} path ("/conversations/export" beside "/conversations/{id}") takes its word from
// the IDs the {id} path can read: the server makes those IDs, or reservedConversationID refuses the word as one.
func (s *Server) router() *router {
	rt := newRouter()
	rt.handle("chat", "POST /api/v1/chat", s.visitor(s.answer))
	rt.handle("chat", "OPTIONS /api/v1/chat", http.HandlerFunc(preflight))
	rt.handle("chat_feedback", "POST /api/v1/chat/feedback", s.visitor(s.rateAnswer))
	rt.handle("chat_feedback", "OPTIONS /api/v1/chat/feedback", http.HandlerFunc(preflight))
	rt.handle("chat_satisfaction", "POST /api/v1/chat/satisfaction", s.visitor(s.rateConversation))
	rt.handle("chat_satisfaction", "OPTIONS /api/v1/chat/satisfaction", http.HandlerFunc(preflight))
	rt.handle("conversations", "GET /api/v1/conversations", s.team(s.listConversations))
	rt.handle("conversations_export", "GET /api/v1/conversations/export", s.team(s.exportConversations))
	rt.handle("conversations_events", "GET /api/v1/conversations/events", s.team(s.teamEvents))
	rt.handle("conversation", "GET /api/v1/conversations/{id}", s.team(s.getConversation))
	rt.handle("conversation", "DELETE /api/v1/conversations/{id}", s.owner(s.deleteConversation))
	rt.handle("conversation_events", "GET /api/v1/conversations/{id}/events", s.visitor(s.conversationEvents))
	rt.handle("conversation_events", "OPTIONS /api/v1/conversations/{id}/events", http.HandlerFunc(preflight))
	rt.handle("conversation_messages", "POST /api/v1/conversations/{id}/messages", s.team(s.postTeamMessage))
	rt.handle("conversation_handoff", "POST /api/v1/conversations/{id}/handoff", s.team(s.takeOver))
	rt.handle("conversation_release", "POST /api/v1/conversations/{id}/release", s.team(s.release))
	rt.handle("conversation_close", "POST /api/v1/conversations/{id}/close", s.team(s.closeConversation))
	rt.handle("knowledge", "GET /api/v1/knowledge", s.owner(s.listKnowledge))
	rt.handle("knowledge", "POST /api/v1/knowledge", s.owner(s.createKnowledge))
	rt.handle("knowledge_files", "POST /api/v1/knowledge/files", s.owner(s.uploadKnowledgeFiles))
	rt.handle("knowledge_item", "GET /api/v1/knowledge/{id}", s.owner(s.getKnowledge))
	rt.handle("knowledge_item", "PUT /api/v1/knowledge/{id}", s.owner(s.updateKnowledge))
	rt.handle("knowledge_item", "DELETE /api/v1/knowledge/{id}", s.owner(s.deleteKnowledge))
	rt.handle("knowledge_sources", "GET /api/v1/knowledge/sources", s.owner(s.listSources))
	rt.handle("knowledge_sources", "POST /api/v1/knowledge/sources", s.owner(s.createSource))
	rt.handle("knowledge_source", "GET /api/v1/knowledge/sources/{id}", s.owner(s.getSource))
	rt.handle("knowledge_source", "DELETE /api/v1/knowledge/sources/{id}", s.owner(s.deleteSource))
	rt.handle("knowledge_source_sync", "POST /api/v1/knowledge/sources/{id}/sync", s.owner(s.syncSource))
	rt.handle("analytics_overview", "GET /api/v1/analytics/overview", s.owner(s.analyticsOverview))
	rt.handle("analytics_feedback", "GET /api/v1/analytics/feedback", s.owner(s.feedbackAnalytics))
	rt.handle("usage", "GET /api/v1/usage", s.owner(s.usage))
	rt.handle("review", "GET /api/v1/review", s.owner(s.review))
	rt.handle("review_fixes", "POST /api/v1/review/fixes", s.owner(s.fixReview))
	rt.handle("review_draft", "POST /api/v1/review/draft", s.ownerOrServer(s.draftReview))
	rt.handle("leads", "POST /api/v1/leads", s.visitor(s.createLead))
	rt.handle("leads", "GET /api/v1/leads", s.owner(s.listLeads))
	rt.handle("leads", "OPTIONS /api/v1/leads", http.HandlerFunc(preflight))
	rt.handle("lead", "DELETE /api/v1/leads/{id}", s.owner(s.deleteLead))
	rt.handle("privacy_export", "POST /api/v1/privacy/export", s.ownerOrServer(s.exportSubject))
	rt.handle("privacy_erase", "POST /api/v1/privacy/erase", s.ownerOrServer(s.eraseSubject))
	rt.handle("webhook_deliveries", "GET /api/v1/webhooks/deliveries", s.owner(s.listDeliveries))
	rt.handle("webhook_delivery", "GET /api/v1/webhooks/deliveries/{id}", s.owner(s.getDelivery))
	rt.handle("webhook_delivery_replay", "POST /api/v1/webhooks/deliveries/{id}/replay", s.owner(s.replayDelivery))
	rt.handle("webhook_test", "POST /api/v1/webhooks/endpoints/{id}/test", s.owner(s.sendTestEvent))
	rt.handle("widget_settings", "GET /api/v1/widget", http.HandlerFunc(s.widgetSettings))
	rt.handle("widget_settings", "OPTIONS /api/v1/widget", http.HandlerFunc(preflight))
	// The public documents and probes also answer HEAD, for caches, link checkers and load balancers.
	rt.handleGetHead("widget_js", "/widget.js", widget.Handler(s.publicURL))
	rt.handleGetHead("widget_texts", "/widget/{file}", widget.TextsHandler())
	rt.handleGetHead("openapi", "/api/v1/openapi.json", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", contentTypeJSON)
		_, _ = w.Write(s.openAPI)
	}))
	if s.dashboard != nil {
		rt.handle("dashboard", "GET /dashboard/", s.dashboard)
		rt.handle("dashboard", "POST /dashboard/", s.dashboard)
	}
	rt.handleGetHead("healthz", "/healthz", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	}))
	rt.handleGetHead("readyz", "/readyz", http.HandlerFunc(s.ready))
	return rt
}

// MetricsHandler serves the runtime's Prometheus metrics at GET /metrics and, with svc, every merchant's usage at
// GET contract.UsagePath for the operator, on a listener of its own (--metrics-listen): they name every merchant
// and its traffic, so they are never on the public port.
func MetricsHandler(reg *prometheus.Registry, tenants *tenant.Registry, svc *chat.Service) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	if svc != nil {
		mux.HandleFunc("GET "+contract.UsagePath, func(w http.ResponseWriter, r *http.Request) {
			report, err := svc.UsageReport(r.Context(), tenants.All())
			if err != nil {
				http.Error(w, "counting usage failed", http.StatusServiceUnavailable) // for the operator, which retries
				return
			}
			writeJSON(w, http.StatusOK, report)
		})
	}
	return mux
}

// router registers method patterns ("POST /api/v1/chat") on an http.ServeMux, each under its route's name,
// and answers what the ServeMux would answer in plain text in the API's error envelope instead.
type router struct {
	m     *http.ServeMux
	paths []string            // in registration order
	allow map[string][]string // path → methods served
	names map[string]string   // path → route name
}

func newRouter() *router {
	return &router{m: http.NewServeMux(), allow: map[string][]string{}, names: map[string]string{}}
}

// handle serves pattern, "METHOD /path", with h. All methods of a path share one name.
func (rt *router) handle(name, pattern string, h http.Handler) {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok || method == "" {
		panic("server: route pattern " + pattern + " has no method")
	}
	if old, seen := rt.names[path]; !seen {
		rt.paths = append(rt.paths, path)
		rt.names[path] = name
	} else if old != name {
		panic("server: path " + path + " is named both " + old + " and " + name)
	}
	rt.allow[path] = append(rt.allow[path], method)
	if method == http.MethodGet {
		h = rt.refuseHead(path, h)
	}
	rt.m.Handle(pattern, named(name, h))
}

// refuseHead makes a GET handler, which the ServeMux also gives HEAD requests, refuse HEAD when path does not
// serve it, with the Allow header of the path's methods once every route is in.
func (rt *router) refuseHead(path string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead && !slices.Contains(rt.allow[path], http.MethodHead) {
			methodNotAllowed(strings.Join(slices.Sorted(slices.Values(rt.allow[path])), ", ")).ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// handleGetHead serves GET and HEAD of path with h; the server sends a HEAD's headers without the body.
func (rt *router) handleGetHead(name, path string, h http.Handler) {
	rt.handle(name, http.MethodGet+" "+path, h)
	rt.handle(name, http.MethodHead+" "+path, h)
}

// mux completes the ServeMux and returns the handler in front of it. Left alone, a ServeMux answers a known path
// with a method it does not serve, and an unknown path, in plain text, lets a GET pattern serve HEAD, and
// redirects a path that is not clean ("/api/v1//chat", "/a/../b") to the cleaned one. So each path also gets a
// pattern without a method, which the ServeMux picks only when none of the path's method patterns matches,
// answering 405 with Allow; a path served by GET alone refuses HEAD in its GET handler (refuseHead); "/"
// answers 404; and a path that is not clean answers 404 before the ServeMux sees it. The ServeMux's own answers
// are never reached.
func (rt *router) mux() http.Handler {
	for _, path := range rt.paths {
		methods := slices.Sorted(slices.Values(rt.allow[path]))
		refuse := named(rt.names[path], methodNotAllowed(strings.Join(methods, ", ")))
		if len(rt.wildcardsMatching(path)) > 0 {
			// A path a wildcard path matches too ("/knowledge/files", "/knowledge/{id}") cannot have a pattern
			// without a method: the ServeMux finds it in conflict with the wildcard's method patterns. It refuses
			// the standard methods it does not serve one by one instead.
			for _, m := range standardMethods {
				if !slices.Contains(methods, m) {
					rt.m.Handle(m+" "+path, refuse)
				}
			}
			continue
		}
		rt.m.Handle(path, refuse)
	}
	notFound := func(w http.ResponseWriter, r *http.Request) {
		fail(w, r, newError(http.StatusNotFound, codeNotFound, "no such endpoint: %s", r.URL.Path))
	}
	rt.m.HandleFunc("/", notFound)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isCleanPath(r.URL.Path) {
			notFound(w, r)
			return
		}
		rt.m.ServeHTTP(w, r)
	})
}

// standardMethods are the methods a shadowed path refuses explicitly.
var standardMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
	http.MethodDelete, http.MethodOptions}

// wildcardsMatching returns the other paths, with wildcards, that also match the literal path p.
func (rt *router) wildcardsMatching(p string) []string {
	segs := strings.Split(p, "/")
	var out []string
	for _, q := range rt.paths {
		qsegs := strings.Split(q, "/")
		if q == p || !strings.Contains(q, "{") || len(qsegs) != len(segs) {
			continue
		}
		match := true
		for i, s := range qsegs {
			if s != segs[i] && !strings.HasPrefix(s, "{") {
				match = false
				break
			}
		}
		if match {
			out = append(out, q)
		}
	}
	return out
}

// isCleanPath reports whether p is a path the ServeMux serves as it is, rather than redirecting it: the cleaned
// path (path.Clean), or that with a trailing slash.
func isCleanPath(p string) bool {
	c := path.Clean(p)
	return p == c || p == c+"/"
}

// named records the route's name for the metrics and the access log written by instrument.
func named(name string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if i := info(r); i != nil {
			i.route = name
		}
		h.ServeHTTP(w, r)
	})
}

// methodNotAllowed answers a method the path does not serve.
func methodNotAllowed(allow string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allow)
		fail(w, r, newError(http.StatusMethodNotAllowed, codeMethodNotAllowed, "%s is not allowed here; use %s", r.Method, allow))
	})
}

// visitor wraps an API-key handler (the widget's or a merchant's server's) with CORS, key authentication and the
// merchant's rate limit.
func (s *Server) visitor(h func(http.ResponseWriter, *http.Request, *tenant.Bundle) error) http.HandlerFunc {
	keyed := s.keyed(h, "")
	return func(w http.ResponseWriter, r *http.Request) {
		allowCORS(w, r)
		keyed(w, r)
	}
}

// ownerOrServer wraps a handler that a merchant's owner calls from the dashboard or the merchant's own servers
// call (ownerOrSecretKey).
func (s *Server) ownerOrServer(h func(http.ResponseWriter, *http.Request, *tenant.Bundle) error) http.HandlerFunc {
	return s.ownerOrSecretKey(h, "this call needs a secret key or an owner's ID token, not a publishable key")
}

// ownerOrSecretKey wraps a handler that a merchant's owner calls from the dashboard (a bearer ID token, as owner)
// or the merchant's own servers call with a secret key in X-API-Key (as visitor, with the merchant's rate
// limit). A publishable key, which any web page may hold, is refused with the message publishable.
func (s *Server) ownerOrSecretKey(h func(http.ResponseWriter, *http.Request, *tenant.Bundle) error, publishable string) http.HandlerFunc {
	owner, keyed := s.owner(h), s.keyed(h, publishable)
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(headerAPIKey) == "" {
			owner(w, r)
			return
		}
		keyed(w, r)
	}
}

// keyed wraps a handler with API-key authentication and the merchant's rate limit. Unless publishable is empty,
// a publishable key is refused with that message.
func (s *Server) keyed(h func(http.ResponseWriter, *http.Request, *tenant.Bundle) error, publishable string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		caller, err := s.authenticateKey(r)
		if err == nil && publishable != "" && caller.key.Type != tenant.KeySecret {
			err = newError(http.StatusForbidden, codeForbidden, "%s", publishable)
		}
		if err == nil {
			err = s.limit(w, r, caller.merchant)
		}
		if err == nil {
			err = h(w, withCaller(r, caller), caller.merchant)
		}
		if err != nil {
			fail(w, r, err)
		}
	}
}

// owner wraps a dashboard handler with bearer authentication and the owners' own rate limit.
func (s *Server) owner(h func(http.ResponseWriter, *http.Request, *tenant.Bundle) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		m, err := s.authenticateOwner(r)
		if err == nil {
			err = s.limitOwner(w, r, m)
		}
		if err == nil {
			err = h(w, r, m)
		}
		if err != nil {
			fail(w, r, err)
		}
	}
}
