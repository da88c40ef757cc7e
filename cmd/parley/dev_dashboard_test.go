package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// startDev runs parley dev on dir until the returned function stops it, and returns its banner and address.
func startDev(t *testing.T, dir, listen string) (banner, base string, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	out, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"dev", "--dir", dir, "--listen", listen}, w, io.Discard)
		_ = w.Close()
	}()
	banner = readBanner(t, out)
	go func() { _, _ = io.Copy(io.Discard, out) }()
	m := regexp.MustCompile(`PARLEY_URL=(\S+)`).FindStringSubmatch(banner)
	if m == nil {
		t.Fatalf("no address in the banner:\n%s", banner)
	}
	return banner, m[1], func() {
		cancel()
		awaitStop(t, done, "parley dev")
	}
}

// The banner names the dashboard, whose sign-in goes to the dev issuer with PKCE; the issuer's key and the
// session key outlive a restart, so the token printed before still works after.
func TestDevDashboardSurvivesRestarts(t *testing.T) {
	dir := t.TempDir()
	// The same address both times: the issuer's URL is the token's `iss`.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	listen := ln.Addr().String()
	_ = ln.Close()
	banner, base, stop := startDev(t, dir, listen)
	if !strings.Contains(banner, base+"/dashboard/") {
		t.Errorf("the banner does not name the dashboard:\n%s", banner)
	}
	token := regexp.MustCompile(`PARLEY_TOKEN=(\S+)`).FindStringSubmatch(banner)[1]
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/dashboard/login", nil)
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, base+"/oidc/authorize?") ||
		!strings.Contains(loc, "code_challenge_method=S256") || !strings.Contains(loc, "redirect_uri="+url.QueryEscape(base+"/dashboard/callback")) {
		t.Errorf("signing in: %d to %s", res.StatusCode, loc)
	}
	stop()

	_, base, stop = startDev(t, dir, listen)
	defer stop()
	if r := get(t, base+"/api/v1/usage", map[string]string{"Authorization": "Bearer " + token}); r.status != http.StatusOK {
		t.Errorf("the token of the first start after a restart: %d %s", r.status, r.body)
	}
}
