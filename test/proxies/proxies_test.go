//go:build integration

// Package proxies checks the plans' abuse limits on a real `parley runtime` process behind a proxy, started with
// the trusted proxies the operator renders for a ChatRuntime and the bundle it renders for a Merchant.
package proxies

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	chatv1alpha1 "github.com/parley-dev/parley/api/v1alpha1"
	"github.com/parley-dev/parley/internal/contract"
	"github.com/parley-dev/parley/internal/credentials"
	"github.com/parley-dev/parley/internal/render"
	"github.com/parley-dev/parley/internal/testutil/bundletest"
	"github.com/parley-dev/parley/internal/testutil/runtimeproc"
)

const (
	origin     = "https://shop.example"
	perAddress = 2
	advice     = "list its network in the ChatRuntime's trustedProxies"
)

// Every request comes from 127.0.0.1, as from an ingress, for the client it names in X-Forwarded-For. With the
// ChatRuntime's trustedProxies unset (the default) or set to the ingress's network, one visitor behind the
// ingress reaching the per-address limit leaves the others their own; unset, the runtime also says so.
func TestVisitorsBehindTheIngressKeepTheirOwnLimits(t *testing.T) {
	bin := runtimeproc.Build(t)
	for _, tc := range []struct {
		name    string
		proxies []string
		warned  bool
	}{
		{name: "trustedProxies unset", warned: true},
		{name: "the ingress's network trusted", proxies: []string{"127.0.0.0/8", "::1/128"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := &chatv1alpha1.ChatRuntime{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "parley-system"}}
			rt.Spec.TrustedProxies = tc.proxies
			dir := t.TempDir()
			key := writeBundle(t, filepath.Join(dir, "tenants"))
			args := []string{"--tenants-dir=" + filepath.Join(dir, "tenants"), "--sqlite-path=" + filepath.Join(dir, "parley.db")}
			for _, a := range render.RuntimeArgs(rt) {
				if strings.HasPrefix(a, "--"+contract.FlagTrustedProxies+"=") {
					args = append(args, a)
				}
			}
			if (len(args) == 3) != (len(tc.proxies) > 0) {
				t.Fatalf("the operator renders %v for trustedProxies %v", args[2:], tc.proxies)
			}
			p := runtimeproc.Start(t, bin, nil, args...)

			// A script behind the ingress, with a new visitor ID for each conversation, is held to the limit.
			for i := range perAddress {
				if code := start(t, p.URL, key, fmt.Sprint("script-", i), "198.51.100.7"); code != http.StatusOK {
					t.Fatalf("conversation %d: %d", i+1, code)
				}
			}
			if code := start(t, p.URL, key, "script-last", "198.51.100.7"); code != http.StatusTooManyRequests {
				t.Fatalf("past the per-address limit: %d", code)
			}
			// Every other visitor behind the ingress still starts conversations.
			for i := range 3 {
				if code := start(t, p.URL, key, fmt.Sprint("visitor-", i), fmt.Sprint("203.0.113.", 10+i)); code != http.StatusOK {
					t.Errorf("another visitor behind the ingress: %d", code)
				}
			}

			if n := strings.Count(p.Logs(), advice); n != map[bool]int{true: 1}[tc.warned] {
				t.Errorf("the advice to set trustedProxies is logged %d times:\n%s", n, p.Logs())
			}
			want := "parley_runtime_untrusted_forwarded_requests_total 0"
			if tc.warned {
				want = fmt.Sprint("parley_runtime_untrusted_forwarded_requests_total ", perAddress+4)
			}
			if m := get(t, p.MetricsURL+"/metrics"); !strings.Contains(m, want) {
				t.Errorf("metrics lack %q", want)
			}
		})
	}
}

// writeBundle writes the bundle the operator renders for a Merchant on a plan with perAddress new conversations
// per address an hour, and returns its publishable key.
func writeBundle(t *testing.T, dir string) string {
	t.Helper()
	key, err := credentials.NewAPIKey(credentials.PublishablePrefix)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := credentials.Describe(key)
	if err != nil {
		t.Fatal(err)
	}
	m := &chatv1alpha1.Merchant{ObjectMeta: metav1.ObjectMeta{Namespace: "acme", Name: "shop"},
		Spec: chatv1alpha1.MerchantSpec{DisplayName: "Shop", AllowedOrigins: []string{origin}}}
	plan := &chatv1alpha1.Plan{ObjectMeta: metav1.ObjectMeta{Name: "starter"},
		Spec: chatv1alpha1.PlanSpec{RequestsPerSecond: 100, ConversationsPerAddressPerHour: perAddress, ConversationsPerVisitorPerHour: 100}}
	keys := []render.ResolvedKey{{ID: desc.ID, Type: chatv1alpha1.APIKeyPublishable, SHA256: desc.SHA256}}
	bundletest.WriteFile(t, filepath.Join(dir, "shop.json"), render.Bundle(m, render.MerchantID(m), plan, keys, nil, time.Now()))
	return key
}

// start starts a conversation from the widget of a visitor forwarded for client, and returns the status.
func start(t *testing.T, base, key, visitor, client string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/api/v1/chat", strings.NewReader(`{"message": "hi"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", key)
	req.Header.Set("Origin", origin)
	req.Header.Set("X-Visitor-ID", visitor)
	req.Header.Set("X-Forwarded-For", client)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url) //nolint:noctx // the test's own runtime
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}
