package server

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestEveryRouteRefusesOtherMethods pins the routing table: each path answers a method it does not serve with
// 405, the JSON error envelope and an Allow header listing what it serves, HEAD included, and the refusal is
// counted under the route's name.
func TestEveryRouteRefusesOtherMethods(t *testing.T) {
	e := newEnv(t)
	// The methods refused are not in the OpenAPI document (and its router mistakes some of them for another
	// path's), so the envelope is checked here instead.
	e.validate = false
	routes := []struct{ path, name, allow string }{
		{"/api/v1/chat", "chat", "OPTIONS, POST"},
		{"/api/v1/conversations", "conversations", "GET"},
		{"/api/v1/conversations/conv_1", "conversation", "DELETE, GET"},
		{"/api/v1/knowledge", "knowledge", "GET, POST"},
		{"/api/v1/knowledge/kn_1", "knowledge_item", "DELETE, GET, PUT"},
		{"/api/v1/knowledge/files", "knowledge_files", "POST"},
		{"/api/v1/knowledge/sources", "knowledge_sources", "GET, POST"},
		{"/api/v1/knowledge/sources/src_1", "knowledge_source", "DELETE, GET"},
		{"/api/v1/knowledge/sources/src_1/sync", "knowledge_source_sync", "POST"},
		{"/api/v1/analytics/overview", "analytics_overview", "GET"},
		{"/api/v1/leads", "leads", "GET, OPTIONS, POST"},
		{"/api/v1/leads/lead_1", "lead", "DELETE"},
		{"/api/v1/webhooks/deliveries", "webhook_deliveries", "GET"},
		{"/api/v1/webhooks/deliveries/evt_1-hook", "webhook_delivery", "GET"},
		{"/api/v1/webhooks/deliveries/evt_1-hook/replay", "webhook_delivery_replay", "POST"},
		{"/api/v1/webhooks/endpoints/hook/test", "webhook_test", "POST"},
		{"/api/v1/widget", "widget_settings", "GET, OPTIONS"},
		{"/widget.js", "widget_js", "GET, HEAD"},
		{"/widget/fr.json", "widget_texts", "GET, HEAD"},
		{"/api/v1/openapi.json", "openapi", "GET, HEAD"},
		{"/healthz", "healthz", "GET, HEAD"},
		{"/readyz", "readyz", "GET, HEAD"},
	}
	all := []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions}
	for _, rt := range routes {
		for _, m := range all {
			if slices.Contains(strings.Split(rt.allow, ", "), m) {
				continue
			}
			r := e.do(m, rt.path, nil, "")
			if r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != rt.allow {
				t.Errorf("%s %s: %d, Allow %q; want 405, Allow %q", m, rt.path, r.status, r.header.Get("Allow"), rt.allow)
				continue
			}
			if m != http.MethodHead && r.errorCode(t) != codeMethodNotAllowed {
				t.Errorf("%s %s: %s", m, rt.path, r.body)
			}
		}
	}
	metrics := e.scrape()
	for _, rt := range routes {
		if want := `parley_runtime_http_requests_total{code="405",route="` + rt.name + `"}`; !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// TestUnknownPathsAnswerTheEnvelope checks that a path no route serves is a 404 envelope for every method,
// counted as unmatched.
func TestUnknownPathsAnswerTheEnvelope(t *testing.T) {
	e := newEnv(t)
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodOptions} {
		for _, path := range []string{"/", "/api/v1/nope", "/api/v1/chat/extra", "/api/v1/webhooks/deliveries/a/b/c",
			"/api/v1//chat", "/api/v1/knowledge/../conversations", "/api/v1/./chat", "//api/v1/chat"} {
			if r := e.do(m, path, nil, ""); r.status != http.StatusNotFound || r.errorCode(t) != codeNotFound {
				t.Errorf("%s %s: %d %s", m, path, r.status, r.body)
			}
		}
	}
	metrics := e.scrape()
	if !strings.Contains(metrics, `parley_runtime_http_requests_total{code="404",route="unmatched"}`) {
		t.Error("unknown paths are not counted as unmatched")
	}
}

// TestPreflightsAreAnswered checks the CORS preflight of the endpoints a browser calls with a key.
func TestPreflightsAreAnswered(t *testing.T) {
	e := newEnv(t)
	for _, path := range []string{"/api/v1/chat", "/api/v1/leads", "/api/v1/widget"} {
		r := e.do(http.MethodOptions, path, map[string]string{"Origin": "https://alpha.example"}, "")
		if r.status != http.StatusNoContent || r.header.Get("Access-Control-Allow-Origin") != "https://alpha.example" ||
			!strings.Contains(r.header.Get("Access-Control-Allow-Headers"), "X-API-Key") {
			t.Errorf("OPTIONS %s: %d %v", path, r.status, r.header)
		}
	}
}

// The public documents and probes answer HEAD as they answer GET, without the body.
func TestPublicDocumentsAnswerHead(t *testing.T) {
	e := newEnv(t)
	e.validate = false // the OpenAPI document lists GET only
	for _, path := range []string{"/widget.js", "/api/v1/openapi.json", "/healthz", "/readyz"} {
		gzip := map[string]string{"Accept-Encoding": "gzip"} // as Go's client asks on GET only, unless told
		get, head := e.do(http.MethodGet, path, gzip, ""), e.do(http.MethodHead, path, gzip, "")
		if get.status != http.StatusOK || head.status != http.StatusOK || len(head.body) != 0 {
			t.Errorf("%s: GET %d, HEAD %d with %d bytes; want 200 both, HEAD without a body", path, get.status, head.status, len(head.body))
		}
		for _, h := range []string{"Content-Type", "ETag", "Cache-Control"} {
			if get.header.Get(h) != head.header.Get(h) {
				t.Errorf("%s: %s %q on GET, %q on HEAD", path, h, get.header.Get(h), head.header.Get(h))
			}
		}
	}
}

// TestLiteralPathsBesideIDs checks each literal path that an {id} path also matches ("/conversations/export"
// beside "/conversations/{id}"): the ServeMux gives the literal path the word, so no ID the {id} path reads may
// be that word. Either the server makes the IDs, with a prefix the word lacks, or the word is reserved and
// refused as an ID a client names.
func TestLiteralPathsBesideIDs(t *testing.T) {
	canBe := map[string]func(word string) bool{ // a wildcard path → whether an ID it reads can be word
		"/api/v1/conversations/{id}": func(w string) bool { return !reservedConversationID(w) },
		"/api/v1/knowledge/{id}":     func(w string) bool { return strings.HasPrefix(w, "kn_") },
	}
	rt := (&Server{}).router()
	checked := 0
	for _, p := range rt.paths {
		for _, q := range rt.wildcardsMatching(p) {
			ok, known := canBe[q]
			if !known {
				t.Errorf("%s is beside %s, whose IDs are not known to stay clear of it", p, q)
				continue
			}
			qsegs, psegs := strings.Split(q, "/"), strings.Split(p, "/")
			for i, s := range qsegs {
				if strings.HasPrefix(s, "{") && ok(psegs[i]) {
					t.Errorf("%s takes %q from the IDs of %s", p, psegs[i], q)
				}
			}
			checked++
		}
	}
	if checked < 4 { // conversations/events, conversations/export, knowledge/files, knowledge/sources
		t.Errorf("checked %d literal paths beside an {id} path; want at least 4", checked)
	}
}
