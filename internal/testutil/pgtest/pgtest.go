//go:build integration

// Package pgtest starts a throwaway PostgreSQL server for tests, from the installed server binaries (Debian's
// postgresql package), in a temporary directory on a free port. It never uses a PostgreSQL that is already
// running. Start one server per test package in TestMain (see Main) and give each test its own database
// (Server.Database).
//
// PostgreSQL refuses to run as root, so when the tests run as root the server runs as the postgres system user
// (nobody when there is none), and its directory is handed to that user.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// BinDirEnv names a directory holding initdb and postgres; it takes precedence over PATH and
// /usr/lib/postgresql/*/bin.
const BinDirEnv = "PARLEY_PG_BINDIR"

// startTimeout bounds how long the server may take to accept connections.
const startTimeout = 60 * time.Second

// Server is a running throwaway PostgreSQL server. Its superuser is postgres, with trust authentication on
// 127.0.0.1 and on a unix socket in its directory.
type Server struct {
	dir     string // removed by Stop
	port    int
	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error // set before exited is closed
	dbSeq   atomic.Int64
}

// Main starts a server, hands it to set, runs the package's tests and stops the server; it returns the exit code
// for os.Exit. When the server cannot start the tests do not run and the code is 1: a missing PostgreSQL fails
// the tests, it never skips them.
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m, func(s *pgtest.Server) { server = s })) }
func Main(m *testing.M, set func(*Server)) int {
	s, err := Start(context.Background())
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: starting a throwaway PostgreSQL for the tests: %v\n", err)
		return 1
	}
	set(s)
	code := m.Run()
	if err := s.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: stopping the throwaway PostgreSQL: %v\n", err)
		code = max(code, 1)
	}
	return code
}

// Lazy is a server started by the first test that asks for it, for a package most of whose tests need none.
//
//	var pg pgtest.Lazy
//	func TestMain(m *testing.M) { os.Exit(pg.Main(m)) }
type Lazy struct {
	once   sync.Once
	server *Server
	err    error
}

// Server returns the package's server, started on the first call; one that cannot start fails tb.
func (l *Lazy) Server(tb testing.TB) *Server {
	tb.Helper()
	l.once.Do(func() { l.server, l.err = Start(context.Background()) })
	if l.err != nil {
		tb.Fatalf("starting a throwaway PostgreSQL: %v", l.err)
	}
	return l.server
}

// Main runs the package's tests and stops the server if one was started; it returns the exit code for os.Exit.
func (l *Lazy) Main(m *testing.M) int {
	code := m.Run()
	if l.server != nil {
		if err := l.server.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "FAIL: stopping the throwaway PostgreSQL: %v\n", err)
			code = max(code, 1)
		}
	}
	return code
}

// Start initialises a cluster in a new temporary directory and starts the server on a free port of 127.0.0.1.
func Start(ctx context.Context) (*Server, error) {
	bin, err := findBinDir(installedBinDirs)
	if err != nil {
		return nil, err
	}
	cred, err := serverCredential()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(tempBase(cred != nil), "parley-pgtest-")
	if err != nil {
		return nil, fmt.Errorf("creating the server directory: %w", err)
	}
	s, err := start(ctx, bin, dir, cred)
	if err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	return s, nil
}

func start(ctx context.Context, bin, dir string, cred *syscall.Credential) (*Server, error) {
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return nil, fmt.Errorf("handing %s to the server's user: %w", dir, err)
		}
	}
	data := filepath.Join(dir, "data")
	initdbArgs := []string{"--pgdata=" + data, "--username=postgres", "--auth=trust", "--encoding=UTF8",
		"--locale=C.UTF-8", "--no-sync"}
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), initdbArgs...) //nolint:gosec // the installed server's binary
	initdb.Dir = dir
	initdb.Env = serverEnv(dir)
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%s: %w\n%s", initdb, err, out)
	}
	// The port is free when chosen but could be taken before the server binds it: try again with another.
	var errs []error
	for range 3 {
		s, err := startServer(ctx, bin, dir, cred)
		if err == nil {
			return s, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// startServer runs postgres on a free port and waits until it accepts connections.
func startServer(ctx context.Context, bin, dir string, cred *syscall.Credential) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "postgres.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("creating the server log: %w", err)
	}
	defer logFile.Close()
	// Durability is not wanted from a throwaway server: without fsync, creating databases is fast.
	args := []string{"-D", filepath.Join(dir, "data"), "-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=" + dir,
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=300", "-c", "shared_buffers=32MB", "-c", "logging_collector=off"}
	cmd := exec.Command(filepath.Join(bin, "postgres"), args...) //nolint:gosec // the installed server's binary
	cmd.Dir = dir
	cmd.Env = serverEnv(dir)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Pdeathsig: the server goes when the test binary goes, even when it is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", cmd.Path, err)
	}
	s := &Server{dir: dir, port: port, cmd: cmd, exited: make(chan struct{})}
	go func() {
		s.waitErr = cmd.Wait()
		close(s.exited)
	}()
	if err := s.waitReady(ctx); err != nil {
		_ = s.shutdown()
		log, _ := os.ReadFile(logPath)
		return nil, fmt.Errorf("postgres on port %d: %w\n%s", port, err, tail(string(log), 30))
	}
	return s, nil
}

