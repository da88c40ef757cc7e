//go:build integration

// Package runtimeproc runs `parley runtime` as a separate process for tests that need what only a process
// gives: being killed with SIGKILL, restarted, or run twice side by side as replicas.
package runtimeproc

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-dev/parley/internal/contract"
)

// Build compiles the parley binary into a temporary directory of t and returns its path.
func Build(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "..")
	bin := filepath.Join(t.TempDir(), "parley")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/parley") //nolint:gosec // a path of the test's own temporary directory
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building parley: %v\n%s", err, out)
	}
	return bin
}

// Process is a running `parley runtime`.
type Process struct {
	// URL is the runtime's base URL, http://127.0.0.1:port.
	URL string
	// MetricsURL is the base URL of its metrics listener.
	MetricsURL string
	cmd        *exec.Cmd
	logs       *logs
}

// Start runs `parley runtime --listen=<free port> --metrics-listen=<another> args...` with env added to the test's
// environment, waits until /readyz answers 200, and kills the process when t ends.
func Start(t testing.TB, bin string, env []string, args ...string) *Process {
	t.Helper()
	return StartOn(t, FreeAddress(t), bin, env, args...)
}

// StartOn is Start listening on addr, for a runtime that must know its address beforehand (its public URL).
func StartOn(t testing.TB, addr, bin string, env []string, args ...string) *Process {
	t.Helper()
	metricsAddr := FreeAddress(t)
	p := Run(t, "http://"+addr, bin, env, append([]string{contract.RuntimeCommand, contract.Arg(contract.FlagListen, addr),
		contract.Arg(contract.FlagMetricsListen, metricsAddr)}, args...)...)
	p.MetricsURL = "http://" + metricsAddr
	return p
}

// Run runs bin with exactly args, env added to the test's environment, for a runtime whose arguments name its
// addresses (url is where it serves), waits until /readyz answers 200, and kills the process when t ends, showing
// its logs if t failed.
func Run(t testing.TB, url, bin string, env []string, args ...string) *Process {
	t.Helper()
	p := &Process{URL: url, logs: &logs{}}
	p.cmd = exec.Command(bin, args...) //nolint:gosec // the binary Build made, with the test's arguments
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stderr = p.logs
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			t.Logf("runtime logs:\n%s", p.Logs())
		}
	})
	deadline := time.Now().Add(2 * time.Minute) // 10,000 tenant bundles load within it on a busy machine
	for {
		resp, err := http.Get(p.URL + "/readyz")
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the runtime did not become ready: %v\n%s", err, p.Logs())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// FreeAddress is a loopback address with a port free a moment ago.
func FreeAddress(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().String()
}

// Kill kills the process with SIGKILL, as a node failure or the OOM killer would, and waits for it to exit.
func (p *Process) Kill() {
	if p.cmd.ProcessState == nil {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
	}
}

// Pid is the process's ID.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// PeakRSS returns the most resident memory the process has used so far, in bytes: VmHWM of /proc/<pid>/status,
// what the kernel's memory accounting (and a container's limit) sees.
func (p *Process) PeakRSS(t testing.TB) int64 {
	t.Helper()
	return PeakRSS(t, p.cmd.Process.Pid)
}

// PeakRSS returns the peak resident memory of process pid in bytes, from VmHWM of /proc/<pid>/status.
func PeakRSS(t testing.TB, pid int) int64 {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("reading the peak memory of process %d: %v", pid, err)
	}
	for line := range strings.Lines(string(status)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM of process %d: %v", pid, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("process %d reports no VmHWM", pid)
	return 0
}

// Logs returns what the process wrote to its standard error.
func (p *Process) Logs() string { return p.logs.String() }

type logs struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logs) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(b)
}

func (l *logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
