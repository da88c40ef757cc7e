// Package gittest serves a real Git repository over smart HTTP for tests: the repository is made with the git
// command and served by git's own http-backend through net/http/cgi, as a forge serves it.
package gittest

import (
	"net/http"
	"net/http/cgi" //nolint:gosec // httpoxy was fixed in Go 1.6.3; this serves a test's repository on loopback
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// Repo is a repository on the default branch main, served at URL until the test ends.
type Repo struct {
	// URL is the repository's address: http://127.0.0.1:port/docs.git.
	URL string
	dir string
	// Fetches counts the upload-pack requests served (one a fetch).
	Fetches atomic.Int64
}

// New makes an empty repository and serves it.
func New(t testing.TB) *Repo {
	t.Helper()
	root := t.TempDir()
	r := &Repo{dir: filepath.Join(root, "docs.git")}
	r.git(t, root, "init", "--quiet", "--initial-branch=main", r.dir)
	r.git(t, r.dir, "config", "user.name", "Test")
	r.git(t, r.dir, "config", "user.email", "test@example.com")
	backend, err := exec.LookPath("git")
	if err != nil {
		t.Fatal("the git command is needed to serve a repository: ", err)
	}
	h := &cgi.Handler{Path: backend, Args: []string{"http-backend"}, Dir: root,
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}, Stderr: testLog{t}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if strings.HasSuffix(req.URL.Path, "/git-upload-pack") {
			r.Fetches.Add(1)
		}
		// A non-bare repository is served from its .git directory.
		req.URL.Path = strings.Replace(req.URL.Path, "/docs.git/", "/docs.git/.git/", 1)
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL + "/docs.git"
	return r
}

// Commit writes files (path → content; an empty content deletes the file) and commits them on main.
func (r *Repo) Commit(t testing.TB, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(r.dir, filepath.FromSlash(name))
		if content == "" {
			r.git(t, r.dir, "rm", "--quiet", name)
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		r.git(t, r.dir, "add", name)
	}
	r.git(t, r.dir, "commit", "--quiet", "--allow-empty", "-m", "change")
}

// Tag tags main's tip.
func (r *Repo) Tag(t testing.TB, name string) {
	t.Helper()
	r.git(t, r.dir, "tag", "-a", "-m", name, name)
}

// testLog writes what git http-backend says (a repository not found) to the test's log.
type testLog struct{ t testing.TB }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Logf("git http-backend: %s", p)
	return len(p), nil
}

func (r *Repo) git(t testing.TB, dir string, args ...string) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "git", args...) //nolint:gosec // the test's own git commands
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
