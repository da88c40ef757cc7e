package crawl

import (
	"bytes"
	"encoding/xml"
	"io"
	"net/url"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// htmlMeta is what the crawler reads of an HTML page: the links it holds, resolved against the page's URL (or its
// <base>), and what its robots meta tag forbids.
type htmlMeta struct {
	links             []*url.URL
	noindex, nofollow bool
}

// readHTML tokenises the page for its links and robots meta tag; the text itself is for the ingester.
func readHTML(page *url.URL, body []byte) htmlMeta {
	var m htmlMeta
	base := page
	z := html.NewTokenizer(bytes.NewReader(body))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return m
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			if !hasAttr {
				continue
			}
			attrs := map[string]string{}
			for more := true; more; {
				var k, v []byte
				k, v, more = z.TagAttr()
				attrs[string(k)] = string(v)
			}
			switch atom.Lookup(name) {
			case atom.Base:
				if u, err := page.Parse(attrs["href"]); err == nil {
					base = u
				}
			case atom.Meta:
				if name := strings.ToLower(attrs["name"]); name == "robots" || name == "parley" {
					content := strings.ToLower(attrs["content"])
					m.noindex = m.noindex || strings.Contains(content, "noindex") || strings.Contains(content, "none")
					m.nofollow = m.nofollow || strings.Contains(content, "nofollow") || strings.Contains(content, "none")
				}
			case atom.A, atom.Area:
				href, ok := attrs["href"]
				if !ok || strings.Contains(" "+strings.ToLower(attrs["rel"])+" ", " nofollow ") {
					continue
				}
				if u, err := base.Parse(strings.TrimSpace(href)); err == nil {
					m.links = append(m.links, u)
				}
			}
		}
	}
}

// sitemap is a sitemap or a sitemap index (sitemaps.org): the addresses of its pages or of its sitemaps.
type sitemap struct {
	XMLName  xml.Name
	URLs     []string `xml:"url>loc"`
	Sitemaps []string `xml:"sitemap>loc"`
}

// readSitemap reads a sitemap or a sitemap index; ok is false for a document that is neither.
func readSitemap(r io.Reader) (sitemap, bool) {
	var s sitemap
	if err := xml.NewDecoder(r).Decode(&s); err != nil {
		return sitemap{}, false
	}
	switch s.XMLName.Local {
	case "urlset", "sitemapindex":
		return s, true
	}
	return sitemap{}, false
}