// waitReady polls the server until it accepts connections, exits or startTimeout passes.
func (s *Server) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	for {
		conn, err := pgx.Connect(ctx, s.URL("postgres"))
		if err == nil {
			return conn.Close(ctx)
		}
		select {
		case <-s.exited:
			return fmt.Errorf("exited before accepting connections: %w", s.waitErr)
		case <-ctx.Done():
			return fmt.Errorf("not accepting connections: %w", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// URL is the connection URL of the database named database, as the superuser postgres over TCP.
func (s *Server) URL(database string) string {
	u := url.URL{Scheme: "postgres", User: url.User("postgres"), Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)),
		Path: "/" + database, RawQuery: "sslmode=disable"}
	return u.String()
}

// Port is the server's TCP port on 127.0.0.1.
func (s *Server) Port() int { return s.port }

// SocketDir is the directory of the server's unix socket.
func (s *Server) SocketDir() string { return s.dir }

// Database creates a new empty database for tb, dropped when tb ends, and returns its connection URL.
func (s *Server) Database(tb testing.TB) string {
	tb.Helper()
	name := fmt.Sprintf("test_%d", s.dbSeq.Add(1))
	if err := s.exec(tb.Context(), "CREATE DATABASE "+name+" TEMPLATE template0"); err != nil {
		tb.Fatalf("creating database %s: %v", name, err)
	}
	tb.Cleanup(func() {
		// tb's context is done once cleanups run.
		if err := s.exec(context.Background(), "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			tb.Errorf("dropping database %s: %v", name, err)
		}
	})
	return s.URL(name)
}

// exec runs one statement in the postgres database.
func (s *Server) exec(ctx context.Context, sql string) error {
	conn, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		return err
	}
	_, err = conn.Exec(ctx, sql)
	return errors.Join(err, conn.Close(ctx))
}

// Stop shuts the server down (fast shutdown: clients are disconnected) and removes its directory.
func (s *Server) Stop() error {
	err := s.shutdown()
	return errors.Join(err, os.RemoveAll(s.dir))
}

func (s *Server) shutdown() error {
	select {
	case <-s.exited:
		return nil
	default:
	}
	if err := s.cmd.Process.Signal(syscall.SIGINT); err != nil {
		return fmt.Errorf("stopping postgres: %w", err)
	}
	select {
	case <-s.exited:
		return nil
	case <-time.After(20 * time.Second):
	}
	// Kill the whole process group: the postmaster and its children.
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	<-s.exited
	return errors.New("postgres did not stop within 20s; killed")
}

// installedBinDirs is where Debian's postgresql packages put the server binaries, one directory per version.
const installedBinDirs = "/usr/lib/postgresql/*/bin"

// findBinDir returns the directory holding initdb and postgres: $PARLEY_PG_BINDIR, the directory of PATH's
// initdb when postgres is beside it, or the newest directory matching installed.
func findBinDir(installed string) (string, error) {
	var candidates []string
	if d := os.Getenv(BinDirEnv); d != "" {
		candidates = append(candidates, d)
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		if resolved, err := filepath.EvalSymlinks(p); err == nil {
			candidates = append(candidates, filepath.Dir(resolved))
		}
		candidates = append(candidates, filepath.Dir(p))
	}
	dirs, _ := filepath.Glob(installed)
	slices.SortFunc(dirs, func(a, b string) int { return versionOf(b) - versionOf(a) }) // newest first
	candidates = append(candidates, dirs...)
	for _, d := range candidates {
		if isExecutable(filepath.Join(d, "initdb")) && isExecutable(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	return "", fmt.Errorf("the PostgreSQL server binaries (initdb and postgres) are not installed: looked in $%s, "+
		"PATH and %s; install Debian's postgresql package (apt-get install postgresql)", BinDirEnv, installed)
}

// versionOf is the major version of a /usr/lib/postgresql/<version>/bin directory, 0 if it has none.
func versionOf(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path) //nolint:gosec // a file of the installed server, only looked at
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// serverCredential is the user to run the server as: nil (the current user) unless that is root.
func serverCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err1 != nil || err2 != nil {
			continue
		}
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil
	}
	return nil, errors.New("running as root, and neither a postgres nor a nobody user exists to run PostgreSQL as")
}

// tempBase is where the server's directory goes. Another user runs the server when the tests run as root, so
// every directory above it must let others through; the system's temporary directory does when $TMPDIR does not.
func tempBase(otherUser bool) string {
	base := os.TempDir()
	if !otherUser {
		return base
	}
	for d := base; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil || fi.Mode().Perm()&0o001 == 0 {
			return "/tmp"
		}
		if d == filepath.Dir(d) {
			return base
		}
	}
}

// serverEnv is the environment of initdb and postgres: the current one without PG* variables (they would point
// the tools elsewhere), with a neutral locale and HOME in the server's directory.
func serverEnv(dir string) []string {
	env := []string{"HOME=" + dir, "LC_ALL=C.UTF-8", "LANG=C.UTF-8", "TZ=UTC"}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "PG"), strings.HasPrefix(name, "LC_"),
			name == "LANG", name == "HOME", name == "TZ":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// freePort returns a TCP port of 127.0.0.1 that is free now.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	return port, ln.Close()
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
