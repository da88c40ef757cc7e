package dashboard_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parley-dev/parley/internal/dev/devidp"
	"github.com/parley-dev/parley/runtime/assistant"
	"github.com/parley-dev/parley/runtime/chat"
	"github.com/parley-dev/parley/runtime/dashboard"
)

// stallingIssuer is a real issuer (the dev one) of which the paths stall names never answer: a request to one
// waits until its client goes away. pending is how many such requests are waiting, stalled how many came, and
// exchanges how many codes the token endpoint was asked to redeem.
type stallingIssuer struct {
	*devidp.Issuer
	pending, stalled, exchanges atomic.Int32
}

func newStallingIssuer(t *testing.T, stall func(path string) bool) *stallingIssuer {
	t.Helper()
	release := make(chan struct{})
	s := &stallingIssuer{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/token" {
			s.exchanges.Add(1)
		}
		if stall(r.URL.Path) {
			s.stalled.Add(1)
			s.pending.Add(1)
			defer s.pending.Add(-1)
			// Read to the end, so that the server watches the connection and ends the context when it closes.
			_, _ = io.Copy(io.Discard, r.Body)
			select {
			case <-r.Context().Done(): // the runtime gave up and closed the connection
			case <-release:
			}
			return
		}
		s.Handler().ServeHTTP(w, r)
	}))
	// Cleanups run last in, first out: release the handlers, then close the server.
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(release) })
	var err error
	if s.Issuer, err = devidp.New(ts.URL); err != nil {
		t.Fatal(err)
	}
	return s
}

// abandoned waits, at most bound, until the runtime has given up every request the issuer stalls, and reports
// whether it has: a request it still waits on is a goroutine and a connection held for as long as the issuer
// stalls.
func (s *stallingIssuer) abandoned(bound time.Duration) bool {
	for deadline := time.Now().Add(bound); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if s.pending.Load() == 0 {
			return true
		}
	}
	return false
}

// A stalled identity provider makes the dashboard's sign-in answer within 5 seconds with a page that says so,
// for every sign-in at once, whether discovery or the code's exchange stalls; and the runtime lets go of every
// request it made to the issuer.
func TestSignInAgainstAStalledIssuer(t *testing.T) {
	const bound = 5 * time.Second
	for _, tt := range []struct {
		name  string
		stall func(path string) bool
		// start runs a sign-in until the request that needs the issuer and returns the runtime's answer to it.
		start func(c *client) reply
	}{
		{"discovery", func(string) bool { return true }, func(c *client) reply { return c.get("/dashboard/login") }},
		{"code exchange", func(p string) bool { return p == "/token" }, func(c *client) reply {
			res := c.get("/dashboard/login")
			page := c.getURL(c.resolve(res)) // the issuer's sign-in page
			form := page.URL.Query()
			form.Set("email", "alpha@owners.example")
			back := c.do(http.MethodPost, page.URL.Scheme+"://"+page.URL.Host+page.URL.Path, form, nil)
			if back.StatusCode != http.StatusSeeOther || !strings.Contains(back.Header.Get("Location"), "/dashboard/callback") {
				c.t.Fatalf("the issuer's sign-in: %d to %s", back.StatusCode, back.Header.Get("Location"))
			}
			return c.getURL(c.resolve(back))
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			idp := newStallingIssuer(t, tt.stall)
			svc, err := chat.New(chat.Config{Store: e.store, Responder: assistant.Retrieval{}})
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewUnstartedServer(nil)
			ts.Config.Handler = e.runtimeOf(t, svc, prometheus.NewRegistry(), []byte("a runtime whose issuer stalls, 32 bytes"),
				"http://"+ts.Listener.Addr().String(), idp.URL())
			ts.Start()
			t.Cleanup(ts.Close)

			t.Run("sign-ins at once", func(t *testing.T) {
				for i := range 4 {
					t.Run(strconv.Itoa(i), func(t *testing.T) {
						t.Parallel()
						c := newClient(t, ts.URL)
						c.http.Timeout = bound
						res := tt.start(c)
						if res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(res.Body, "the identity provider does not answer") {
							t.Errorf("a sign-in against a stalled issuer: %d, want 503 saying the identity provider does not answer", res.StatusCode)
						}
					})
				}
			})
			if idp.stalled.Load() == 0 {
				t.Fatal("the issuer stalled no request: the test tested nothing")
			}
			if !idp.abandoned(bound) {
				t.Errorf("%d requests to the stalled issuer still wait after the sign-ins were answered", idp.pending.Load())
			}
		})
	}
}

