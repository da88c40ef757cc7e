//go:build integration

// Package redistest starts a throwaway redis-server for tests: its own process on a free loopback port, in a
// temporary directory, with persistence off, killed when the test ends. It never uses a Redis already running on
// the machine (such as the system one on port 6379).
package redistest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Binary is where redis-server is looked for when it is not on the PATH (Debian's redis-server package).
const Binary = "/usr/bin/redis-server"

// Options configure a Server.
type Options struct {
	// Password, when set, is required from clients (requirepass).
	Password string
}

// Server is a running redis-server.
type Server struct {
	// Addr is host:port of the server.
	Addr string

	opts   Options
	bin    string
	dir    string
	mu     sync.Mutex
	cmd    *exec.Cmd
	output *lockedWriter
	exited chan struct{}
}

// Start starts a redis-server for the test and stops it when the test ends. The test fails, never skips, when
// redis-server is not installed.
func Start(t testing.TB, opts ...Options) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if _, serr := os.Stat(Binary); serr != nil {
			t.Fatalf("redis-server is not installed (not on PATH, not at %s): install Debian's redis-server package "+
				"(apt-get install redis-server; .ci/run does it) to run the Redis tests", Binary)
		}
		bin = Binary
	}
	s := &Server{bin: bin, dir: t.TempDir()}
	if len(opts) > 0 {
		s.opts = opts[0]
	}
	var lastErr error
	for range 3 { // another process may take the free port between choosing and binding it
		port, err := freePort()
		if err != nil {
			t.Fatalf("finding a free port for redis-server: %v", err)
		}
		if lastErr = s.start(port); lastErr == nil {
			break
		}
	}
	if lastErr != nil {
		t.Fatalf("starting redis-server: %v", lastErr)
	}
	t.Cleanup(s.Stop)
	return s
}

// Stop kills the server and waits for it to exit; the address stays reserved for Restart. Stopping a stopped
// server does nothing.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.exited
	s.cmd = nil
}

// Restart starts a stopped server again on the same address, empty (nothing is persisted).
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	_, port, _ := net.SplitHostPort(s.Addr)
	p, _ := strconv.Atoi(port)
	var err error
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if err = s.start(p); err == nil {
			return
		}
	}
	t.Fatalf("restarting redis-server on %s: %v", s.Addr, err)
}

func (s *Server) start(port int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return errors.New("already running")
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	args := []string{
		"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", s.dir,
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--logfile", "", "--databases", "1",
	}
	if s.opts.Password != "" {
		args = append(args, "--requirepass", s.opts.Password)
	}
	cmd := exec.Command(s.bin, args...) //nolint:gosec // redis-server and its arguments are this package's own
	out := &lockedWriter{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("running %s: %w", s.bin, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()

	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case <-exited:
			return fmt.Errorf("redis-server exited at start:\n%s", out.String())
		default:
		}
		if err := ping(addr, s.opts.Password); err == nil {
			break
		} else if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-exited
			return fmt.Errorf("redis-server on %s does not answer PING: %w\n%s", addr, err, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.Addr, s.cmd, s.output, s.exited = addr, cmd, out, exited
	return nil
}

// ping speaks just enough RESP to know the server is up, so that this package needs no Redis client.
func ping(addr, password string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	r := bufio.NewReader(c)
	if password != "" {
		if _, err := fmt.Fprintf(c, "*2\r\n$4\r\nAUTH\r\n$%d\r\n%s\r\n", len(password), password); err != nil {
			return err
		}
		line, err := r.ReadString('\n')
		if err != nil {
			return fmt.Errorf("reading the answer to AUTH: %w", err)
		}
		if !strings.HasPrefix(line, "+OK") {
			return fmt.Errorf("AUTH answered %q", strings.TrimSpace(line))
		}
	}
	if _, err := c.Write([]byte("*1\r\n$4\r\nPING\r\n")); err != nil {
		return err
	}
	line, err := r.ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "+PONG") {
		return fmt.Errorf("PING answered %q", strings.TrimSpace(line))
	}
	return nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// lockedWriter collects the server's output, which its exit-watching goroutine and the caller both touch.
type lockedWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
