// Package gitsource reads a Git repository of Markdown the way a knowledge source needs it: one shallow fetch
// of one branch or tag over smart HTTP, into memory, within the same outbound rules as the crawler (no private
// targets unless allowed) and bounded in bytes, files and time. It hands each document file to the caller as a
// crawl.Page, named by its address on the forge, so that a sync treats a repository as it treats a website: a
// file whose blob did not change is reported unchanged, a file no longer in the tree is not reached.
package gitsource

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/sideband"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/parley-dev/parley/runtime/crawl"
)

// DefaultTimeout bounds one request's wait for the forge's answer.
const DefaultTimeout = 20 * time.Second

// documentTypes are the files of a repository read as knowledge, by extension, with the media type they are
// read as: MDX is Markdown with components, whose prose is its Markdown.
var documentTypes = map[string]string{
	".md": "text/markdown", ".markdown": "text/markdown", ".mdx": "text/markdown", ".txt": "text/plain",
}

// Config wires a Reader.
type Config struct {
	// AllowPrivate lets the reader reach loopback, private and link-local addresses, and plain HTTP (parley dev,
	// tests); otherwise a repository is read over HTTPS from public addresses only.
	AllowPrivate bool
	// Timeout bounds one request's wait for an answer; DefaultTimeout when zero.
	Timeout time.Duration
}

// Reader reads Git repositories. It is safe for concurrent use: each Read is independent.
type Reader struct {
	transport    http.RoundTripper
	allowPrivate bool
}

// New builds a Reader.
func New(cfg Config) *Reader {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	return &Reader{transport: crawl.NewTransport(cfg.Timeout, cfg.AllowPrivate), allowPrivate: cfg.AllowPrivate}
}

// ErrTooLarge means the repository's pack passed the bytes a read may fetch.
var ErrTooLarge = errors.New("the repository is larger than the plan allows")

// Read fetches the tip of ref (a branch or tag; the default branch when empty) of the repository at repoURL and
// calls handle with each document file (Markdown, MDX, plain text) that scope allows, by path, in the tree's
// order: a file whose blob known already holds (its ETag) as unchanged, any other with its body. limits bound the
// files (MaxPages), one file's size (MaxPageBytes), the bytes fetched (MaxBytes) and the time (MaxDuration). It
// fails when the repository cannot be read at all; the Result then reaches nothing, so that nothing is removed.
func (r *Reader) Read(ctx context.Context, repoURL, ref string, scope crawl.Scope, limits crawl.Limits,
	known map[string]crawl.Known, handle func(crawl.Page) error) (crawl.Result, error) {
	res := crawl.Result{Reached: map[string]bool{}}
	repo, err := r.checkURL(repoURL)
	if err != nil {
		return res, err
	}
	limits = withDefaults(limits)
	ctx, cancel := context.WithTimeout(ctx, limits.MaxDuration)
	defer cancel()
	tree, refName, err := r.fetch(ctx, repo, ref, limits.MaxBytes)
	if err != nil {
		return res, err
	}
	err = tree.Files().ForEach(func(f *object.File) error {
		media, ok := documentTypes[strings.ToLower(path.Ext(f.Name))]
		if !ok || !f.Mode.IsFile() || !scope.Allows("/"+f.Name) {
			return nil
		}
		res.Found++
		if res.Fetched >= limits.MaxPages {
			res.Stopped = fmt.Sprintf("stopped at the limit of %d files", limits.MaxPages)
			return nil
		}
		res.Fetched++
		page := crawl.Page{URL: BlobURL(repo, refName, f.Name), ETag: f.Hash.String()}
		switch {
		case known[page.URL].ETag == page.ETag:
			page.NotModified = true
		case f.Size > limits.MaxPageBytes:
			page = crawl.Page{URL: page.URL, Skipped: fmt.Sprintf("larger than %d bytes", limits.MaxPageBytes)}
		default:
			body, err := f.Contents()
			if err != nil {
				return fmt.Errorf("reading %s: %w", f.Name, err)
			}
			page.Body, page.ContentType = []byte(body), media
		}
		res.Reached[page.URL] = true
		if page.Skipped == "" {
			res.Read++
		}
		return handle(page)
	})
	if err != nil {
		return res, err
	}
	if res.Found == 0 {
		return res, fmt.Errorf("no Markdown or text file of %s at %s is in scope", repoURL, refName.Short())
	}
	return res, nil
}

