package crawl

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkCrawl1000 crawls a local site of 1,000 pages of about 4 KB, each linking to the next ten, found from
// its start page alone: the crawler's own cost (requests, link extraction, queueing) per crawl. ETags are left
// out, so every page is read in full.
func BenchmarkCrawl1000(b *testing.B) {
	const pages = 1000
	filler := strings.Repeat("<p>Our ceramic mugs are dishwasher safe and handmade in small batches.</p>", 50)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" || r.URL.Path == "/sitemap.xml" {
			http.NotFound(w, r)
			return
		}
		n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/p/"))
		if r.URL.Path == "/" {
			n, err = 0, nil
		}
		if err != nil || n >= pages {
			http.NotFound(w, r)
			return
		}
		var links strings.Builder
		for i := n + 1; i <= n+10 && i < pages; i++ {
			fmt.Fprintf(&links, `<a href="/p/%d">page %d</a> `, i, i)
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<html><body><nav>%s</nav><main><h1>Page %d</h1>%s</main></body></html>", links.String(), n, filler)
	}))
	defer srv.Close()
	c := New(Config{AllowPrivate: true})
	b.ReportAllocs()
	for b.Loop() {
		read := 0
		res, err := c.Crawl(b.Context(), srv.URL+"/", Scope{}, Limits{MaxPages: pages}, nil, func(p Page) error {
			if p.Skipped == "" {
				read++
			}
			return nil
		})
		if err != nil || read != pages {
			b.Fatalf("read %d pages of %d: %+v, %v", read, pages, res.Stopped, err)
		}
	}
	b.ReportMetric(float64(pages), "pages/op")
}
