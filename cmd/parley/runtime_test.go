package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/parley-dev/parley/internal/contract"
)

func TestRuntimeStorageFlags(t *testing.T) {
	for _, tc := range []struct {
		name, databaseURL string
		args              []string
		wantErr           string
	}{
		{"unknown store", "", []string{"--storage=mysql"}, "use sqlite or postgres"},
		{"postgres without a URL", "", []string{"--storage=postgres"}, "$PARLEY_DATABASE_URL"},
		{
			"postgres unreachable", "postgres://parley:s3cr3t-pw@127.0.0.1:1/parley?sslmode=disable&connect_timeout=5",
			[]string{"--storage=postgres"}, "opening postgres store",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(contract.EnvDatabaseURL, tc.databaseURL)
			args := append([]string{"runtime", "--tenants-dir", t.TempDir(), "--listen", "127.0.0.1:0"}, tc.args...)
			err := run(t.Context(), args, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("want error %q, got %v", tc.wantErr, err)
			}
			if strings.Contains(err.Error(), "s3cr3t-pw") {
				t.Errorf("the error shows the database password: %v", err)
			}
		})
	}
}

// startRuntime runs `parley runtime` on an empty tenants directory, on loopback ports, with the extra arguments,
// and returns its public and metrics addresses, read from its log, and a stop that ends it and checks that it
// stopped cleanly.
func startRuntime(t *testing.T, extra ...string) (public, metrics string, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	dir := t.TempDir()
	logs, w := io.Pipe()
	done := make(chan error, 1)
	args := append([]string{"runtime", "--tenants-dir", dir, "--sqlite-path", dir + "/parley.db",
		"--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", "--log-format", "text"}, extra...)
	go func() {
		done <- run(ctx, args, io.Discard, w)
		_ = w.Close()
	}()
	addrs := map[string]string{}
	sc := bufio.NewScanner(logs)
	for len(addrs) < 2 && sc.Scan() {
		for _, key := range []string{" listen", " metrics_listen"} {
			if m := regexp.MustCompile(key + `=(\S+)`).FindStringSubmatch(sc.Text()); m != nil {
				addrs[key] = m[1]
			}
		}
	}
	go func() { _, _ = io.Copy(io.Discard, logs) }()
	public, metrics = addrs[" listen"], addrs[" metrics_listen"]
	if public == "" || metrics == "" || public == metrics {
		cancel()
		t.Fatalf("listening on %q, metrics on %q: %v", public, metrics, <-done)
	}
	return public, metrics, func() {
		cancel()
		awaitStop(t, done, "parley runtime")
	}
}

// The metrics, which name every merchant and its traffic, are served on --metrics-listen only, never on the public
// port.
func TestRuntimeMetricsApart(t *testing.T) {
	public, metrics, stop := startRuntime(t)
	defer stop()
	if r := get(t, "http://"+public+"/healthz", nil); r.status != http.StatusOK {
		t.Errorf("/healthz: %d", r.status)
	}
	if r := get(t, "http://"+public+"/metrics", nil); r.status != http.StatusNotFound || strings.Contains(r.body, "parley_runtime") {
		t.Errorf("the public port serves /metrics: %d %s", r.status, r.body)
	}
	if r := get(t, "http://"+metrics+"/metrics", nil); r.status != http.StatusOK ||
		!strings.Contains(r.body, `parley_runtime_http_requests_total{code="404",route="unmatched"}`) ||
		!strings.Contains(r.body, "parley_runtime_store_group_writes_count") {
		t.Errorf("the metrics listener: %d %s", r.status, r.body)
	}
}

// --pprof-listen serves Go's profiles on its own address, never on the public or the metrics one, and stops with
// the runtime.
func TestRuntimeProfiles(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	profiles := ln.Addr().String()
	_ = ln.Close()
	public, metrics, stop := startRuntime(t, "--pprof-listen", profiles)
	if r := get(t, "http://"+profiles+"/debug/pprof/heap", nil); r.status != http.StatusOK || r.header.Get("Content-Type") != "application/octet-stream" {
		t.Errorf("GET /debug/pprof/heap on --pprof-listen: %d %s", r.status, r.header.Get("Content-Type"))
	}
	for _, addr := range []string{public, metrics} {
		if r := get(t, "http://"+addr+"/debug/pprof/heap", nil); r.status != http.StatusNotFound {
			t.Errorf("GET /debug/pprof/heap on %s: %d, want 404", addr, r.status)
		}
	}
	stop()
	if _, err := net.DialTimeout("tcp", profiles, time.Second); err == nil {
		t.Error("the profiles listener is still open after the runtime stopped")
	}
}