// A session is its issuer's: once the runtime's issuer changes, a session signed in at the former one is refused,
// for pages and changes alike, since a subject names a user only at its own issuer.
func TestSignInSessionIsBoundToItsIssuer(t *testing.T) {
	e := newEnv(t)
	c := newClient(t, e.url)
	c.signIn("alpha@owners.example")
	if res := c.get("/dashboard/"); res.StatusCode != http.StatusOK {
		t.Fatalf("signed in: %d", res.StatusCode)
	}
	// The same runtime, with the same session key, after its issuer changed: the session is another issuer's.
	other := newStallingIssuer(t, func(string) bool { return false })
	svc, err := chat.New(chat.Config{Store: e.store, Responder: assistant.Retrieval{}})
	if err != nil {
		t.Fatal(err)
	}
	moved := e.runtimeOf(t, svc, prometheus.NewRegistry(), []byte("the first runtime's session key, 32 bytes or more"), e.url, other.URL())
	for _, tt := range []struct {
		method, path string
		want         int
	}{{http.MethodGet, "/dashboard/", http.StatusSeeOther}, {http.MethodPost, "/dashboard/knowledge", http.StatusForbidden}} {
		form := url.Values{"csrf": {c.csrf()}, "title": {"After the move"}, "content": {"Written with the old issuer's session."}}
		req := httptest.NewRequest(tt.method, e.url+tt.path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		for _, ck := range c.http.Jar.Cookies(mustURL(t, e.url+"/dashboard/")) {
			req.AddCookie(ck)
		}
		rec := httptest.NewRecorder()
		moved.ServeHTTP(rec, req)
		if rec.Code != tt.want {
			t.Errorf("%s %s with a session of the runtime's former issuer: %d, want %d", tt.method, tt.path, rec.Code, tt.want)
		}
	}
	if n := e.knowledgeCount(t, "alpha"); n != 2 {
		t.Errorf("alpha has %d items, want its 2", n)
	}
}

// Served over https, the dashboard's sign-in works end to end with __Host- cookies: the session's and the
// sign-in's, Secure, for the whole origin and no other host.
func TestSignInOverHTTPSUsesHostCookies(t *testing.T) {
	e := newEnv(t)
	svc, err := chat.New(chat.Config{Store: e.store, Responder: assistant.Retrieval{}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(nil)
	ts.Config.Handler = e.runtimeOf(t, svc, prometheus.NewRegistry(), []byte("a runtime served over https, 32 bytes"),
		"https://"+ts.Listener.Addr().String(), e.idp)
	ts.StartTLS()
	t.Cleanup(ts.Close)
	c := newClient(t, ts.URL)
	c.http.Transport = ts.Client().Transport
	login := c.get("/dashboard/login")
	if set := login.Header.Get("Set-Cookie"); !strings.HasPrefix(set, "__Host-parley_login=") || !strings.Contains(set, "Path=/;") ||
		!strings.Contains(set, "Secure") || strings.Contains(set, "Domain") {
		t.Errorf("the sign-in's cookie: %s", set)
	}
	c.signIn("alpha@owners.example")
	var names []string
	for _, ck := range c.http.Jar.Cookies(mustURL(t, ts.URL+"/dashboard/")) {
		names = append(names, ck.Name)
	}
	if !slices.Contains(names, "__Host-parley_session") {
		t.Errorf("cookies after signing in: %v, want __Host-parley_session", names)
	}
	if res := c.get("/dashboard/"); res.StatusCode != http.StatusOK {
		t.Errorf("the overview, signed in over https: %d", res.StatusCode)
	}
	if res := c.post("/dashboard/knowledge", url.Values{"csrf": {c.csrf()}, "title": {"Over https"}, "content": {"Saved."}}); res.StatusCode != http.StatusSeeOther {
		t.Errorf("a change over https: %d", res.StatusCode)
	}
}

// A sign-in's callback is taken once: a copy of its address and of the sign-in's cookie (from a proxy's log, a
// shared machine, a browser's history) replayed within the sign-in's ten minutes signs nobody in, and never
// reaches the issuer; nor does the same browser's second visit.
func TestSignInCallbackIsTakenOnce(t *testing.T) {
	e := newEnv(t)
	idp := newStallingIssuer(t, func(string) bool { return false })
	svc, err := chat.New(chat.Config{Store: e.store, Responder: assistant.Retrieval{}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(nil)
	ts.Config.Handler = e.runtimeOf(t, svc, prometheus.NewRegistry(), []byte("a runtime whose sign-ins are counted, 32 bytes"),
		"http://"+ts.Listener.Addr().String(), idp.URL())
	ts.Start()
	t.Cleanup(ts.Close)
	c := newClient(t, ts.URL)
	login := c.get("/dashboard/login")
	page := c.getURL(c.resolve(login))
	form := page.URL.Query()
	form.Set("email", "alpha@owners.example")
	back := c.do(http.MethodPost, page.URL.Scheme+"://"+page.URL.Host+page.URL.Path, form, nil)
	callback := c.resolve(back)
	copied := c.http.Jar.Cookies(mustURL(t, callback))
	if res := c.getURL(callback); res.StatusCode != http.StatusSeeOther || !strings.HasSuffix(res.Header.Get("Location"), "/dashboard/") {
		t.Fatalf("the sign-in's callback: %d to %s", res.StatusCode, res.Header.Get("Location"))
	}
	if res := c.get("/dashboard/"); res.StatusCode != http.StatusOK {
		t.Fatalf("signed in: %d", res.StatusCode)
	}
	replay := newClient(t, ts.URL)
	replay.http.Jar.SetCookies(mustURL(t, callback), copied)
	res := replay.getURL(callback)
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(res.Body, "This sign-in expired or was started elsewhere") {
		t.Errorf("the replayed callback: %d, want 400 saying the sign-in expired", res.StatusCode)
	}
	if res := replay.get("/dashboard/"); res.StatusCode != http.StatusSeeOther {
		t.Errorf("the replay signed in: %d", res.StatusCode)
	}
	if n := idp.exchanges.Load(); n != 1 {
		t.Errorf("the issuer was asked to redeem %d codes, want the sign-in's 1", n)
	}
}

// Each anonymous sign-in stores its single-use state, so sign-ins are limited per client address (behind the
// trusted proxies, the address they name): past the limit, the start and the callback answer 429 with
// Retry-After and a page that says so, while a client at another address still signs in.
func TestSignInsAreLimitedPerClientAddress(t *testing.T) {
	e := newEnv(t)
	c := newClient(t, e.url)
	from := func(addr string) http.Header { return http.Header{"X-Forwarded-For": {addr}} }
	for i := range dashboard.SignInsPerAddress {
		if res := c.do(http.MethodGet, e.url+"/dashboard/login", nil, from("203.0.113.7")); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("sign-in %d: %d, want 303 to the issuer", i+1, res.StatusCode)
		}
	}
	for _, path := range []string{"/dashboard/login", "/dashboard/callback?state=s&code=c"} {
		res := c.do(http.MethodGet, e.url+path, nil, from("203.0.113.7"))
		if wait, err := strconv.Atoi(res.Header.Get("Retry-After")); res.StatusCode != http.StatusTooManyRequests || err != nil || wait < 1 ||
			!strings.Contains(res.Body, "Too many sign-ins") {
			t.Errorf("GET %s past the limit: %d, Retry-After %q, want 429 with a page saying so", path, res.StatusCode, res.Header.Get("Retry-After"))
		}
	}
	if res := c.do(http.MethodGet, e.url+"/dashboard/login", nil, from("203.0.113.8")); res.StatusCode != http.StatusSeeOther {
		t.Errorf("a sign-in from another address: %d, want 303", res.StatusCode)
	}
}
