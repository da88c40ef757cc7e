package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/parley-dev/parley/runtime/tenant"
)

func TestWidgetSettings(t *testing.T) {
	e := newEnv(t)
	e.addMerchant("alpha", func(b *tenant.Bundle) {
		b.AllowedOrigins = []string{"https://alpha.example"}
		b.Widget = tenant.Widget{Title: "Alpha help", Greeting: "Hello from alpha", Color: "#112233", Position: "bottom-left", Locale: "de"}
	})
	tests := []struct {
		name, key, origin string
		status            int
		code              string
	}{
		{"publishable key from an allowed origin", "alpha-pk", "https://alpha.example", http.StatusOK, ""},
		{"publishable key from another origin", "alpha-pk", "https://evil.example", http.StatusForbidden, codeOriginNotAllowed},
		{"publishable key without an origin", "alpha-pk", "", http.StatusForbidden, codeOriginNotAllowed},
		{"another merchant's allowed origin", "beta-pk", "https://alpha.example", http.StatusForbidden, codeOriginNotAllowed},
		{"secret key from a browser", "alpha-sk", "https://alpha.example", http.StatusForbidden, codeSecretKeyInBrowser},
		{"unknown key", "", "https://alpha.example", http.StatusUnauthorized, codeUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := map[string]string{"X-API-Key": e.keys[tt.key]}
			if tt.key == "" {
				h["X-API-Key"] = "pk_unknown0_" + strings.Repeat("a", 43)
			}
			if tt.origin != "" {
				h["Origin"] = tt.origin
			}
			r := e.do(http.MethodGet, "/api/v1/widget", h, "")
			if r.status != tt.status {
				t.Fatalf("%d %s", r.status, r.body)
			}
			if tt.code != "" {
				if code := r.json(t)["error"].(map[string]any)["code"]; code != tt.code {
					t.Errorf("code %v, want %s", code, tt.code)
				}
				return
			}
			got := r.json(t)
			if got["merchant_id"] != "alpha" || got["title"] != "Alpha help" || got["greeting"] != "Hello from alpha" ||
				got["color"] != "#112233" || got["position"] != "bottom-left" || got["locale"] != "de" {
				t.Errorf("settings %v", got)
			}
			if r.header.Get("Access-Control-Allow-Origin") != tt.origin {
				t.Errorf("CORS allows %q", r.header.Get("Access-Control-Allow-Origin"))
			}
		})
	}
}

func TestWidgetScriptNamesThePublicURL(t *testing.T) {
	e := newEnv(t, func(c *envConfig) { c.server.PublicURL = "https://chat.example.com/" })
	r := e.do(http.MethodGet, "/widget.js", nil, "")
	if r.status != http.StatusOK || !strings.Contains(string(r.body), `var API = "https://chat.example.com";`) {
		t.Fatalf("%d; the script does not name the public URL", r.status)
	}
	if r.header.Get("Content-Type") != "text/javascript; charset=utf-8" || r.header.Get("ETag") == "" {
		t.Errorf("headers %v", r.header)
	}
	if r := e.do(http.MethodPost, "/widget.js", nil, ""); r.status != http.StatusMethodNotAllowed {
		t.Errorf("POST /widget.js: %d", r.status)
	}
}

// A browser sends no Origin on a same-origin GET: the runtime's own pages (the demo shop of parley dev) reach the
// widget's settings as the runtime's public origin, with Sec-Fetch-Site: same-origin, and only when the merchant
// allows that origin. Nothing else without an Origin gets through.
func TestWidgetSettingsSameOrigin(t *testing.T) {
	e := newEnv(t, func(c *envConfig) { c.server.PublicURL = "https://chat.example.com/" })
	e.addMerchant("alpha", func(b *tenant.Bundle) {
		b.AllowedOrigins = []string{"https://alpha.example", "https://chat.example.com"}
	})
	tests := []struct {
		name, key string
		headers   map[string]string
		status    int
		code      string
	}{
		{"same-origin GET of the runtime's page", "alpha-pk", map[string]string{"Sec-Fetch-Site": "same-origin"}, http.StatusOK, ""},
		{"the runtime's origin named", "alpha-pk", map[string]string{"Origin": "https://chat.example.com"}, http.StatusOK, ""},
		{"same-origin for a merchant not allowing the runtime's origin", "beta-pk", map[string]string{"Sec-Fetch-Site": "same-origin"}, http.StatusForbidden, codeOriginNotAllowed},
		{"no Origin and no fetch metadata (curl)", "alpha-pk", map[string]string{}, http.StatusForbidden, codeOriginNotAllowed},
		{"no Origin from another site", "alpha-pk", map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden, codeOriginNotAllowed},
		{"no Origin from a sibling site", "alpha-pk", map[string]string{"Sec-Fetch-Site": "same-site"}, http.StatusForbidden, codeOriginNotAllowed},
		{"a typed address", "alpha-pk", map[string]string{"Sec-Fetch-Site": "none"}, http.StatusForbidden, codeOriginNotAllowed},
		{"another origin named though same-origin claimed", "alpha-pk", map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "same-origin"}, http.StatusForbidden, codeOriginNotAllowed},
		{"secret key from the runtime's page", "alpha-sk", map[string]string{"Sec-Fetch-Site": "same-origin"}, http.StatusForbidden, codeSecretKeyInBrowser},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := map[string]string{"X-API-Key": e.keys[tt.key]}
			for k, v := range tt.headers {
				h[k] = v
			}
			r := e.do(http.MethodGet, "/api/v1/widget", h, "")
			if r.status != tt.status {
				t.Fatalf("%d %s", r.status, r.body)
			}
			if tt.code != "" && r.errorCode(t) != tt.code {
				t.Errorf("code %s, want %s", r.errorCode(t), tt.code)
			}
		})
	}
}

// Without a public URL the runtime has no origin of its own, and a same-origin request without Origin is refused.
func TestWidgetSettingsSameOriginWithoutPublicURL(t *testing.T) {
	e := newEnv(t)
	r := e.do(http.MethodGet, "/api/v1/widget", map[string]string{"X-API-Key": e.keys["alpha-pk"], "Sec-Fetch-Site": "same-origin"}, "")
	if r.status != http.StatusForbidden || r.errorCode(t) != codeOriginNotAllowed {
		t.Fatalf("%d %s", r.status, r.body)
	}
}
