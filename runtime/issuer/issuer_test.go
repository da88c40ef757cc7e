package issuer

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/parley-dev/parley/internal/dev/devidp"
)

// realIssuer serves the dev issuer, but for the discovery document when discovery is set; fetches counts the
// requests for the discovery document.
func realIssuer(t *testing.T, discovery func(w http.ResponseWriter)) (*devidp.Issuer, *atomic.Int32) {
	t.Helper()
	fetches := new(atomic.Int32)
	var idp *devidp.Issuer
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/openid-configuration" {
			fetches.Add(1)
			if discovery != nil {
				discovery(w)
				return
			}
		}
		idp.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	var err error
	if idp, err = devidp.New(ts.URL); err != nil {
		t.Fatal(err)
	}
	return idp, fetches
}

// A discovery document past MaxFetchBytes is the issuer not answering, however valid, and sign-ins that follow
// within MinRefresh are told so without a fetch of their own.
func TestDiscoveryIsBounded(t *testing.T) {
	var url string
	idp, fetches := realIssuer(t, func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"issuer": url, "jwks_uri": url + "/keys",
			"authorization_endpoint": url + "/authorize", "token_endpoint": url + "/token", "padding": strings.Repeat("x", MaxFetchBytes)})
	})
	url = idp.URL()
	c := New(idp.URL(), "parley", nil)
	for range 5 {
		if _, err := c.AuthCodeURL(t.Context(), "http://app.example/cb", "st", "verifier-verifier-verifier-verifier-verifier", "n"); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("a discovery document past %d bytes: %v, want ErrUnavailable", MaxFetchBytes, err)
		}
	}
	if n := fetches.Load(); n != 1 {
		t.Errorf("5 sign-ins fetched the discovery document %d times, want 1", n)
	}
}

// The code flow's addresses come from discovery; a code the issuer refuses is a refusal, not the issuer being
// unavailable, so the dashboard says the sign-in failed rather than to retry later.
func TestExchangeRefusalIsNotUnavailability(t *testing.T) {
	idp, _ := realIssuer(t, nil)
	c := New(idp.URL(), "parley", nil)
	u, err := c.AuthCodeURL(t.Context(), "http://app.example/cb", "st", "verifier-verifier-verifier-verifier-verifier", "n")
	if err != nil || !strings.HasPrefix(u, idp.URL()+"/authorize?") || !strings.Contains(u, "code_challenge_method=S256") {
		t.Fatalf("the authorization address: %q, %v", u, err)
	}
	_, err = c.Exchange(t.Context(), "http://app.example/cb", "not-a-code", "verifier-verifier-verifier-verifier-verifier")
	if err == nil || errors.Is(err, ErrUnavailable) {
		t.Errorf("an unknown code: %v, want a refusal", err)
	}
}
