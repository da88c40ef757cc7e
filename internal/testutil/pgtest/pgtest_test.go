//go:build integration

package pgtest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestStartStop starts a server, uses two databases of it, and stops it: the directory goes with it.
func TestStartStop(t *testing.T) {
	s, err := Start(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = s.Stop()
		}
	}()
	if fi, err := os.Stat(filepath.Join(s.SocketDir(), ".s.PGSQL."+strconv.Itoa(s.Port()))); err != nil || fi.Mode()&os.ModeSocket == 0 {
		t.Errorf("no unix socket in the server's directory: %v", err)
	}
	var a string
	t.Run("Databases", func(t *testing.T) { a = useDatabases(t, s) }) // dropped when the subtest ends
	dir := s.SocketDir()
	stopped = true
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the server's directory is left: %v", err)
	}
	if _, err := pgx.Connect(t.Context(), a); err == nil {
		t.Error("the server still answers after Stop")
	}
}

// useDatabases creates two databases and checks their encoding and case folding; it returns the first's URL.
func useDatabases(t *testing.T, s *Server) string {
	a, b := s.Database(t), s.Database(t)
	if a == b {
		t.Fatalf("two tests got the same database %s", a)
	}
	for _, u := range []string{a, b} {
		conn, err := pgx.Connect(t.Context(), u)
		if err != nil {
			t.Fatal(err)
		}
		var enc, ctype string
		if err := conn.QueryRow(t.Context(), `SELECT pg_encoding_to_char(encoding), datctype FROM pg_database
			WHERE datname = current_database()`).Scan(&enc, &ctype); err != nil {
			t.Fatal(err)
		}
		if enc != "UTF8" {
			t.Errorf("encoding %s, want UTF8", enc)
		}
		var lower string
		if err := conn.QueryRow(t.Context(), `SELECT lower('ÉTÉ À PARIS')`).Scan(&lower); err != nil || lower != "été à paris" {
			t.Errorf("lower() = %q, %v: the server's locale does not fold non-ASCII case (ctype %s)", lower, err, ctype)
		}
		if err := conn.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	return a
}

// TestMissingBinaries checks that without the server binaries Start's search fails with what to install.
func TestMissingBinaries(t *testing.T) {
	empty := t.TempDir()
	t.Setenv("PATH", empty)
	t.Setenv(BinDirEnv, "")
	_, err := findBinDir(filepath.Join(empty, "*", "bin"))
	if err == nil || !strings.Contains(err.Error(), "apt-get install postgresql") {
		t.Errorf("findBinDir without binaries: %v; want an error saying what to install", err)
	}
	// $PARLEY_PG_BINDIR is taken first.
	for _, name := range []string{"initdb", "postgres"} {
		if err := os.WriteFile(filepath.Join(empty, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv(BinDirEnv, empty)
	if dir, err := findBinDir(installedBinDirs); err != nil || dir != empty {
		t.Errorf("findBinDir with $%s set = %q, %v; want %q", BinDirEnv, dir, err, empty)
	}
}
