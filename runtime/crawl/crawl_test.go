package crawl

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// site is a small website: robots.txt disallowing /private, a sitemap, pages linking to each other, a redirect
// within the site and one off it, an image, a page asking not to be indexed, and validators on every page.
type site struct {
	*httptest.Server
	mu          sync.Mutex
	pages       map[string]string
	requests    map[string]int
	agents      map[string]bool
	notModified int
}

func newSite(t *testing.T) *site {
	t.Helper()
	s := &site{requests: map[string]int{}, agents: map[string]bool{}, pages: map[string]string{
		"/":          `<a href="/a">A</a> <a href="/old">old</a> <a href="/b#part">B</a> <a href="/private/x">P</a> <a href="https://elsewhere.example/">x</a> <a href="/logo.png">logo</a> <a href="/away">away</a>`,
		"/a":         `<p>A</p><a href="/c" rel="nofollow">C</a>`,
		"/b":         `<p>B</p>`,
		"/d":         `<p>D, only in the sitemap</p>`,
		"/hidden":    `<meta name="robots" content="noindex"><a href="/e">E</a>`,
		"/e":         `<p>E</p>`,
		"/private/x": `secret`,
	}}
	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "User-agent: *\nDisallow: /private\n\nSitemap: %s/sitemap.xml\n", s.URL)
	})
	mux.HandleFunc("/sitemap.xml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprintf(w, `<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>%s/pages.xml</loc></sitemap></sitemapindex>`, s.URL)
	})
	mux.HandleFunc("/pages.xml", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>%s/d</loc></url><url><loc>%s/hidden</loc></url></urlset>`, s.URL, s.URL)
	})
	mux.HandleFunc("/old", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/b", http.StatusMovedPermanently) })
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https://elsewhere.example/", http.StatusFound)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		body, ok := s.pages[r.URL.Path]
		s.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		etag := fmt.Sprintf(`"%x"`, len(body)*31+int(body[len(body)-2]))
		w.Header().Set("ETag", etag)
		if r.Header.Get("If-None-Match") == etag {
			s.mu.Lock()
			s.notModified++
			s.mu.Unlock()
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<html><body>"+body+"</body></html>")
	})
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests[r.URL.Path]++
		s.agents[r.UserAgent()] = true
		s.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

type crawled struct {
	read, skipped map[string]string
	notModified   []string
	known         map[string]Known
}

func crawlSite(t *testing.T, c *Crawler, start string, scope Scope, limits Limits, known map[string]Known) (crawled, Result, error) {
	t.Helper()
	got := crawled{read: map[string]string{}, skipped: map[string]string{}, known: map[string]Known{}}
	res, err := c.Crawl(t.Context(), start, scope, limits, known, func(p Page) error {
		switch {
		case p.Skipped != "":
			got.skipped[p.URL] = p.Skipped
		case p.NotModified:
			got.notModified = append(got.notModified, p.URL)
			got.known[p.URL] = Known{ETag: p.ETag, Links: p.Links}
		default:
			got.read[p.URL] = string(p.Body)
			got.known[p.URL] = Known{ETag: p.ETag, LastModified: p.LastModified, Links: p.Links}
		}
		return nil
	})
	return got, res, err
}

func keys(m map[string]string, prefix string) []string {
	var out []string
	for k := range m {
		out = append(out, strings.TrimPrefix(k, prefix))
	}
	slices.Sort(out)
	return out
}

func TestCrawlHonoursTheSite(t *testing.T) {
	s := newSite(t)
	c := New(Config{AllowPrivate: true})
	got, res, err := crawlSite(t, c, s.URL+"/", Scope{}, Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"/", "/a", "/b", "/d", "/e"}; !slices.Equal(keys(got.read, s.URL), want) {
		t.Errorf("read %v, want %v", keys(got.read, s.URL), want)
	}
	for path, reason := range map[string]string{"/private/x": "robots.txt", "/hidden": "not to be indexed",
		"/away": "off the site"} {
		if r := got.skipped[s.URL+path]; !strings.Contains(r, reason) {
			t.Errorf("%s skipped for %q, want %q", path, r, reason)
		}
	}
	if s.requests["/private/x"] != 0 || s.requests["/c"] != 0 || s.requests["/logo.png"] != 0 {
		t.Errorf("requested what it should not: %v", s.requests)
	}
	if s.requests["/b"] != 1 {
		t.Errorf("/b requested %d times through its redirect; want once", s.requests["/b"])
	}
	if !res.Complete() || res.Reached[s.URL+"/old"] != true {
		t.Errorf("result %+v", res)
	}
	for ua := range s.agents {
		if !strings.Contains(ua, "Parley") {
			t.Errorf("User-Agent %q does not name Parley", ua)
		}
	}

	// Again with what the first crawl learned: every page answers 304, and the links of unchanged pages are
	// still followed.
	for k := range s.requests {
		delete(s.requests, k)
	}
	s.mu.Lock()
	s.pages["/a"] = `<p>A, changed</p>`
	delete(s.pages, "/e")
	s.mu.Unlock()
	again, res, err := crawlSite(t, c, s.URL+"/", Scope{}, Limits{}, got.known)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"/a"}; !slices.Equal(keys(again.read, s.URL), want) {
		t.Errorf("re-read %v, want %v", keys(again.read, s.URL), want)
	}
	if len(again.notModified) != 3 || s.notModified != 3 {
		t.Errorf("unchanged pages %v (%d 304s), want /, /b, /d", again.notModified, s.notModified)
	}
	if !slices.Equal(res.Gone, []string{s.URL + "/e"}) {
		t.Errorf("gone %v, want /e", res.Gone)
	}
}

func TestCrawlBounds(t *testing.T) {
	s := newSite(t)
	c := New(Config{AllowPrivate: true})
	got, res, err := crawlSite(t, c, s.URL+"/", Scope{}, Limits{MaxPages: 2}, nil)
	if err != nil || res.Complete() || len(got.read) != 2 || res.Fetched != 2 {
		t.Errorf("two pages: read %v, %+v, %v", keys(got.read, s.URL), res, err)
	}
	got, _, err = crawlSite(t, c, s.URL+"/", Scope{}, Limits{MaxPageBytes: 40}, nil)
	if err == nil || len(got.read) != 0 || !strings.Contains(got.skipped[s.URL+"/"], "larger than 40 bytes") {
		t.Errorf("40 bytes a page: %v, %v", got.skipped, err)
	}
	got, _, err = crawlSite(t, c, s.URL+"/", Scope{Include: []string{"/a", "/d"}, Exclude: []string{"/d"}}, Limits{}, nil)
	if err != nil || !slices.Equal(keys(got.read, s.URL), []string{"/a"}) || !strings.Contains(got.skipped[s.URL+"/"], "patterns") {
		t.Errorf("include /a: read %v, skipped %v, %v", keys(got.read, s.URL), got.skipped, err)
	}
	slow := New(Config{AllowPrivate: true, Delay: 200 * time.Millisecond})
	_, res, err = crawlSite(t, slow, s.URL+"/", Scope{}, Limits{MaxDuration: time.Second}, nil)
	if err != nil || !strings.Contains(res.Stopped, "time limit") {
		t.Errorf("a second at 200ms a request: %+v, %v", res, err)
	}
}

func TestCrawlRefusesPrivateAddresses(t *testing.T) {
	s := newSite(t)
	_, _, err := crawlSite(t, New(Config{}), s.URL+"/", Scope{}, Limits{}, nil)
	if !errors.Is(err, ErrForbiddenTarget) {
		t.Errorf("crawling a loopback site: %v, want ErrForbiddenTarget", err)
	}
	if len(s.requests) != 0 {
		t.Errorf("the site was reached: %v", s.requests)
	}
}

func TestCrawlHandleErrorEndsIt(t *testing.T) {
	s := newSite(t)
	boom := errors.New("boom")
	_, err := New(Config{AllowPrivate: true}).Crawl(context.Background(), s.URL+"/", Scope{}, Limits{}, nil,
		func(Page) error { return boom })
	if !errors.Is(err, boom) {
		t.Errorf("Crawl: %v, want boom", err)
	}
}

func TestScope(t *testing.T) {
	s := Scope{Include: []string{"/help", "/blog/*/faq"}, Exclude: []string{"/help/old/**"}}
	for path, want := range map[string]bool{"/help": true, "/help/returns": true, "/helpdesk": false,
		"/blog/2024/faq": true, "/blog/2024/x/faq": false, "/help/old/a": false, "/": false} {
		if got := s.Allows(path); got != want {
			t.Errorf("Allows(%s) = %v, want %v", path, got, want)
		}
	}
	if err := ValidPattern("help"); err == nil {
		t.Error("a pattern without a leading / is valid")
	}
	if err := ValidPattern("/help/[a"); err == nil {
		t.Error("an unclosed class is valid")
	}
}
