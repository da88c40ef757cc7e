package dashboard

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestSessionCookie(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	c := cookies{key: []byte(strings.Repeat("k", MinKeySize)), secure: true, now: func() time.Time { return now }}
	s := session{Subject: "u1", Email: "o@shop.example", EmailVerified: true, Merchant: "alpha", CSRF: "t", Expires: now.Add(time.Hour).Unix()}
	rec := httptest.NewRecorder()
	if err := c.saveSession(rec, s); err != nil {
		t.Fatal(err)
	}
	ck := rec.Result().Cookies()[0]
	if ck.Name != "__Host-parley_session" || !ck.HttpOnly || !ck.Secure || ck.SameSite != http.SameSiteLaxMode || ck.Path != "/" ||
		ck.Domain != "" || ck.MaxAge <= 0 {
		t.Errorf("cookie attributes: %+v", ck)
	}
	read := func(value string) (session, bool) {
		r := httptest.NewRequest(http.MethodGet, "/dashboard/", nil)
		r.AddCookie(&http.Cookie{Name: ck.Name, Value: value})
		return c.session(r)
	}
	if got, ok := read(ck.Value); !ok || got != s {
		t.Fatalf("reading it back: %+v %v", got, ok)
	}
	// A changed payload, a login cookie presented as a session, an expired session, another key: all refused.
	payload, sig, _ := strings.Cut(ck.Value, ".")
	forged, _ := c.seal(sessionCookie, session{Subject: "u2", CSRF: "t", Expires: s.Expires})
	forgedPayload, _, _ := strings.Cut(forged, ".")
	login, _ := c.seal(loginCookie, session{Subject: "u1", CSRF: "t", Expires: s.Expires})
	expired, _ := c.seal(sessionCookie, session{Subject: "u1", CSRF: "t", Expires: now.Unix()})
	other := cookies{key: []byte(strings.Repeat("o", MinKeySize)), now: c.now}
	elsewhere, _ := other.seal(sessionCookie, s)
	for name, v := range map[string]string{
		"changed payload": forgedPayload + "." + sig, "no signature": payload, "login cookie": login,
		"expired": expired, "another key": elsewhere, "garbage": "x.y",
	} {
		if _, ok := read(v); ok {
			t.Errorf("%s: accepted", name)
		}
	}
}

// Under TLS the cookies have the __Host- prefix, and one without it (planted by a plain-http page or another host
// of the domain) is not read; over plain http (development) they keep their names, scoped to the dashboard.
func TestCookieNamesFollowTheScheme(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	s := session{Subject: "u1", CSRF: "t", Expires: now.Add(time.Hour).Unix()}
	for _, tt := range []struct {
		secure     bool
		name, path string
	}{{true, "__Host-parley_session", "/"}, {false, "parley_session", prefix}} {
		c := cookies{key: []byte(strings.Repeat("k", MinKeySize)), secure: tt.secure, now: func() time.Time { return now }}
		rec := httptest.NewRecorder()
		if err := c.saveSession(rec, s); err != nil {
			t.Fatal(err)
		}
		ck := rec.Result().Cookies()[0]
		if ck.Name != tt.name || ck.Path != tt.path || ck.Secure != tt.secure {
			t.Errorf("secure=%v: %s, Path %s, Secure %v; want %s, Path %s", tt.secure, ck.Name, ck.Path, ck.Secure, tt.name, tt.path)
		}
		if tt.secure {
			planted := httptest.NewRequest(http.MethodGet, "/dashboard/", nil)
			planted.AddCookie(&http.Cookie{Name: sessionCookie, Value: ck.Value})
			if _, ok := c.session(planted); ok {
				t.Error("a session cookie without the __Host- prefix was read under TLS")
			}
		}
	}
}

func TestLocalPath(t *testing.T) {
	for in, want := range map[string]string{
		"/dashboard/knowledge?q=a":                                "/dashboard/knowledge?q=a",
		"https://evil.example/":                                   "",
		"//evil.example/dashboard/":                               "",
		"/dashboard/\\evil":                                       "",
		"/other":                                                  "",
		"/dashboard/..//evil.example":                             "",
		"/dashboard/%2e%2e/%2fevil.example":                       "",
		"/dashboard/./knowledge/../leads?x=1":                     "/dashboard/leads?x=1",
		"/dashboard/conversations?q=" + strings.Repeat("a", 1000): "",
	} {
		if got := localPath(in); got != want {
			t.Errorf("localPath(%q) = %q, want %q", in, got, want)
		}
	}
}
