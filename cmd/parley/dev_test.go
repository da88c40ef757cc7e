package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/parley-dev/parley/internal/contract"
	"github.com/parley-dev/parley/internal/dev/demo"
	"github.com/parley-dev/parley/internal/testutil/fakellm"
)

// parley dev as a new user meets it: the banner's page shows the widget embed, and the banner's commands work.
func TestDev(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	out, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"dev", "--dir", t.TempDir(), "--listen", "127.0.0.1:0"}, w, io.Discard)
		_ = w.Close()
	}()
	banner := readBanner(t, out)
	go func() { _, _ = io.Copy(io.Discard, out) }()
	base := regexp.MustCompile(`PARLEY_URL=(\S+)`).FindStringSubmatch(banner)
	pk := regexp.MustCompile(`(pk_\S+)`).FindStringSubmatch(banner)
	sk := regexp.MustCompile(`PARLEY_KEY=(sk_\S+)`).FindStringSubmatch(banner)
	token := regexp.MustCompile(`PARLEY_TOKEN=(\S+)`).FindStringSubmatch(banner)
	if base == nil || pk == nil || sk == nil || token == nil {
		t.Fatalf("the banner lacks the URL, keys or token:\n%s", banner)
	}

	page := get(t, base[1]+"/", nil)
	tag := `<script src="` + base[1] + `/widget.js" data-api-key="` + pk[1] + `" data-merchant-id="demo" async></script>`
	if !strings.Contains(page.body, tag) {
		t.Errorf("the demo page does not embed %s:\n%s", tag, page.body)
	}
	if !strings.Contains(page.header.Get("Content-Security-Policy"), "script-src 'self'") {
		t.Errorf("the demo page has no strict Content-Security-Policy: %q", page.header.Get("Content-Security-Policy"))
	}
	if js := get(t, base[1]+"/widget.js", nil); !strings.Contains(js.body, `var API = "`+base[1]+`";`) {
		t.Error("widget.js does not name the dev server")
	}

	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base[1]+"/api/v1/chat",
		strings.NewReader(`{"message": "How long does shipping take?"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", sk[1])
	if chat := do(t, req); chat.status != http.StatusOK || !strings.Contains(chat.body, "business days") {
		t.Errorf("the banner's chat command: %d %s", chat.status, chat.body)
	}
	for _, path := range []string{"/api/v1/conversations", "/api/v1/knowledge", "/api/v1/analytics/overview"} {
		if r := get(t, base[1]+path, map[string]string{"Authorization": "Bearer " + token[1]}); r.status != http.StatusOK {
			t.Errorf("the banner's %s command: %d %s", path, r.status, r.body)
		}
	}
	cancel()
	awaitStop(t, done, "parley dev")
}

// --pprof-listen serves Go's profiles on its own address, and never on the public one.
func TestDevProfiles(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	out, w := io.Pipe()
	go func() {
		_ = run(ctx, []string{"dev", "--dir", t.TempDir(), "--listen", "127.0.0.1:0", "--pprof-listen", addr}, w, io.Discard)
		_ = w.Close()
	}()
	banner := readBanner(t, out)
	go func() { _, _ = io.Copy(io.Discard, out) }()
	base := regexp.MustCompile(`PARLEY_URL=(\S+)`).FindStringSubmatch(banner)
	if base == nil {
		t.Fatalf("the banner lacks the URL:\n%s", banner)
	}
	if r := get(t, "http://"+addr+"/debug/pprof/allocs", nil); r.status != http.StatusOK || r.header.Get("Content-Type") != "application/octet-stream" {
		t.Errorf("GET /debug/pprof/allocs on --pprof-listen: %d %s", r.status, r.header.Get("Content-Type"))
	}
	if r := get(t, base[1]+"/debug/pprof/allocs", nil); r.status != http.StatusNotFound {
		t.Errorf("GET /debug/pprof/allocs on the public address: %d, want 404", r.status)
	}
}

func readBanner(t *testing.T, r io.Reader) string {
	t.Helper()
	var b strings.Builder
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "Press Ctrl-C") {
			return b.String()
		}
	}
	t.Fatalf("parley dev stopped before printing its banner:\n%s", b.String())
	return ""
}

type answer struct {
	status int
	header http.Header
	body   string
}

func get(t *testing.T, url string, headers map[string]string) answer {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return do(t, req)
}

func do(t *testing.T, req *http.Request) answer {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{status: resp.StatusCode, header: resp.Header, body: string(body)}
}

// parley dev answering with a model: the chat answer is the model's, with the key from the environment sent to it,
// and the parameters the flags say the model accepts; when the model fails, the visitor still gets the offline
// answer.
func TestDevWithAModel(t *testing.T) {
	provider := fakellm.New(t, "Shipping takes ", "3 to 5 business days [1].")
	t.Setenv(contract.EnvOpenAIAPIKey, "sk-dev-test")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	out, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"dev", "--dir", t.TempDir(), "--listen", "127.0.0.1:0", "--assistant=openai",
			"--openai-base-url=" + provider.URL(), "--openai-model=tiny", "--openai-timeout=1s",
			"--openai-max-completion-tokens", "--openai-omit-temperature"}, w, io.Discard)
		_ = w.Close()
	}()
	banner := readBanner(t, out)
	go func() { _, _ = io.Copy(io.Discard, out) }()
	base := regexp.MustCompile(`PARLEY_URL=(\S+)`).FindStringSubmatch(banner)
	sk := regexp.MustCompile(`PARLEY_KEY=(sk_\S+)`).FindStringSubmatch(banner)
	if base == nil || sk == nil {
		t.Fatalf("banner:\n%s", banner)
	}
	ask := func() answer {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base[1]+"/api/v1/chat",
			strings.NewReader(`{"message": "How long does shipping take?"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-API-Key", sk[1])
		return do(t, req)
	}
	if a := ask(); a.status != http.StatusOK || !strings.Contains(a.body, "3 to 5 business days [1].") {
		t.Errorf("chat with the model: %d %s", a.status, a.body)
	}
	if got := provider.Last(t); got.Auth != "Bearer sk-dev-test" || got.Body.Model != "tiny" {
		t.Errorf("the provider got %q, model %q", got.Auth, got.Body.Model)
	}
	if params := strings.Join(provider.Last(t).Params, ","); params != "max_completion_tokens,messages,model,stream,stream_options" {
		t.Errorf("the provider got the parameters %s", params)
	}
	provider.Set(func(p *fakellm.Provider) { p.Status = http.StatusServiceUnavailable })
	if a := ask(); a.status != http.StatusOK || !strings.Contains(a.body, "business days") || strings.Contains(a.body, "[1]") {
		t.Errorf("chat with the model down: %d %s", a.status, a.body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("parley dev: %v", err)
	}
}

// parley dev answering with an Azure OpenAI classic deployment: the deployment is named in the path with the
// api-version, and the key goes in the api-key header, never as a bearer token.
func TestDevWithAnAzureDeployment(t *testing.T) {
	provider := fakellm.New(t, "Shipping takes ", "3 to 5 business days [1].")
	t.Setenv(contract.EnvOpenAIAPIKey, "azure-dev-key")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	out, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"dev", "--dir", t.TempDir(), "--listen", "127.0.0.1:0", "--assistant=openai",
			"--openai-base-url=" + provider.AzureEndpoint(), "--openai-model=shop-gpt", "--openai-azure-api-version=2024-10-21"}, w, io.Discard)
		_ = w.Close()
	}()
	banner := readBanner(t, out)
	go func() { _, _ = io.Copy(io.Discard, out) }()
	base := regexp.MustCompile(`PARLEY_URL=(\S+)`).FindStringSubmatch(banner)
	sk := regexp.MustCompile(`PARLEY_KEY=(sk_\S+)`).FindStringSubmatch(banner)
	if base == nil || sk == nil {
		t.Fatalf("banner:\n%s", banner)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base[1]+"/api/v1/chat",
		strings.NewReader(`{"message": "How long does shipping take?"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", sk[1])
	if a := do(t, req); a.status != http.StatusOK || !strings.Contains(a.body, "3 to 5 business days [1].") {
		t.Errorf("chat with the model: %d %s", a.status, a.body)
	}
	if got := provider.Last(t); got.Path != "/openai/deployments/shop-gpt/chat/completions?api-version=2024-10-21" ||
		got.APIKey != "azure-dev-key" || got.Auth != "" {
		t.Errorf("the provider got %s with api-key %q and Authorization %q", got.Path, got.APIKey, got.Auth)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("parley dev: %v", err)
	}
}

// The demo's items keep the fixture's IDs and order on every fresh start, so that links and scripts written
// against one demo work against the next.
func TestDevSeedsTheFixtureAsItIs(t *testing.T) {
	var want []string
	for _, item := range demo.Knowledge() {
		want = append(want, "kn_"+item.ID)
	}
	banner, base, stop := startDev(t, t.TempDir(), "127.0.0.1:0")
	defer stop()
	token := regexp.MustCompile(`PARLEY_TOKEN=(\S+)`).FindStringSubmatch(banner)[1]
	res := get(t, base+"/api/v1/knowledge?limit=100", map[string]string{"Authorization": "Bearer " + token})
	var page struct {
		Data []struct {
			ID, Title string
		}
	}
	if err := json.Unmarshal([]byte(res.body), &page); res.status != http.StatusOK || err != nil {
		t.Fatalf("listing the demo knowledge: %d %v %s", res.status, err, res.body)
	}
	var got []string
	for _, item := range page.Data {
		got = append(got, item.ID)
	}
	if !slices.Equal(got, want) {
		t.Errorf("the demo knowledge lists\n%v\nwant the fixture's\n%v", got, want)
	}
	if len(page.Data) > 0 && page.Data[0].Title != demo.Knowledge()[0].Title {
		t.Errorf("the first item is %q, want the fixture's %q", page.Data[0].Title, demo.Knowledge()[0].Title)
	}
}
