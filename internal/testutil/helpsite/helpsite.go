// Package helpsite serves synthetic websites for crawl tests and benchmarks: pages found by following links from
// the start page, by default a help centre whose pages have navigation, a footer and two sections of help text, as
// a shop's help pages have.
package helpsite

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// SectionsPerPage is how many sections, so knowledge items, each page holds.
const SectionsPerPage = 2

// Handler serves pages 0 to pages-1 of guides, two sections each.
func Handler(pages int) http.Handler {
	return Site(pages, func(w io.Writer, n int, links string) {
		fmt.Fprintf(w, `<html><head><title>Guide %d</title></head><body><header><nav>%s</nav></header><main><article><h1>Care guide %d</h1>
<h2 id="clean">Cleaning</h2><p>Wash piece %d by hand in warm water with a mild soap; it is also dishwasher safe on the gentle programme. Dry it upside down so no water stays in the glaze.</p>
<h2 id="heat">Heat</h2><p>Piece %d may be heated in a microwave oven for up to three minutes and in an oven up to 220 degrees; avoid sudden changes of temperature, which may crack the glaze.</p>
</article></main><footer>Copyright Example Shop. Imprint. Privacy.</footer></body></html>`, n, links, n, n, n)
	})
}

// Site serves pages 0 to pages-1, "/" being page 0 and "/p/N" page N, each written by page with the links to the
// next ten pages; any other path is not found.
func Site(pages int, page func(w io.Writer, n int, links string)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
			fmt.Fprintf(&links, `<a href="/p/%d">Guide %d</a> `, i, i)
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		page(w, n, links.String())
	})
}

// Pages serves the pages whose main content bodies holds by path, each in a page of title with a navigation and
// a footer, as a shop's are; any other path is not found.
func Pages(title string, bodies map[string]string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := bodies[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = fmt.Fprintf(w, "<html><head><title>%s</title></head><body><nav>Menu</nav><main>%s</main><footer>Imprint</footer></body></html>",
			title, body)
	})
}
