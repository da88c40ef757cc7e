package gitsource

import (
	"errors"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/parley-dev/parley/runtime/crawl"
	"github.com/parley-dev/parley/runtime/gitsource/gittest"
)

func TestReadFetchesTheDocumentsOfARef(t *testing.T) {
	repo := gittest.New(t)
	repo.Commit(t, map[string]string{
		"README.md":             "# Guide\n\nStart here.\n",
		"docs/returns.md":       "# Returns\n\n## Within 30 days\n\nSend it back unused.\n",
		"docs/intro.mdx":        "# Intro\n\nWelcome.\n",
		"docs/notes.txt":        "Plain notes.\n",
		"docs/logo.png":         "\x89PNG",
		"internal/secret.md":    "# Secret\n\nDo not read.\n",
		"docs/deep/shipping.md": "# Shipping\n\nTwo days.\n",
	})
	r := New(Config{AllowPrivate: true})
	var pages []crawl.Page
	res, err := r.Read(t.Context(), repo.URL, "", crawl.Scope{Exclude: []string{"/internal"}}, crawl.Limits{}, nil,
		func(p crawl.Page) error { pages = append(pages, p); return nil })
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]crawl.Page{}
	for _, p := range pages {
		got[strings.TrimPrefix(p.URL, repo.URL+"/")] = p
	}
	want := []string{"README.md", "docs/deep/shipping.md", "docs/intro.mdx", "docs/notes.txt", "docs/returns.md"}
	if len(got) != len(want) || res.Found != len(want) || res.Read != len(want) || !res.Complete() {
		t.Fatalf("read %v (%+v); want %v", keys(got), res, want)
	}
	for _, w := range want {
		p, ok := got[w]
		if !ok || len(p.Body) == 0 || p.ETag == "" || p.NotModified {
			t.Errorf("%s: %+v", w, p)
		}
	}
	if got["docs/intro.mdx"].ContentType != "text/markdown" || got["docs/notes.txt"].ContentType != "text/plain" {
		t.Errorf("media types: %q %q", got["docs/intro.mdx"].ContentType, got["docs/notes.txt"].ContentType)
	}

	// What the sync knows comes back unchanged; a changed and a deleted file are told apart.
	known := map[string]crawl.Known{}
	for _, p := range pages {
		known[p.URL] = crawl.Known{ETag: p.ETag}
	}
	repo.Commit(t, map[string]string{"docs/returns.md": "# Returns\n\nWithin 60 days.\n", "docs/notes.txt": ""})
	pages = nil
	res, err = r.Read(t.Context(), repo.URL, "", crawl.Scope{Exclude: []string{"/internal"}}, crawl.Limits{}, known,
		func(p crawl.Page) error { pages = append(pages, p); return nil })
	if err != nil {
		t.Fatal(err)
	}
	changed := 0
	for _, p := range pages {
		if !p.NotModified {
			changed++
			if !strings.HasSuffix(p.URL, "/docs/returns.md") || !strings.Contains(string(p.Body), "60 days") {
				t.Errorf("read again: %s %q", p.URL, p.Body)
			}
		}
	}
	if changed != 1 || res.Reached[repo.URL+"/docs/notes.txt"] || len(res.Reached) != 4 {
		t.Errorf("%d files read again, reached %v", changed, res.Reached)
	}
}

