package devidp

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coreos/go-oidc/v3/oidc"
)

func TestOpenKeepsTheKey(t *testing.T) {
	file := filepath.Join(t.TempDir(), "idp-key.pem")
	a, err := Open("http://idp.example", file)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Open("http://idp.example", file)
	if err != nil {
		t.Fatal(err)
	}
	if a.keyID != b.keyID || !a.key.Equal(b.key) {
		t.Error("a second Open made a new key")
	}
	c, err := New("http://idp.example")
	if err != nil {
		t.Fatal(err)
	}
	if c.keyID == a.keyID {
		t.Error("New reused the kept key")
	}
}

func TestCodeFlowWithPKCE(t *testing.T) {
	ts := httptest.NewUnstartedServer(nil)
	iss, err := New("http://" + ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = iss.Handler()
	ts.Start()
	defer ts.Close()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	verifier := "a-verifier-long-enough-for-the-pkce-rules-0123456789"
	sum := sha256.Sum256([]byte(verifier))
	params := url.Values{"response_type": {"code"}, "client_id": {"parley"}, "redirect_uri": {"http://app.example/cb"},
		"state": {"st"}, "nonce": {"n1"}, "code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"}}

	noPKCE := url.Values{}
	for k, v := range params {
		if k != "code_challenge" {
			noPKCE[k] = v
		}
	}
	res, err := client.Get(ts.URL + "/authorize?" + noPKCE.Encode())
	if err != nil || res.StatusCode != http.StatusBadRequest {
		t.Fatalf("authorize without PKCE: %v %v", res, err)
	}
	_ = res.Body.Close()
	page, err := client.Get(ts.URL + "/authorize?" + params.Encode())
	if err != nil || page.StatusCode != http.StatusOK {
		t.Fatalf("login page: %v %v", page, err)
	}
	_ = page.Body.Close()
	form := url.Values{"email": {"owner@shop.example"}}
	for k, v := range params {
		form[k] = v
	}
	res, err = client.PostForm(ts.URL+"/authorize", form)
	if err != nil || res.StatusCode != http.StatusSeeOther {
		t.Fatalf("authorize: %v %v", res, err)
	}
	_ = res.Body.Close()
	back, _ := url.Parse(res.Header.Get("Location"))
	if back.Host != "app.example" || back.Query().Get("state") != "st" || back.Query().Get("code") == "" {
		t.Fatalf("redirected to %s", back)
	}
	redeem := func(v string) (int, map[string]any) {
		res, err := client.PostForm(ts.URL+"/token", url.Values{"grant_type": {"authorization_code"}, "code": {back.Query().Get("code")},
			"client_id": {"parley"}, "redirect_uri": {"http://app.example/cb"}, "code_verifier": {v}})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = res.Body.Close() }()
		var body map[string]any
		_ = json.NewDecoder(res.Body).Decode(&body)
		return res.StatusCode, body
	}
	if status, body := redeem("the-wrong-verifier-0123456789012345678901234567890"); status != http.StatusBadRequest || body["error"] != "invalid_grant" {
		t.Fatalf("a wrong verifier: %d %v", status, body)
	}
	// A refused attempt used the code up: the right verifier comes too late.
	if status, _ := redeem(verifier); status != http.StatusBadRequest {
		t.Fatalf("a used code was redeemed: %d", status)
	}

	res, err = client.PostForm(ts.URL+"/authorize", form)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	back, _ = url.Parse(res.Header.Get("Location"))
	status, body := redeem(verifier)
	if status != http.StatusOK {
		t.Fatalf("redeeming: %d %v", status, body)
	}
	provider, err := oidc.NewProvider(t.Context(), iss.URL())
	if err != nil {
		t.Fatal(err)
	}
	tok, err := provider.Verifier(&oidc.Config{ClientID: "parley"}).Verify(t.Context(), body["id_token"].(string))
	if err != nil {
		t.Fatal(err)
	}
	var claims struct {
		Email, Nonce string
	}
	_ = tok.Claims(&claims)
	if claims.Email != "owner@shop.example" || claims.Nonce != "n1" || !strings.Contains(tok.Subject, "owner@") {
		t.Errorf("claims %+v, subject %s", claims, tok.Subject)
	}
	if status, _ := redeem(verifier); status != http.StatusBadRequest {
		t.Error("a code was redeemed twice")
	}
}

// The sign-in page is filled with the client's login_hint, else the issuer's suggestion, and its style is the only
// thing its Content-Security-Policy lets it apply.
func TestLoginPageSuggestsAnEmail(t *testing.T) {
	idp, err := New("http://idp.example")
	if err != nil {
		t.Fatal(err)
	}
	idp.SuggestedEmail = "dev@parley.local"
	params := url.Values{"response_type": {"code"}, "client_id": {"dash"}, "redirect_uri": {"http://app.example/cb"},
		"code_challenge": {"abc"}, "code_challenge_method": {"S256"}}
	for hint, want := range map[string]string{"": "dev@parley.local", "owner@shop.example": "owner@shop.example"} {
		q := url.Values{"login_hint": {hint}}
		for k, v := range params {
			q[k] = v
		}
		rec := httptest.NewRecorder()
		idp.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/authorize?"+q.Encode(), nil))
		if page := rec.Body.String(); rec.Code != http.StatusOK || !strings.Contains(page, `value="`+want+`"`) {
			t.Errorf("login_hint %q: %d, want the field filled with %s:\n%s", hint, rec.Code, want, page)
		}
		sum := sha256.Sum256([]byte(loginStyle))
		csp := rec.Header().Get("Content-Security-Policy")
		if !strings.Contains(rec.Body.String(), "<style>"+loginStyle+"</style>") ||
			!strings.Contains(csp, "style-src 'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'") || !strings.Contains(csp, "default-src 'none'") {
			t.Errorf("the page's style is not the one its policy %q allows", csp)
		}
	}
}