func withDefaults(l crawl.Limits) crawl.Limits {
	if l.MaxPages <= 0 {
		l.MaxPages = crawl.DefaultMaxPages
	}
	if l.MaxPageBytes <= 0 {
		l.MaxPageBytes = crawl.DefaultMaxPageBytes
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = crawl.DefaultMaxBytes
	}
	if l.MaxDuration <= 0 {
		l.MaxDuration = crawl.DefaultMaxDuration
	}
	return l
}

// checkURL accepts a repository's HTTPS address (plain HTTP too where private targets are allowed): never a
// local path, file:// or SSH, which would read the runtime's own disk or keys.
func (r *Reader) checkURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Host == "" || u.User != nil:
		return nil, fmt.Errorf("the repository address %q is not an https URL", raw)
	case u.Scheme == "https", u.Scheme == "http" && r.allowPrivate:
	default:
		return nil, fmt.Errorf("the repository address %q is not an https URL: Git repositories are read over HTTPS", raw)
	}
	u.Fragment, u.RawQuery = "", ""
	return u, nil
}

// fetch reads the tree at the tip of ref with one shallow upload-pack request, the pack held in memory within
// maxBytes.
func (r *Reader) fetch(ctx context.Context, repo *url.URL, ref string, maxBytes int64) (*object.Tree, plumbing.ReferenceName, error) {
	ep, err := transport.NewEndpoint(repo.String())
	if err != nil {
		return nil, "", fmt.Errorf("the repository address %s: %w", repo, err)
	}
	budget := &budget{rt: r.transport}
	budget.left.Store(maxBytes)
	client := githttp.NewClient(&http.Client{Transport: budget})
	sess, err := client.NewUploadPackSession(ep, nil)
	if err != nil {
		return nil, "", fmt.Errorf("reading %s: %w", repo, err)
	}
	defer func() { _ = sess.Close() }()
	adv, err := sess.AdvertisedReferencesContext(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("reading %s: %w", repo, describe(err))
	}
	name, want, err := resolveRef(adv, ref)
	if err != nil {
		return nil, "", err
	}
	req := packp.NewUploadPackRequestFromCapabilities(adv.Capabilities)
	req.Wants = []plumbing.Hash{want}
	req.Depth = packp.DepthCommits(1)
	if err := req.Capabilities.Set(capability.Shallow); err != nil {
		return nil, "", err
	}
	if adv.Capabilities.Supports(capability.NoProgress) {
		_ = req.Capabilities.Set(capability.NoProgress)
	}
	resp, err := sess.UploadPack(ctx, req)
	if err != nil {
		return nil, "", fmt.Errorf("fetching %s of %s: %w", name.Short(), repo, describe(err))
	}
	defer func() { _ = resp.Close() }()
	st := memory.NewStorage()
	if err := packfile.UpdateObjectStorage(st, demux(req.Capabilities, resp)); err != nil {
		return nil, "", fmt.Errorf("fetching %s of %s: %w", name.Short(), repo, describe(err))
	}
	commit, err := object.GetCommit(st, want)
	if err != nil {
		return nil, "", fmt.Errorf("reading the commit %s of %s: %w", want, repo, err)
	}
	tree, err := commit.Tree()
	if err != nil {
		return nil, "", fmt.Errorf("reading the tree of %s of %s: %w", want, repo, err)
	}
	return tree, name, nil
}

// demux strips the side band the pack comes in, where the request asked for one.
func demux(caps *capability.List, r io.Reader) io.Reader {
	switch {
	case caps.Supports(capability.Sideband64k):
		return sideband.NewDemuxer(sideband.Sideband64k, r)
	case caps.Supports(capability.Sideband):
		return sideband.NewDemuxer(sideband.Sideband, r)
	}
	return r
}