func TestReadRefsAndBounds(t *testing.T) {
	repo := gittest.New(t)
	repo.Commit(t, map[string]string{"a.md": "# A\n\nFirst.\n", "b.md": "# B\n\nSecond, a longer file than the first.\n"})
	repo.Tag(t, "v1")
	repo.Commit(t, map[string]string{"c.md": "# C\n\nThird.\n"})
	r := New(Config{AllowPrivate: true})
	count := func(ref string, limits crawl.Limits) (crawl.Result, []crawl.Page, error) {
		var pages []crawl.Page
		res, err := r.Read(t.Context(), repo.URL, ref, crawl.Scope{}, limits, nil,
			func(p crawl.Page) error { pages = append(pages, p); return nil })
		return res, pages, err
	}
	if res, _, err := count("v1", crawl.Limits{}); err != nil || res.Read != 2 {
		t.Errorf("the tag v1: %+v %v; want its two files", res, err)
	}
	if res, _, err := count("main", crawl.Limits{}); err != nil || res.Read != 3 {
		t.Errorf("the branch main: %+v %v; want three files", res, err)
	}
	if _, _, err := count("nope", crawl.Limits{}); err == nil || !strings.Contains(err.Error(), `no branch or tag "nope"`) {
		t.Errorf("an unknown ref: %v", err)
	}
	if res, _, err := count("", crawl.Limits{MaxPages: 2}); err != nil || res.Complete() || res.Fetched != 2 {
		t.Errorf("two files at most: %+v %v; want a stopped read", res, err)
	}
	if _, pages, err := count("", crawl.Limits{MaxPageBytes: 20}); err != nil || pages[1].Skipped == "" || pages[0].Skipped != "" {
		t.Errorf("a file over its bound: %+v %v; want it skipped", pages, err)
	}
	if _, _, err := count("", crawl.Limits{MaxBytes: 100}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a pack over the bytes bound: %v; want ErrTooLarge", err)
	}
}

func TestReadRefusesTargets(t *testing.T) {
	repo := gittest.New(t)
	repo.Commit(t, map[string]string{"a.md": "# A\n\nFirst.\n"})
	dir, err := os.MkdirTemp(t.TempDir(), "local")
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		reader *Reader
		url    string
		want   string
	}{
		"loopback":   {New(Config{}), strings.Replace(repo.URL, "http:", "https:", 1), "loopback"},
		"plain http": {New(Config{}), repo.URL, "HTTPS"},
		"local path": {New(Config{AllowPrivate: true}), dir, "not an https URL"},
		"file URL":   {New(Config{AllowPrivate: true}), "file://" + dir, "not an https URL"},
		"ssh":        {New(Config{AllowPrivate: true}), "ssh://git@example.com/repo.git", "not an https URL"},
		"not found":  {New(Config{AllowPrivate: true}), repo.URL + "-missing", "no public repository"},
	} {
		_, err := c.reader.Read(t.Context(), c.url, "", crawl.Scope{}, crawl.Limits{}, nil, func(crawl.Page) error { return nil })
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an error saying %q", name, err, c.want)
		}
	}
}

func TestBlobURL(t *testing.T) {
	for _, c := range []struct {
		repo string
		ref  plumbing.ReferenceName
		file string
		want string
	}{
		{"https://github.com/shop/docs.git", "refs/heads/main", "help/returns.md", "https://github.com/shop/docs/blob/main/help/returns.md"},
		{"https://github.com/shop/docs/", "refs/tags/v1.2", "a b.md", "https://github.com/shop/docs/blob/v1.2/a%20b.md"},
		{"https://gitlab.com/group/sub/docs", "refs/heads/release/2", "x.md", "https://gitlab.com/group/sub/docs/-/blob/release/2/x.md"},
		{"https://gitlab.example.com/docs.git", "refs/heads/main", "x.md", "https://gitlab.example.com/docs/-/blob/main/x.md"},
		{"https://codeberg.org/shop/docs", "refs/heads/main", "x.md", "https://codeberg.org/shop/docs/src/branch/main/x.md"},
		{"https://gitea.example.com/shop/docs", "refs/tags/v1", "x.md", "https://gitea.example.com/shop/docs/src/tag/v1/x.md"},
		{"https://git.example.com/docs.git", "refs/heads/main", "x.md", "https://git.example.com/docs.git/x.md"},
		{"https://github.com/shop/docs", plumbing.HEAD, "x.md", "https://github.com/shop/docs/x.md"},
		{"https://github.com/shop/docs.git", plumbing.HEAD, "x.md", "https://github.com/shop/docs.git/x.md"},
	} {
		u, err := url.Parse(c.repo)
		if err != nil {
			t.Fatal(err)
		}
		if got := BlobURL(u, c.ref, c.file); got != c.want {
			t.Errorf("BlobURL(%s, %s, %s) = %s; want %s", c.repo, c.ref, c.file, got, c.want)
		}
	}
}

func keys(m map[string]crawl.Page) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
