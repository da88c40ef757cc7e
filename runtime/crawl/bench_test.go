package crawl

import (
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/parley-dev/parley/internal/testutil/helpsite"
)

// BenchmarkCrawl1000 crawls a local site of 1,000 pages of about 4 KB, each linking to the next ten, found from
// its start page alone: the crawler's own cost (requests, link extraction, queueing) per crawl. ETags are left
// out, so every page is read in full.
func BenchmarkCrawl1000(b *testing.B) {
	const pages = 1000
	filler := strings.Repeat("<p>Our ceramic mugs are dishwasher safe and handmade in small batches.</p>", 50)
	srv := httptest.NewServer(helpsite.Site(pages, func(w io.Writer, n int, links string) {
		fmt.Fprintf(w, "<html><body><nav>%s</nav><main><h1>Page %d</h1>%s</main></body></html>", links, n, filler)
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
