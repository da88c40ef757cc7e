//go:build integration

package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/parley-dev/parley/internal/contract"
	"github.com/parley-dev/parley/internal/testutil/pgtest"
)

// TestRuntimePostgres runs `parley runtime --storage=postgres` as the operator deploys it, with the database URL
// (and its password) in $PARLEY_DATABASE_URL: it migrates the database, is ready, and never logs the password.
func TestRuntimePostgres(t *testing.T) {
	srv, err := pgtest.Start(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			t.Error(err)
		}
	})
	// The throwaway server trusts local connections, so any password is accepted and must stay secret.
	url := strings.Replace(srv.Database(t), "postgres@", "postgres:s3cr3t-pw@", 1)
	t.Setenv(contract.EnvDatabaseURL, url)

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	logs, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"runtime", "--storage=postgres", "--tenants-dir", t.TempDir(),
			"--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", "--log-format", "text", "--log-level", "debug"}, io.Discard, w)
		_ = w.Close()
	}()
	lines := make(chan string, 100)
	var all strings.Builder
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(logs)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var addr string
	for addr == "" {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("parley runtime stopped before serving: %v\n%s", <-done, all.String())
			}
			all.WriteString(line + "\n")
			if m := regexp.MustCompile(` listen=(\S+)`).FindStringSubmatch(line); m != nil && strings.Contains(line, "serving") {
				addr = m[1]
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("parley runtime did not start serving:\n%s", all.String())
		}
	}
	if r := get(t, "http://"+addr+"/readyz", nil); r.status != http.StatusOK {
		t.Errorf("/readyz: %d %s", r.status, r.body)
	}

	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	var tables int
	err = conn.QueryRow(t.Context(), `SELECT COUNT(*) FROM information_schema.tables
		WHERE table_name IN ('conversations', 'messages', 'knowledge', 'monthly_conversations')`).Scan(&tables)
	_ = conn.Close(t.Context())
	if err != nil || tables != 4 {
		t.Errorf("the runtime did not migrate the database: %d of 4 tables, %v", tables, err)
	}

	cancel()
	awaitStop(t, done, "parley runtime")
	for line := range lines {
		all.WriteString(line + "\n")
	}
	if strings.Contains(all.String(), "s3cr3t-pw") || strings.Contains(all.String(), os.Getenv(contract.EnvDatabaseURL)) {
		t.Errorf("the logs show the database URL or its password:\n%s", all.String())
	}
}
