package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parley-dev/parley/internal/dev/devidp"
	"github.com/parley-dev/parley/runtime/issuer"
)

// stalledIssuer is an identity provider that accepts connections and never answers the paths stall says, until
// the test ends; its other paths are a real issuer's.
func stalledIssuer(t *testing.T, stall func(path string) bool) (*devidp.Issuer, *atomic.Int32) {
	t.Helper()
	release := make(chan struct{})
	fetches := new(atomic.Int32)
	var idp *devidp.Issuer
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		if stall(r.URL.Path) {
			<-release
			return
		}
		idp.Handler().ServeHTTP(w, r)
	}))
	// Cleanups run last in, first out: release the handlers, then close the server.
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(release) })
	var err error
	if idp, err = devidp.New(ts.URL); err != nil {
		t.Fatal(err)
	}
	return idp, fetches
}

// A stalled identity provider makes the dashboard endpoints answer 503 unavailable within seconds, for every
// request at once, never a hang; discovery or the key set alike.
func TestStalledIssuer(t *testing.T) {
	for _, tt := range []struct {
		name  string
		stall func(string) bool
	}{
		{"discovery", func(string) bool { return true }},
		{"key set", func(p string) bool { return p == "/keys" }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			idp, _ := stalledIssuer(t, tt.stall)
			e := newEnv(t, func(c *envConfig) { c.server.Verifier = issuer.New(idp.URL(), audience, nil) })
			token, err := idp.Token(audience, "user-alpha", "alpha@owners.example", time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					r := e.do(http.MethodGet, "/api/v1/conversations", map[string]string{"Authorization": "Bearer " + token}, "")
					if r.status != http.StatusServiceUnavailable || r.errorCode(t) != codeUnavailable {
						t.Errorf("%d %s", r.status, r.body)
					}
				})
			}
			wg.Wait()
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("8 requests took %v with a stalled issuer", d)
			}
		})
	}
}

// Tokens signed with keys the issuer never published (forged) are refused without making the runtime fetch the
// key set for each of them.
func TestForgedTokensDoNotFetchKeys(t *testing.T) {
	idp, fetches := stalledIssuer(t, func(string) bool { return false })
	e := newEnv(t, func(c *envConfig) { c.server.Verifier = issuer.New(idp.URL(), audience, nil) })
	good, err := idp.Token(audience, "user-alpha", "alpha@owners.example", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if r := e.do(http.MethodGet, "/api/v1/conversations", map[string]string{"Authorization": "Bearer " + good}, ""); r.status != http.StatusOK {
		t.Fatalf("a good token: %d %s", r.status, r.body)
	}
	before := fetches.Load()
	forger, err := devidp.New(idp.URL()) // the same issuer name, another key
	if err != nil {
		t.Fatal(err)
	}
	for range 30 {
		forged, err := forger.Token(audience, "user-alpha", "alpha@owners.example", time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if r := e.do(http.MethodGet, "/api/v1/conversations", map[string]string{"Authorization": "Bearer " + forged}, ""); r.status != http.StatusUnauthorized {
			t.Fatalf("a forged token: %d %s", r.status, r.body)
		}
	}
	if n := fetches.Load() - before; n > 1 {
		t.Errorf("30 forged tokens made %d fetches from the issuer, want at most 1", n)
	}
}

// A request refused for want of a credential says how to authenticate (RFC 9110's WWW-Authenticate), and the
// bearer scheme's name is case-insensitive.
func TestUnauthorizedChallenges(t *testing.T) {
	e := newEnv(t)
	token := strings.TrimPrefix(e.ownerOf("alpha"), "Bearer ")
	for _, tt := range []struct {
		name, method, path string
		headers            map[string]string
		challenge          string
	}{
		{"no token", http.MethodGet, "/api/v1/conversations", nil, `Bearer realm="parley"`},
		{"another scheme", http.MethodGet, "/api/v1/conversations", map[string]string{"Authorization": "Basic " + token}, `Bearer realm="parley"`},
		{"a forged token", http.MethodGet, "/api/v1/conversations", map[string]string{"Authorization": "Bearer " + token + "x"}, `Bearer realm="parley", error="invalid_token"`},
		{"no key", http.MethodPost, "/api/v1/chat", nil, `APIKey realm="parley", header="X-API-Key"`},
		{"an unknown key", http.MethodPost, "/api/v1/chat", map[string]string{"X-API-Key": "sk_unknown"}, `APIKey realm="parley", header="X-API-Key"`},
	} {
		r := e.do(tt.method, tt.path, tt.headers, `{"message": "hi"}`)
		if r.status != http.StatusUnauthorized || r.errorCode(t) != codeUnauthorized || r.header.Get("WWW-Authenticate") != tt.challenge {
			t.Errorf("%s: %d %q %s, want 401 with %q", tt.name, r.status, r.header.Get("WWW-Authenticate"), r.body, tt.challenge)
		}
	}
	for _, scheme := range []string{"bearer", "BEARER"} {
		if r := e.do(http.MethodGet, "/api/v1/conversations", map[string]string{"Authorization": scheme + " " + token}, ""); r.status != http.StatusOK {
			t.Errorf("%s: %d %s", scheme, r.status, r.body)
		}
	}
}