// resolveRef finds what to fetch: the branch or tag ref names (refs/heads/ref, then refs/tags/ref, peeled to
// its commit; a full "refs/…" name as it is), or the default branch, which HEAD points at, when ref is empty.
func resolveRef(adv *packp.AdvRefs, ref string) (plumbing.ReferenceName, plumbing.Hash, error) {
	if ref == "" {
		for _, sym := range adv.Capabilities.Get(capability.SymRef) {
			if head, target, ok := strings.Cut(sym, ":"); ok && head == "HEAD" {
				ref = target
			}
		}
		if ref == "" {
			if adv.Head == nil {
				return "", plumbing.ZeroHash, errors.New("the repository has no default branch: name a ref")
			}
			return plumbing.HEAD, *adv.Head, nil
		}
	}
	candidates := []string{ref}
	if !strings.HasPrefix(ref, "refs/") {
		candidates = []string{"refs/heads/" + ref, "refs/tags/" + ref}
	}
	for _, name := range candidates {
		if h, ok := adv.Peeled[name]; ok {
			return plumbing.ReferenceName(name), h, nil
		}
		if h, ok := adv.References[name]; ok {
			return plumbing.ReferenceName(name), h, nil
		}
	}
	return "", plumbing.ZeroHash, fmt.Errorf("the repository has no branch or tag %q", ref)
}

// BlobURL is the address a visitor reads a file of the repository at, at ref: its page on GitHub, GitLab or a
// Gitea or Forgejo forge (Codeberg), or the repository's address and the file's path elsewhere.
func BlobURL(repo *url.URL, ref plumbing.ReferenceName, file string) string {
	base := *repo
	base.Path = strings.TrimSuffix(base.Path, "/")
	base.RawPath, base.Fragment, base.RawQuery = "", "", ""
	var parts []string
	switch host := strings.ToLower(base.Hostname()); {
	case ref == plumbing.HEAD || ref == "":
		return base.JoinPath(file).String() // no branch name to link to
	case host == "github.com" || host == "www.github.com":
		parts = []string{"blob", ref.Short(), file}
	case host == "gitlab.com" || strings.HasPrefix(host, "gitlab."):
		parts = []string{"-", "blob", ref.Short(), file}
	case host == "codeberg.org" || strings.HasPrefix(host, "gitea.") || strings.HasPrefix(host, "forgejo."):
		kind := "branch"
		if ref.IsTag() {
			kind = "tag"
		}
		parts = []string{"src", kind, ref.Short(), file}
	default:
		return base.JoinPath(file).String()
	}
	// A forge's pages are at the repository's address without ".git".
	base.Path = strings.TrimSuffix(base.Path, ".git")
	return base.JoinPath(parts...).String()
}

// budget is a transport whose answers together may hold at most left bytes, so that a repository too large for
// the plan fails its fetch instead of filling the runtime's memory.
type budget struct {
	rt   http.RoundTripper
	left atomic.Int64
}

func (b *budget) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := b.rt.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &budgetBody{ReadCloser: resp.Body, b: b}
	return resp, nil
}

type budgetBody struct {
	io.ReadCloser
	b *budget
}

func (r *budgetBody) Read(p []byte) (int, error) {
	// The error comes before the bytes past the budget: go-git's readers drop an error that comes with bytes.
	left := r.b.left.Load()
	if left <= 0 {
		return 0, ErrTooLarge
	}
	if int64(len(p)) > left {
		p = p[:left]
	}
	n, err := r.ReadCloser.Read(p)
	r.b.left.Add(-int64(n))
	return n, err
}

// describe words a fetch's error for the source's record: the forge's refusals as what they mean to a merchant.
func describe(err error) error {
	switch {
	case errors.Is(err, crawl.ErrForbiddenTarget), errors.Is(err, ErrTooLarge):
		return err
	case errors.Is(err, transport.ErrRepositoryNotFound), errors.Is(err, transport.ErrAuthenticationRequired),
		errors.Is(err, transport.ErrAuthorizationFailed):
		return errors.New("no public repository at that address (Parley reads public repositories only)")
	case errors.Is(err, context.DeadlineExceeded):
		return errors.New("timed out reading the repository")
	}
	return err
}
